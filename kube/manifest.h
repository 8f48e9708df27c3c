// Pods from manifest files: the YAML (or JSON) a user would `kubectl apply`.
//
// `metrics-scheduler explain -f FILE` asks where a pod that does not exist
// yet would go. DecodePodManifest reads the file's text, finds the pod in
// it and decodes it with the same decoder as the apiserver's answers
// (kube/decode.h), so a manifest and the object it creates decode alike.
//
//   absl::StatusOr<Pod> pod = DecodePodManifest(text);
//
// Which pod: the first document that is a Pod, or the pod template of the
// first workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job:
// spec.template; CronJob: spec.jobTemplate.spec.template). A template's pod
// is named after its workload and takes the workload's namespace. A missing
// namespace is "default", as kubectl would create it.
//
// YAML scalars become JSON as the apiserver reads them: quoted scalars are
// strings; plain ones are null, booleans or numbers when they read as such,
// strings otherwise; quantities under requests, limits and overhead are
// always strings (`cpu: 1` is the quantity "1").
//
// Failure contract: InvalidArgument for text that is not YAML (the message
// has the line and column), for a file with no pod in it, and for whatever
// DecodePod rejects. Pure functions; thread-safe.
#ifndef METRICS_SCHEDULER_KUBE_MANIFEST_H_
#define METRICS_SCHEDULER_KUBE_MANIFEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/pod.h"

namespace ms::kube {

absl::StatusOr<Pod> DecodePodManifest(absl::string_view text);

// One YAML document as JSON text, with the scalar rules above. Exposed for
// tests.
absl::StatusOr<std::string> YamlToJson(absl::string_view yaml);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_MANIFEST_H_
