#include "tests/manifests/manifest_checks.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ms::manifests {
namespace {

std::string Text(const YAML::Node& node) {
  return node.IsScalar() ? node.Scalar() : "";
}

const YAML::Node PodSpec(const YAML::Node& deployment) {
  return deployment["spec"]["template"]["spec"];
}

// The scheduler's container; a failure unless there is exactly one.
const YAML::Node Container(const YAML::Node& deployment) {
  const YAML::Node containers = PodSpec(deployment)["containers"];
  EXPECT_EQ(containers.size(), 1u);
  return containers.size() == 1 ? containers[0] : YAML::Node();
}

std::set<std::string> Args(const YAML::Node& container) {
  std::set<std::string> args;
  for (const YAML::Node& a : container["args"]) args.insert(Text(a));
  return args;
}

// The element of the sequence `list` whose `name` is `name`; a null node
// when there is none.
YAML::Node ByName(const YAML::Node& list, const std::string& name) {
  for (const YAML::Node& item : list) {
    if (Text(item["name"]) == name) return item;
  }
  return YAML::Node();
}

}  // namespace

std::vector<YAML::Node> OfKind(const std::vector<YAML::Node>& docs,
                               const std::string& kind) {
  std::vector<YAML::Node> out;
  for (const YAML::Node& doc : docs) {
    if (doc.IsMap() && Text(doc["kind"]) == kind) out.push_back(doc);
  }
  return out;
}

YAML::Node Only(const std::vector<YAML::Node>& docs, const std::string& kind) {
  std::vector<YAML::Node> found = OfKind(docs, kind);
  EXPECT_EQ(found.size(), 1u) << kind;
  return found.size() == 1 ? found[0] : YAML::Node();
}

YAML::Node Named(const std::vector<YAML::Node>& docs, const std::string& kind,
                 const std::string& name) {
  std::vector<YAML::Node> found;
  for (const YAML::Node& doc : OfKind(docs, kind)) {
    if (Text(doc["metadata"]["name"]) == name) found.push_back(doc);
  }
  EXPECT_EQ(found.size(), 1u) << kind << " " << name;
  return found.size() == 1 ? found[0] : YAML::Node();
}

void ExpectHardened(const YAML::Node& deployment) {
  const YAML::Node pod = PodSpec(deployment)["securityContext"];
  ASSERT_TRUE(pod.IsMap());
  EXPECT_EQ(Text(pod["runAsNonRoot"]), "true");
  EXPECT_EQ(Text(pod["runAsUser"]), "65532");
  EXPECT_EQ(Text(pod["runAsGroup"]), "65532");
  EXPECT_EQ(Text(pod["seccompProfile"]["type"]), "RuntimeDefault");
  const YAML::Node sc = Container(deployment)["securityContext"];
  ASSERT_TRUE(sc.IsMap());
  EXPECT_EQ(Text(sc["runAsNonRoot"]), "true");
  EXPECT_EQ(Text(sc["readOnlyRootFilesystem"]), "true");
  EXPECT_EQ(Text(sc["allowPrivilegeEscalation"]), "false");
  EXPECT_EQ(Text(sc["privileged"]), "false");
  ASSERT_EQ(sc["capabilities"]["drop"].size(), 1u);
  EXPECT_EQ(Text(sc["capabilities"]["drop"][0]), "ALL");
  EXPECT_FALSE(sc["capabilities"]["add"]);
  EXPECT_FALSE(PodSpec(deployment)["hostNetwork"]);
  EXPECT_FALSE(PodSpec(deployment)["hostPID"]);
}

void ExpectProbesAndDefaultResources(const YAML::Node& deployment) {
  const YAML::Node c = Container(deployment);
  EXPECT_EQ(Text(c["livenessProbe"]["httpGet"]["path"]), "/livez");
  EXPECT_EQ(Text(c["readinessProbe"]["httpGet"]["path"]), "/readyz");
  EXPECT_EQ(Text(c["livenessProbe"]["httpGet"]["port"]), "http");
  EXPECT_EQ(Text(c["readinessProbe"]["httpGet"]["port"]), "http");
  // Plain HTTP: the kubelet probes without a token.
  EXPECT_FALSE(c["livenessProbe"]["httpGet"]["scheme"]);
  EXPECT_FALSE(c["readinessProbe"]["httpGet"]["scheme"]);
  const YAML::Node http = ByName(c["ports"], "http");
  ASSERT_TRUE(http.IsMap()) << "no port named http";
  EXPECT_EQ(Text(http["containerPort"]), "10260");
  const YAML::Node r = c["resources"];
  EXPECT_EQ(Text(r["requests"]["cpu"]), "100m");
  EXPECT_EQ(Text(r["requests"]["memory"]), "64Mi");
  EXPECT_EQ(Text(r["limits"]["cpu"]), "1");
  EXPECT_EQ(Text(r["limits"]["memory"]), "256Mi");
}

