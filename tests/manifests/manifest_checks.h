// What every installation of metrics-scheduler promises a cluster operator,
// checked in its YAML: the kustomization under manifests/ and the Helm
// chart under charts/metrics-scheduler/ are held to these same functions
// (manifests_test, manifests_chart_integration_test), so the two installs
// cannot drift apart on hardening, least privilege or the token's handling.
//
// The Expect* functions record gtest failures and return nothing; call them
// under SCOPED_TRACE naming the install they check.
//
//   std::vector<YAML::Node> docs = YAML::LoadAll(rendered);
//   YAML::Node deployment = Only(docs, "Deployment");
//   ExpectHardened(deployment);
//   EXPECT_EQ(Grants(Named(docs, "ClusterRole", "metrics-scheduler")),
//             SchedulerGrants());
#ifndef METRICS_SCHEDULER_TESTS_MANIFESTS_MANIFEST_CHECKS_H_
#define METRICS_SCHEDULER_TESTS_MANIFESTS_MANIFEST_CHECKS_H_

#include <set>
#include <string>
#include <vector>

#include "yaml-cpp/yaml.h"

namespace ms::manifests {

// The documents of `docs` whose kind is `kind`, in order. Null documents
// (an empty "---" section) are skipped.
std::vector<YAML::Node> OfKind(const std::vector<YAML::Node>& docs,
                               const std::string& kind);

// The one document of kind `kind`; a test failure (and a null node) when
// there is not exactly one.
YAML::Node Only(const std::vector<YAML::Node>& docs, const std::string& kind);

// The one document of kind `kind` named `name` (metadata.name), for kinds
// an install has several of (ClusterRole: the scheduler's and the metrics
// reader's); a test failure (and a null node) when there is not exactly
// one.
YAML::Node Named(const std::vector<YAML::Node>& docs, const std::string& kind,
                 const std::string& name);

// The pod and its container run hardened: non-root (uid and gid 65532),
// seccomp RuntimeDefault, a read-only root filesystem, no privilege
// escalation, not privileged, every capability dropped and none added.
void ExpectHardened(const YAML::Node& deployment);

// One container with the port http on 10260 (the port of
// http.listenAddress), probed on /livez and /readyz there, with the default
// requests and limits (100m and 64Mi; 1 CPU and 256Mi).
void ExpectProbesAndDefaultResources(const YAML::Node& deployment);

// /metrics only on the secure port, as kube-scheduler: the container runs
// with --secure-port=`port` and --bind-address=$(POD_IP) (POD_IP from the
// downward API's status.podIP) and names that port https; the probes stay
// on the plain port http; the Service exposes https-metrics, to https,
// and nothing else.
void ExpectMetricsOnSecurePortOnly(const YAML::Node& deployment,
                                   const YAML::Node& service, int port);

// A ServiceMonitor endpoint that scrapes the secure port as a Prometheus
// ServiceAccount: https on the Service's https-metrics, /metrics, the
// Prometheus pod's own token file, the self-signed certificate unverified.
void ExpectSecureScrape(const YAML::Node& endpoint);

// A ClusterRole granting get on the non-resource URL /metrics and nothing
// else (the scrapers' metrics-reader).
void ExpectMayGetMetricsOnly(const YAML::Node& cluster_role);

// The scheduler is placed by the default scheduler (no schedulerName), as
// system-cluster-critical, reads its configuration from
// /etc/metrics-scheduler/config.yaml (a ConfigMap volume mounted read-only)
// and runs with leader election on.
void ExpectSchedulerPod(const YAML::Node& deployment);

// The Secret `secret_name` is the volume metrics-token, mounted read-only
// at /var/run/secrets/metrics-scheduler, where backend.tokenFile points,
// and nowhere else; no Secret reaches the environment.
void ExpectTokenIsAFile(const YAML::Node& deployment,
                        const std::string& secret_name);

// The PodDisruptionBudget lets one replica go at a time
// (maxUnavailable 1), evicts unready replicas whatever the budget, and
// selects exactly the Deployment's pods.
void ExpectBudgetKeepsOneReplica(const YAML::Node& budget,
                                 const YAML::Node& deployment);

// A ClusterRole's rules as "group/resource:verb" ("" for the core group).
std::set<std::string> Grants(const YAML::Node& cluster_role);

// Exactly the calls the scheduler makes (kube/client.h): every verb it
// needs and no other.
const std::set<std::string>& SchedulerGrants();

// The resourceNames of a Role's rules.
std::set<std::string> ResourceNames(const YAML::Node& role);

// Whether two YAML trees hold the same data: maps compared key by key in
// any order, sequences in order, scalars as text.
bool SameData(const YAML::Node& a, const YAML::Node& b);

}  // namespace ms::manifests

#endif  // METRICS_SCHEDULER_TESTS_MANIFESTS_MANIFEST_CHECKS_H_