void ExpectMetricsOnSecurePortOnly(const YAML::Node& deployment,
                                   const YAML::Node& service, int port) {
  const YAML::Node c = Container(deployment);
  std::set<std::string> args = Args(c);
  EXPECT_TRUE(args.count(absl::StrCat("--secure-port=", port)));
  EXPECT_TRUE(args.count("--bind-address=$(POD_IP)"));
  const YAML::Node pod_ip = ByName(c["env"], "POD_IP");
  ASSERT_TRUE(pod_ip.IsMap()) << "no POD_IP in the environment";
  EXPECT_EQ(Text(pod_ip["valueFrom"]["fieldRef"]["fieldPath"]), "status.podIP");
  const YAML::Node https = ByName(c["ports"], "https");
  ASSERT_TRUE(https.IsMap()) << "no port named https";
  EXPECT_EQ(Text(https["containerPort"]), absl::StrCat(port));
  EXPECT_EQ(c["ports"].size(), 2u);  // http (the probes) and https
  ASSERT_TRUE(service.IsMap());
  const YAML::Node ports = service["spec"]["ports"];
  ASSERT_EQ(ports.size(), 1u) << ports;
  EXPECT_EQ(Text(ports[0]["name"]), "https-metrics");
  EXPECT_EQ(Text(ports[0]["port"]), absl::StrCat(port));
  EXPECT_EQ(Text(ports[0]["targetPort"]), "https");
}

void ExpectSecureScrape(const YAML::Node& endpoint) {
  ASSERT_TRUE(endpoint.IsMap());
  EXPECT_EQ(Text(endpoint["port"]), "https-metrics");
  EXPECT_EQ(Text(endpoint["scheme"]), "https");
  EXPECT_EQ(Text(endpoint["path"]), "/metrics");
  EXPECT_EQ(Text(endpoint["bearerTokenFile"]),
            "/var/run/secrets/kubernetes.io/serviceaccount/token");
  EXPECT_EQ(Text(endpoint["tlsConfig"]["insecureSkipVerify"]), "true");
}

void ExpectMayGetMetricsOnly(const YAML::Node& cluster_role) {
  ASSERT_TRUE(cluster_role.IsMap());
  ASSERT_EQ(cluster_role["rules"].size(), 1u);
  const YAML::Node rule = cluster_role["rules"][0];
  EXPECT_FALSE(rule["apiGroups"]);
  EXPECT_FALSE(rule["resources"]);
  ASSERT_EQ(rule["nonResourceURLs"].size(), 1u);
  EXPECT_EQ(Text(rule["nonResourceURLs"][0]), "/metrics");
  ASSERT_EQ(rule["verbs"].size(), 1u);
  EXPECT_EQ(Text(rule["verbs"][0]), "get");
}

void ExpectSchedulerPod(const YAML::Node& deployment) {
  const YAML::Node pod = PodSpec(deployment);
  EXPECT_FALSE(pod["schedulerName"]);
  EXPECT_EQ(Text(pod["priorityClassName"]), "system-cluster-critical");
  const YAML::Node c = Container(deployment);
  std::set<std::string> args = Args(c);
  EXPECT_TRUE(args.count("--config=/etc/metrics-scheduler/config.yaml"));
  EXPECT_TRUE(args.count("--leader-elect=true"));
  EXPECT_TRUE(args.count("--identity=$(POD_NAME)"));
  std::string volume;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["configMap"]) volume = Text(v["name"]);
  }
  ASSERT_FALSE(volume.empty()) << "no ConfigMap volume";
  int mounts = 0;
  for (const YAML::Node& m : c["volumeMounts"]) {
    if (Text(m["name"]) != volume) continue;
    ++mounts;
    EXPECT_EQ(Text(m["mountPath"]), "/etc/metrics-scheduler");
    EXPECT_EQ(Text(m["readOnly"]), "true");
  }
  EXPECT_EQ(mounts, 1);
}

void ExpectTokenIsAFile(const YAML::Node& deployment,
                        const std::string& secret_name) {
  // The Secret is the volume metrics-token, and no other...
  const std::string volume = "metrics-token";
  int volumes = 0;
  for (const YAML::Node& v : PodSpec(deployment)["volumes"]) {
    if (Text(v["name"]) == volume) {
      ++volumes;
      EXPECT_EQ(Text(v["secret"]["secretName"]), secret_name);
    } else if (v["secret"]) {
      EXPECT_NE(Text(v["secret"]["secretName"]), secret_name) << v;
    }
  }
  EXPECT_EQ(volumes, 1);
  // ...mounted read-only where the configurations' tokenFile points...
  const YAML::Node c = Container(deployment);
  int mounts = 0;
  for (const YAML::Node& m : c["volumeMounts"]) {
    if (Text(m["name"]) != volume) continue;
    ++mounts;
    EXPECT_EQ(Text(m["mountPath"]), "/var/run/secrets/metrics-scheduler");
    EXPECT_EQ(Text(m["readOnly"]), "true");
  }
  EXPECT_EQ(mounts, 1);
  // ...and no Secret reaches the environment.
  EXPECT_FALSE(c["envFrom"]);
  for (const YAML::Node& e : c["env"]) {
    EXPECT_FALSE(e["valueFrom"]["secretKeyRef"]) << Text(e["name"]);
  }
}

void ExpectBudgetKeepsOneReplica(const YAML::Node& budget,
                                 const YAML::Node& deployment) {
  ASSERT_TRUE(budget.IsMap());
  EXPECT_EQ(Text(budget["apiVersion"]), "policy/v1");
  EXPECT_EQ(Text(budget["metadata"]["namespace"]),
            Text(deployment["metadata"]["namespace"]));
  const YAML::Node spec = budget["spec"];
  EXPECT_EQ(Text(spec["maxUnavailable"]), "1");
  EXPECT_FALSE(spec["minAvailable"]);
  EXPECT_EQ(Text(spec["unhealthyPodEvictionPolicy"]), "AlwaysAllow");
  // 2 replicas, one of which may go: one stays up.
  EXPECT_EQ(Text(deployment["spec"]["replicas"]), "2");
  // The budget selects what the Deployment selects, and its pods carry it.
  EXPECT_TRUE(SameData(spec["selector"], deployment["spec"]["selector"]));
  const YAML::Node labels =
      deployment["spec"]["template"]["metadata"]["labels"];
  for (const auto& kv : spec["selector"]["matchLabels"]) {
    EXPECT_EQ(Text(labels[kv.first.Scalar()]), kv.second.Scalar())
        << kv.first.Scalar();
  }
}

std::set<std::string> Grants(const YAML::Node& cluster_role) {
  std::set<std::string> grants;
  for (const YAML::Node& rule : cluster_role["rules"]) {
    EXPECT_FALSE(rule["resourceNames"]);
    for (const YAML::Node& group : rule["apiGroups"]) {
      for (const YAML::Node& resource : rule["resources"]) {
        for (const YAML::Node& verb : rule["verbs"]) {
          grants.insert(absl::StrCat(Text(group), "/", Text(resource), ":",
                                     Text(verb)));
        }
      }
    }
  }
  return grants;
}

const std::set<std::string>& SchedulerGrants() {
  static const auto* grants = new std::set<std::string>{
      "/pods:get",
      "/pods:list",
      "/pods:watch",
      "/pods:delete",
      "policy/poddisruptionbudgets:list",
      "policy/poddisruptionbudgets:watch",
      "/pods/binding:create",
      "/pods/status:patch",
      "/nodes:list",
      "/nodes:watch",
      "/namespaces:list",
      "/namespaces:watch",
      "/services:list",
      "/services:watch",
      "/replicationcontrollers:list",
      "/replicationcontrollers:watch",
      "apps/replicasets:list",
      "apps/replicasets:watch",
      "apps/statefulsets:list",
      "apps/statefulsets:watch",
      "/persistentvolumeclaims:list",
      "/persistentvolumeclaims:watch",
      "/persistentvolumeclaims:patch",
      "/persistentvolumes:list",
      "/persistentvolumes:watch",
      "/persistentvolumes:patch",
      "storage.k8s.io/storageclasses:list",
      "storage.k8s.io/storageclasses:watch",
      "storage.k8s.io/csinodes:list",
      "storage.k8s.io/csinodes:watch",
      "storage.k8s.io/csidrivers:list",
      "storage.k8s.io/csidrivers:watch",
      "storage.k8s.io/csistoragecapacities:list",
      "storage.k8s.io/csistoragecapacities:watch",
      "resource.k8s.io/deviceclasses:list",
      "resource.k8s.io/deviceclasses:watch",
      "metrics.k8s.io/nodes:list",
      "/events:create",
      "authentication.k8s.io/tokenreviews:create",
      "authorization.k8s.io/subjectaccessreviews:create"};
  return *grants;
}

std::set<std::string> ResourceNames(const YAML::Node& role) {
  std::set<std::string> names;
  for (const YAML::Node& rule : role["rules"]) {
    for (const YAML::Node& n : rule["resourceNames"]) names.insert(Text(n));
  }
  return names;
}

bool SameData(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameData(a[i], b[i])) return false;
      }
      return true;
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        YAML::Node other = b[kv.first.Scalar()];
        if (!other || !SameData(kv.second, other)) return false;
      }
      return true;
    }
    default:  // Null, Undefined
      return true;
  }
}

}  // namespace ms::manifests
