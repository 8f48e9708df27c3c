// The Helm chart (charts/metrics-scheduler/), rendered by Helm's own library
// (`testenv helm template`, as `helm template` renders it) with several
// combinations of values, the secure port on (the default) and off. Each
// rendering is held to manifest_checks.h, as the kustomization is, and
// passes `kubectl apply --dry-run=server` on the local control plane. The ServiceMonitor and PrometheusRule are dry-run
// against stand-in CRDs (testdata/monitoring-crds.yaml); the alerts run
// under `promtool test rules` (testdata/alerts_test.yaml), and every metric
// they read is one a running scheduler exports.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "tests/manifests/manifest_checks.h"
#include "tests/testing/command.h"
#include "tests/testing/paths.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

using ::ms::manifests::ExpectBudgetKeepsOneReplica;
using ::ms::manifests::ExpectHardened;
using ::ms::manifests::ExpectMayGetMetricsOnly;
using ::ms::manifests::ExpectMetricsOnSecurePortOnly;
using ::ms::manifests::ExpectProbesAndDefaultResources;
using ::ms::manifests::ExpectSecureScrape;
using ::ms::manifests::ExpectSchedulerPod;
using ::ms::manifests::ExpectTokenIsAFile;
using ::ms::manifests::Grants;
using ::ms::manifests::Named;
using ::ms::manifests::OfKind;
using ::ms::manifests::Only;
using ::ms::manifests::ResourceNames;
using ::ms::manifests::SameData;
using ::ms::manifests::SchedulerGrants;
using ::ms::testing::CommandResult;
using ::ms::testing::ReadFileOrDie;
using ::ms::testing::RunCommandLine;
using ::ms::testing::SchedulerProcess;
using ::ms::testing::SourceDir;
using ::ms::testing::SchedulerProcesses;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

std::string Testdata(const std::string& name) {
  return absl::StrCat(SourceDir(), "/tests/manifests/testdata/", name);
}

// A path under the test's temporary directory, unique to this process.
std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/chart-", getpid(), "-", name);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  EXPECT_TRUE(out.good()) << path;
}

std::string TestenvBin() {
  const char* bin = std::getenv("TESTENV_BIN");
  EXPECT_NE(bin, nullptr) << "TESTENV_BIN is not set";
  return bin == nullptr ? "testenv" : bin;
}

// `testenv helm template RELEASE charts/metrics-scheduler --namespace NS
// FLAGS`; fails the test (and returns "") when it fails.
std::string Template(const std::string& release, const std::string& ns,
                     const std::string& flags = "") {
  CommandResult r = RunCommandLine(absl::StrCat(
      TestenvBin(), " helm template ", release, " ", SourceDir(),
      "/charts/metrics-scheduler --namespace ", ns, " ", flags));
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.err;
  return r.exit_code == 0 ? r.out : "";
}

// The release and namespace of the renderings whose content is checked:
// what the kustomization installs, by name.
constexpr char kRelease[] = "metrics-scheduler";
constexpr char kNamespace[] = "metrics-scheduler";

std::vector<YAML::Node> Render(const std::string& flags = "") {
  return YAML::LoadAll(Template(kRelease, kNamespace, flags));
}

std::multiset<std::string> Kinds(const std::vector<YAML::Node>& docs) {
  std::multiset<std::string> kinds;
  for (const YAML::Node& d : docs) {
    if (d.IsMap()) kinds.insert(d["kind"].as<std::string>());
  }
  return kinds;
}

std::set<std::string> Args(const YAML::Node& deployment) {
  std::set<std::string> args;
  for (const YAML::Node& a :
       deployment["spec"]["template"]["spec"]["containers"][0]["args"]) {
    args.insert(a.as<std::string>());
  }
  return args;
}

// The configuration the chart writes into its ConfigMap, as text and as
// YAML.
std::string ConfigText(const std::vector<YAML::Node>& docs) {
  YAML::Node map = Only(docs, "ConfigMap");
  return map.IsMap() ? map["data"]["config.yaml"].as<std::string>("") : "";
}
YAML::Node ConfigOf(const std::vector<YAML::Node>& docs) {
  return YAML::Load(ConfigText(docs));
}

// The volume of the Deployment's pods named `name`.
YAML::Node Volume(const YAML::Node& deployment, const std::string& name) {
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["name"].as<std::string>() == name) return v;
  }
  ADD_FAILURE() << "no volume " << name;
  return YAML::Node();
}

// The objects of the default rendering: what the kustomization installs
// but the namespace (Helm's --create-namespace makes it). The ClusterRoles
// are the scheduler's and the metrics reader's.
const std::multiset<std::string> kDefaultKinds = {
    "ServiceAccount", "ClusterRole", "ClusterRole", "ClusterRoleBinding",
    "Role",           "RoleBinding", "ConfigMap",   "Secret",
    "Service",        "Deployment",  "PodDisruptionBudget"};

// The scheduler's ClusterRole and the metrics reader's, for the release
// metrics-scheduler.
constexpr char kSchedulerRole[] = "metrics-scheduler";
constexpr char kReaderRole[] = "metrics-scheduler-metrics-reader";

TEST(ChartTest, DefaultsInstallWhatTheKustomizationDoes) {
  std::vector<YAML::Node> docs = Render();
  EXPECT_EQ(Kinds(docs), kDefaultKinds);
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>().rfind("Cluster", 0) == 0) continue;
    EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(), kNamespace)
        << d["kind"];
  }
  YAML::Node deployment = Only(docs, "Deployment");
  ASSERT_TRUE(deployment.IsMap());
  EXPECT_EQ(deployment["metadata"]["name"].as<std::string>(),
            "metrics-scheduler");
  ExpectHardened(deployment);
  ExpectProbesAndDefaultResources(deployment);
  ExpectSchedulerPod(deployment);
  ExpectTokenIsAFile(deployment, "metrics-scheduler-metrics-token");
  ExpectBudgetKeepsOneReplica(Only(docs, "PodDisruptionBudget"), deployment);
  ExpectMetricsOnSecurePortOnly(deployment, Only(docs, "Service"), 10259);
  EXPECT_EQ(Grants(Named(docs, "ClusterRole", kSchedulerRole)),
            SchedulerGrants());
  ExpectMayGetMetricsOnly(Named(docs, "ClusterRole", kReaderRole));
  EXPECT_EQ(ResourceNames(Only(docs, "Role")),
            (std::set<std::string>{"metrics-scheduler"}));
  // The ServiceAccount is the one the pods run as and the bindings name.
  const std::string account =
      Only(docs, "ServiceAccount")["metadata"]["name"].as<std::string>();
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), account);
  for (const char* kind : {"ClusterRoleBinding", "RoleBinding"}) {
    YAML::Node binding = Only(docs, kind);
    ASSERT_EQ(binding["subjects"].size(), 1u) << kind;
    EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), account);
    EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(),
              kNamespace);
  }
  // The chart's Secret is a template without data, as the base's.
  YAML::Node secret = Only(docs, "Secret");
  EXPECT_FALSE(secret["data"]);
  EXPECT_FALSE(secret["stringData"]);
  // The Service selects the pods (and serves their https port: above).
  YAML::Node service = Only(docs, "Service");
  EXPECT_TRUE(SameData(service["spec"]["selector"],
                       deployment["spec"]["selector"]["matchLabels"]));
}

// securePort.enabled=false: /metrics on the plain port, as before the
// secure port existed; no reader role (nothing would check it), even with
// subjects to bind. The pods are as hardened and probed as ever.
TEST(ChartTest, SecurePortOffServesMetricsOnThePlainPort) {
  std::vector<YAML::Node> docs = Render(
      "--set securePort.enabled=false --set serviceMonitor.enabled=true "
      "--set securePort.tlsSecret=unused "
      "--set metrics.readerSubjects[0].kind=ServiceAccount "
      "--set metrics.readerSubjects[0].name=prometheus-k8s "
      "--set metrics.readerSubjects[0].namespace=monitoring");
  std::multiset<std::string> kinds = kDefaultKinds;
  kinds.erase(kinds.find("ClusterRole"));
  kinds.insert("ServiceMonitor");
  EXPECT_EQ(Kinds(docs), kinds);
  EXPECT_EQ(Grants(Named(docs, "ClusterRole", kSchedulerRole)),
            SchedulerGrants());
  YAML::Node deployment = Only(docs, "Deployment");
  ASSERT_TRUE(deployment.IsMap());
  ExpectHardened(deployment);
  ExpectProbesAndDefaultResources(deployment);
  ExpectSchedulerPod(deployment);
  ExpectTokenIsAFile(deployment, "metrics-scheduler-metrics-token");
  for (const std::string& arg : Args(deployment)) {
    EXPECT_FALSE(absl::StartsWith(arg, "--secure-port") ||
                 absl::StartsWith(arg, "--bind-address") ||
                 absl::StartsWith(arg, "--tls-"))
        << arg;
  }
  const YAML::Node container =
      deployment["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["ports"].size(), 1u);
  EXPECT_EQ(container["env"].size(), 1u);  // POD_NAME
  EXPECT_EQ(deployment["spec"]["template"]["spec"]["volumes"].size(), 2u);
  YAML::Node ports = Only(docs, "Service")["spec"]["ports"];
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0]["name"].as<std::string>(), "http-metrics");
  EXPECT_EQ(ports[0]["port"].as<int>(), 10260);
  EXPECT_EQ(ports[0]["targetPort"].as<std::string>(), "http");
  YAML::Node endpoints = Only(docs, "ServiceMonitor")["spec"]["endpoints"];
  ASSERT_EQ(endpoints.size(), 1u);
  EXPECT_TRUE(SameData(endpoints[0], YAML::Load(R"(
      {port: http-metrics, path: /metrics, interval: 30s, scrapeTimeout: 10s})")))
      << endpoints[0];
}

// The ServiceMonitor's other ways with the secure port: a token from a
// Secret (`authorization`, for a Prometheus that denies token files) and a
// pinned CA in place of the unverified self-signed certificate.
TEST(ChartTest, ServiceMonitorTokenSecretAndPinnedCa) {
  std::vector<YAML::Node> docs = Render(
      "--set serviceMonitor.enabled=true "
      "--set serviceMonitor.tokenSecret.name=prometheus-token "
      "--set serviceMonitor.tlsConfig.insecureSkipVerify=null "
      "--set serviceMonitor.tlsConfig.ca.secret.name=metrics-scheduler-tls "
      "--set serviceMonitor.tlsConfig.ca.secret.key=ca.crt "
      "--set serviceMonitor.tlsConfig.serverName="
      "metrics-scheduler.metrics-scheduler.svc");
  YAML::Node endpoints = Only(docs, "ServiceMonitor")["spec"]["endpoints"];
  ASSERT_EQ(endpoints.size(), 1u);
  EXPECT_TRUE(SameData(endpoints[0], YAML::Load(R"(
      port: https-metrics
      scheme: https
      path: /metrics
      interval: 30s
      scrapeTimeout: 10s
      authorization:
        type: Bearer
        credentials: {name: prometheus-token, key: token}
      tlsConfig:
        ca: {secret: {name: metrics-scheduler-tls, key: ca.crt}}
        serverName: metrics-scheduler.metrics-scheduler.svc
  )"))) << endpoints[0];
}

// The kustomization's ClusterRole and the chart's grant the same: neither
// can gain a verb alone.
TEST(ChartTest, RbacIsTheKustomizations) {
  std::vector<YAML::Node> base =
      YAML::LoadAllFromFile(SourceDir() + "/manifests/base/rbac.yaml");
  std::vector<YAML::Node> chart = Render();
  EXPECT_EQ(Grants(Named(chart, "ClusterRole", kSchedulerRole)),
            Grants(Only(base, "ClusterRole")));
  EXPECT_TRUE(
      SameData(Only(chart, "Role")["rules"], Only(base, "Role")["rules"]));
  // The metrics reader's too, by name.
  std::vector<YAML::Node> reader = YAML::LoadAllFromFile(
      SourceDir() + "/manifests/base/metrics-reader.yaml");
  EXPECT_TRUE(SameData(Named(chart, "ClusterRole", kReaderRole)["rules"],
                       Named(reader, "ClusterRole", kReaderRole)["rules"]));
}

// Evicting for rebalancing is granted only when asked, as
// manifests/components/rebalance grants it.
TEST(ChartTest, RebalanceEvictionsAreGrantedOnlyWhenAsked) {
  for (const YAML::Node& d : Render()) {
    if (d.IsMap() && d["kind"].as<std::string>() == "ClusterRole") {
      EXPECT_NE(d["metadata"]["name"].as<std::string>(),
                std::string(kSchedulerRole) + "-rebalance");
    }
  }
  std::vector<YAML::Node> chart = Render("--set rebalance.evictions=true");
  std::vector<YAML::Node> component = YAML::LoadAllFromFile(
      SourceDir() + "/manifests/components/rebalance/rbac.yaml");
  const std::string role = std::string(kSchedulerRole) + "-rebalance";
  EXPECT_EQ(Grants(Named(chart, "ClusterRole", role)),
            Grants(Only(component, "ClusterRole")));
  YAML::Node binding = Named(chart, "ClusterRoleBinding", role);
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), role);
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(),
            std::string(kSchedulerRole));
}

// The default configuration is manifests/config.yaml, field for field, and
// the scheduler accepts it.
TEST(ChartTest, DefaultConfigurationIsTheKustomizations) {
  YAML::Node config = ConfigOf(Render());
  ASSERT_TRUE(config.IsMap());
  YAML::Node kustomize =
      YAML::LoadFile(SourceDir() + "/manifests/config.yaml");
  EXPECT_TRUE(SameData(config, kustomize)) << config << "\n---\n" << kustomize;
  absl::StatusOr<Config> loaded =
      LoadConfigString(ConfigText(Render()), "chart config.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->leader_election.lease_name, "metrics-scheduler");
  EXPECT_EQ(loaded->leader_election.lease_namespace, kNamespace);
  EXPECT_EQ(loaded->http.listen_address, ":10260");
}

// One value names the Lease: the Role grants it, the configuration names it,
// and the flags name it too (so an existing ConfigMap cannot disagree).
TEST(ChartTest, LeaseNameDrivesRoleConfigurationAndFlags) {
  std::vector<YAML::Node> docs = YAML::LoadAll(Template(
      kRelease, "team-a", "--set leaderElection.leaseName=ms-team-a"));
  EXPECT_EQ(ResourceNames(Only(docs, "Role")),
            (std::set<std::string>{"ms-team-a"}));
  absl::StatusOr<Config> config =
      LoadConfigString(ConfigText(docs), "chart config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->leader_election.lease_name, "ms-team-a");
  EXPECT_EQ(config->leader_election.lease_namespace, "team-a");
  std::set<std::string> args = Args(Only(docs, "Deployment"));
  EXPECT_TRUE(args.count("--lease-name=ms-team-a"));
  EXPECT_TRUE(args.count("--lease-namespace=team-a"));
  // Without a name there is nothing to grant: the rendering fails, saying
  // which value.
  CommandResult r = RunCommandLine(absl::StrCat(
      TestenvBin(), " helm template x ", SourceDir(),
      "/charts/metrics-scheduler --set leaderElection.leaseName="));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "leaderElection.leaseName must be set"))
      << r.err;
}

TEST(ChartTest, ExistingConfigMap) {
  std::vector<YAML::Node> docs =
      Render("--set config.existingConfigMap=team-config");
  std::multiset<std::string> kinds = kDefaultKinds;
  kinds.erase("ConfigMap");
  EXPECT_EQ(Kinds(docs), kinds);
  YAML::Node deployment = Only(docs, "Deployment");
  EXPECT_EQ(Volume(deployment, "config")["configMap"]["name"].as<std::string>(),
            "team-config");
  // No configuration of the chart's, so nothing to roll the pods on.
  EXPECT_FALSE(deployment["spec"]["template"]["metadata"]["annotations"]);
  ExpectSchedulerPod(deployment);
  // The flags still hold the Lease and the port to what the chart grants and
  // probes.
  std::set<std::string> args = Args(deployment);
  EXPECT_TRUE(args.count("--lease-name=metrics-scheduler"));
  EXPECT_TRUE(args.count("--http-address=:10260"));
}

TEST(ChartTest, ExistingSecret) {
  std::vector<YAML::Node> docs =
      Render("--set metricsToken.existingSecret=vault-metrics-token");
  std::multiset<std::string> kinds = kDefaultKinds;
  kinds.erase("Secret");
  EXPECT_EQ(Kinds(docs), kinds);
  ExpectTokenIsAFile(Only(docs, "Deployment"), "vault-metrics-token");
}

TEST(ChartTest, CreatedSecretHoldsTheGivenToken) {
  std::vector<YAML::Node> docs = Render("--set metricsToken.token=s3cr3t");
  EXPECT_EQ(Kinds(docs), kDefaultKinds);
  YAML::Node secret = Only(docs, "Secret");
  EXPECT_EQ(secret["metadata"]["name"].as<std::string>(),
            "metrics-scheduler-metrics-token");
  EXPECT_EQ(secret["data"]["token"].as<std::string>(), "czNjcjN0");  // s3cr3t
  EXPECT_EQ(secret["data"].size(), 1u);
  ExpectTokenIsAFile(Only(docs, "Deployment"),
                     "metrics-scheduler-metrics-token");
}

// A values file (testdata/chart-values.yaml) sets the pod's placement and
// shape; what it does not set keeps its default.
TEST(ChartTest, ValuesFileShapesThePods) {
  std::vector<YAML::Node> docs =
      Render("--values " + Testdata("chart-values.yaml"));
  std::multiset<std::string> kinds = kDefaultKinds;
  kinds.erase("PodDisruptionBudget");  // podDisruptionBudget.enabled: false
  kinds.insert("ClusterRoleBinding");  // metrics.readerSubjects
  EXPECT_EQ(Kinds(docs), kinds);
  YAML::Node deployment = Only(docs, "Deployment");
  YAML::Node pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(deployment["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(pod["containers"][0]["image"].as<std::string>(),
            "registry.example.com/metrics-scheduler:0.2.0");
  EXPECT_EQ(pod["containers"][0]["imagePullPolicy"].as<std::string>(),
            "Always");
  EXPECT_EQ(pod["priorityClassName"].as<std::string>(), "platform-critical");
  EXPECT_EQ(pod["nodeSelector"]["node-role.kubernetes.io/control-plane"]
                .as<std::string>(),
            "");
  ASSERT_EQ(pod["tolerations"].size(), 1u);
  EXPECT_EQ(pod["tolerations"][0]["key"].as<std::string>(),
            "node-role.kubernetes.io/control-plane");
  // The given affinity replaces the default anti-affinity.
  EXPECT_FALSE(pod["affinity"]["podAntiAffinity"]);
  EXPECT_EQ(pod["affinity"]["nodeAffinity"]
               ["requiredDuringSchedulingIgnoredDuringExecution"]
               ["nodeSelectorTerms"][0]["matchExpressions"][0]["key"]
                   .as<std::string>(),
            "kubernetes.io/arch");
  YAML::Node resources = pod["containers"][0]["resources"];
  EXPECT_EQ(resources["requests"]["cpu"].as<std::string>(), "200m");
  EXPECT_EQ(resources["limits"]["memory"].as<std::string>(), "512Mi");
  EXPECT_EQ(pod["imagePullSecrets"][0]["name"].as<std::string>(), "regcred");
  EXPECT_EQ(deployment["spec"]["template"]["metadata"]["labels"]["team"]
                .as<std::string>(),
            "platform");
  std::set<std::string> args = Args(deployment);
  EXPECT_TRUE(args.count("-v=2"));
  EXPECT_TRUE(args.count("--bind-workers=16"));
  // The configuration merges: the file's backend URL, the default metrics.
  absl::StatusOr<Config> config =
      LoadConfigString(ConfigText(docs), "chart config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->backend.url, "http://thanos-query.monitoring.svc:9090");
  EXPECT_EQ(config->backend.token_file,
            "/var/run/secrets/metrics-scheduler/token");
  ASSERT_EQ(config->profiles[0].metrics.size(), 3u);
  EXPECT_EQ(config->profiles[0].metrics[0].name, "cpu");
  // The secure port on 8443 with the certificate of a Secret, mounted
  // read-only; the scrapers' binding names the given subjects.
  ExpectMetricsOnSecurePortOnly(deployment, Only(docs, "Service"), 8443);
  EXPECT_TRUE(args.count("--tls-cert-file=/etc/metrics-scheduler-tls/tls.crt"));
  EXPECT_TRUE(
      args.count("--tls-private-key-file=/etc/metrics-scheduler-tls/tls.key"));
  YAML::Node cert = Volume(deployment, "serving-cert");
  EXPECT_EQ(cert["secret"]["secretName"].as<std::string>(""),
            "metrics-scheduler-tls");
  EXPECT_EQ(cert["secret"]["defaultMode"].as<int>(0), 0440);
  int mounts = 0;
  for (const YAML::Node& m : pod["containers"][0]["volumeMounts"]) {
    if (m["name"].as<std::string>() != "serving-cert") continue;
    ++mounts;
    EXPECT_EQ(m["mountPath"].as<std::string>(), "/etc/metrics-scheduler-tls");
    EXPECT_EQ(m["readOnly"].as<std::string>(), "true");
  }
  EXPECT_EQ(mounts, 1);
  ExpectTokenIsAFile(deployment, "metrics-scheduler-metrics-token");
  YAML::Node binding = Named(docs, "ClusterRoleBinding", kReaderRole);
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(""), kReaderRole);
  EXPECT_TRUE(SameData(binding["subjects"], YAML::Load(R"(
      [{kind: ServiceAccount, name: prometheus, namespace: observability}])")))
      << binding["subjects"];
  // Hardening is not a value.
  ExpectHardened(deployment);
}

// The ServiceMonitor scrapes the chart's Service on its metrics port; the
// PrometheusRule carries the labels a Prometheus selects rules by.
TEST(ChartTest, MonitoringToggles) {
  std::vector<YAML::Node> docs = Render(
      "--set serviceMonitor.enabled=true --set prometheusRule.enabled=true "
      "--set podDisruptionBudget.enabled=false "
      "--set prometheusRule.labels.release=prometheus");
  std::multiset<std::string> kinds = kDefaultKinds;
  kinds.erase("PodDisruptionBudget");
  kinds.insert("ServiceMonitor");
  kinds.insert("PrometheusRule");
  EXPECT_EQ(Kinds(docs), kinds);
  YAML::Node monitor = Only(docs, "ServiceMonitor");
  YAML::Node service = Only(docs, "Service");
  ASSERT_TRUE(monitor.IsMap());
  for (const auto& kv : monitor["spec"]["selector"]["matchLabels"]) {
    EXPECT_EQ(service["metadata"]["labels"][kv.first.as<std::string>()]
                  .as<std::string>(""),
              kv.second.as<std::string>())
        << kv.first;
  }
  EXPECT_EQ(monitor["spec"]["namespaceSelector"]["matchNames"][0]
                .as<std::string>(),
            kNamespace);
  ASSERT_EQ(monitor["spec"]["endpoints"].size(), 1u);
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(),
            service["spec"]["ports"][0]["name"].as<std::string>());
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["path"].as<std::string>(),
            "/metrics");
  YAML::Node rule = Only(docs, "PrometheusRule");
  EXPECT_EQ(rule["metadata"]["labels"]["release"].as<std::string>(""),
            "prometheus");
  std::set<std::string> alerts;
  for (const YAML::Node& r : rule["spec"]["groups"][0]["rules"]) {
    alerts.insert(r["alert"].as<std::string>());
  }
  EXPECT_EQ(alerts, (std::set<std::string>{
                        "MetricsSchedulerDown", "MetricsSchedulerNoLeader",
                        "MetricsSchedulerFallbackHigh",
                        "MetricsSchedulerMetricCoverageLow",
                        "MetricsSchedulerPodsPending"}));
}

// manifests/monitoring/prometheusrule.yaml is the alerts' one source: for
// the release and namespace metrics-scheduler, with the default values, the
// chart renders exactly its spec (expressions, durations, labels, texts).
// The ServiceMonitor scrapes as the manifest's does: the secure port, with
// the Prometheus pod's token.
TEST(ChartTest, MonitoringIsTheManifests) {
  std::vector<YAML::Node> chart = Render(
      "--set serviceMonitor.enabled=true --set prometheusRule.enabled=true");
  const std::string dir = SourceDir() + "/manifests/monitoring/";
  const YAML::Node rule = YAML::LoadFile(dir + "prometheusrule.yaml");
  const YAML::Node rendered = Only(chart, "PrometheusRule");
  ASSERT_TRUE(rendered.IsMap());
  EXPECT_TRUE(SameData(rendered["spec"], rule["spec"]))
      << "chart:\n" << rendered["spec"] << "\nmanifest:\n" << rule["spec"];
  const YAML::Node monitor = YAML::LoadFile(dir + "servicemonitor.yaml");
  const YAML::Node scrape = Only(chart, "ServiceMonitor");
  ASSERT_TRUE(scrape.IsMap());
  EXPECT_TRUE(SameData(scrape["spec"]["endpoints"], monitor["spec"]["endpoints"]))
      << scrape["spec"]["endpoints"];
  ExpectSecureScrape(scrape["spec"]["endpoints"][0]);
  EXPECT_TRUE(SameData(scrape["spec"]["namespaceSelector"],
                       monitor["spec"]["namespaceSelector"]));
  EXPECT_EQ(scrape["metadata"]["name"].as<std::string>(),
            monitor["metadata"]["name"].as<std::string>());
}

// The alerts' rules, as the default rendering writes them.
YAML::Node RuleSpec(const std::string& flags = "") {
  YAML::Node rule = Only(
      Render("--set prometheusRule.enabled=true " + flags), "PrometheusRule");
  return rule.IsMap() ? rule["spec"] : YAML::Node();
}

// Each alert fires on its series, with its labels and texts, after its
// `for`; none fires while the scheduler is healthy (testdata/alerts_test.yaml,
// run by Prometheus's own rule engine).
TEST(ChartTest, AlertsFireOnTheSchedulersSeries) {
  YAML::Node spec = RuleSpec();
  ASSERT_TRUE(spec.IsMap());
  const std::string dir = TempPath("alerts");
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  YAML::Emitter rules;
  rules << spec;
  WriteFile(dir + "/rules.yaml", std::string(rules.c_str()) + "\n");
  WriteFile(dir + "/alerts_test.yaml",
            ReadFileOrDie(Testdata("alerts_test.yaml")));
  CommandResult r = RunCommandLine(absl::StrCat("promtool test rules ", dir,
                                     "/alerts_test.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << "\nrules:\n" << rules.c_str();
  EXPECT_TRUE(absl::StrContains(r.out, "SUCCESS")) << r.out << r.err;
  // A threshold is a value: at 95 % the fallback test's 90 % does not alert,
  // and promtool says so.
  YAML::Emitter raised;
  raised << RuleSpec("--set prometheusRule.fallbackRatio=0.95");
  WriteFile(dir + "/rules.yaml", std::string(raised.c_str()) + "\n");
  r = RunCommandLine(
      absl::StrCat("promtool test rules ", dir, "/alerts_test.yaml"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out + r.err, "MetricsSchedulerFallbackHigh"))
      << r.out << r.err;
  std::filesystem::remove_all(dir);
}

// Every metric the alerts read is one the scheduler exports, with the label
// values they select: a renamed metric fails here, not silently in a
// cluster.
class ChartSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
  }
  void TearDown() override { schedulers_.StopAll(HasFailure()); }

  Testenv env_;
  SchedulerProcesses schedulers_;
};

TEST_F(ChartSchedulerTest, AlertsReadMetricsTheSchedulerExports) {
  std::vector<YAML::Node> docs = Render(
      "--set prometheusRule.enabled=true "
      "--set config.inline.backend.url=http://127.0.0.1:9");
  std::set<std::string> names;
  for (const YAML::Node& r :
       Only(docs, "PrometheusRule")["spec"]["groups"][0]["rules"]) {
    const std::string expr = r["expr"].as<std::string>();
    for (size_t at = expr.find("metrics_scheduler_"); at != std::string::npos;
         at = expr.find("metrics_scheduler_", at)) {
      size_t end = at;
      while (end < expr.size() &&
             (absl::ascii_islower(expr[end]) || expr[end] == '_')) {
        ++end;
      }
      names.insert(expr.substr(at, end - at));
      at = end;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "metrics_scheduler_leader",
                       "metrics_scheduler_decisions_total",
                       "metrics_scheduler_metric_nodes_with_data",
                       "metrics_scheduler_metric_nodes_missing",
                       "metrics_scheduler_pending_pods"}));
  // The series the alerts select by label value, present from the start.
  const std::vector<std::string> samples = {
      R"(metrics_scheduler_pending_pods{queue="unschedulable"} )",
      R"(metrics_scheduler_pending_pods{queue="backoff"} )",
      R"(metrics_scheduler_metric_nodes_with_data{metric="http_latency"} )",
      R"(metrics_scheduler_metric_nodes_missing{metric="http_latency"} )"};
  const std::string config = ConfigText(docs);
  ASSERT_FALSE(config.empty());
  SchedulerProcess* scheduler = schedulers_.Start(
      {.config_yaml = config,
       .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
       .identity = "chart-alerts",
       .extra_args = {"--leader-elect=false"}});
  ASSERT_NE(scheduler, nullptr);
  std::string text;
  auto exported = [&] {
    text = scheduler->Scrape().value_or("");
    for (const std::string& n : names) {
      if (!absl::StrContains(text, absl::StrCat("\n# TYPE ", n, " "))) {
        return false;
      }
    }
    for (const std::string& s : samples) {
      if (!absl::StrContains(text, absl::StrCat("\n", s))) return false;
    }
    return true;
  };
  EXPECT_TRUE(WaitFor(exported)) << text;
}

// `helm lint --strict`: no warning or error, with the defaults and with
// every option on.
TEST(ChartTest, LintsClean) {
  for (const std::string& flags :
       {std::string(),
        std::string("--set serviceMonitor.enabled=true "
                    "--set prometheusRule.enabled=true "
                    "--set metricsToken.existingSecret=t "
                    "--set config.existingConfigMap=c --values ") +
            Testdata("chart-values.yaml")}) {
    CommandResult r = RunCommandLine(absl::StrCat(
        TestenvBin(), " helm lint ", SourceDir(), "/charts/metrics-scheduler ",
        flags));
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.out, "0 warning(s) or error(s)")) << r.out;
  }
}

// `kubectl apply --dry-run=server` of renderings, in a namespace of the
// test's own under a release name of its own, so that nothing collides with
// the RBAC the other tests apply. Every object is accepted ("created").
class ChartDryRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    // One per test: a deleted namespace lingers while it terminates.
    static int tests = 0;
    namespace_ = absl::StrCat("chart-", getpid(), "-", ++tests);
    env_.CreateNamespace(namespace_);
  }
  void TearDown() override { env_.DeleteNamespace(namespace_); }

  // Renders with `flags` and dry-runs the result; returns the objects.
  std::vector<YAML::Node> DryRun(const std::string& flags) {
    const std::string rendered = Template("ms-chart", namespace_, flags);
    std::vector<YAML::Node> docs = YAML::LoadAll(rendered);
    const std::string file = TempPath("rendered.yaml");
    WriteFile(file, rendered);
    std::string out = env_.Kubectl("apply --dry-run=server -f " + file);
    std::remove(file.c_str());
    int objects = 0;
    for (const YAML::Node& d : docs) {
      if (!d.IsMap()) continue;
      ++objects;
      // kubectl names an object kind.group/name: deployment.apps/ms-chart-...
      std::string api = d["apiVersion"].as<std::string>();
      size_t slash = api.find('/');
      std::string group =
          slash == std::string::npos ? "" : api.substr(0, slash);
      std::string line = absl::StrCat(
          absl::AsciiStrToLower(d["kind"].as<std::string>()),
          group.empty() ? "" : ".", group, "/",
          d["metadata"]["name"].as<std::string>(), " created (server dry run)");
      EXPECT_TRUE(absl::StrContains(out, line)) << line << "\n" << out;
    }
    EXPECT_GT(objects, 0);
    return docs;
  }

  Testenv env_;
  std::string namespace_;
};

TEST_F(ChartDryRunTest, Defaults) {
  std::vector<YAML::Node> docs = DryRun("");
  EXPECT_EQ(Kinds(docs), kDefaultKinds);
  // Names follow the release: ms-chart-metrics-scheduler.
  EXPECT_EQ(Only(docs, "Deployment")["metadata"]["name"].as<std::string>(),
            "ms-chart-metrics-scheduler");
}

TEST_F(ChartDryRunTest, ExistingConfigMapAndSecret) {
  DryRun("--set config.existingConfigMap=team-config "
         "--set metricsToken.existingSecret=team-token");
}

TEST_F(ChartDryRunTest, CreatedSecretAndLeaseName) {
  DryRun("--set metricsToken.token=s3cr3t "
         "--set leaderElection.leaseName=ms-chart-lease");
}

TEST_F(ChartDryRunTest, ValuesFile) {
  DryRun("--values " + Testdata("chart-values.yaml"));
}

TEST_F(ChartDryRunTest, SecurePortOff) {
  std::vector<YAML::Node> docs = DryRun("--set securePort.enabled=false");
  EXPECT_EQ(OfKind(docs, "ClusterRole").size(), 1u);
}

// The ServiceMonitor and PrometheusRule against stand-ins of their CRDs
// (testdata/monitoring-crds.yaml; installed once and left, like any CRD a
// cluster has: a later run applies them unchanged).
TEST_F(ChartDryRunTest, MonitoringAgainstTheirCrds) {
  env_.Kubectl("apply -f " + Testdata("monitoring-crds.yaml"));
  env_.Kubectl(
      "wait --for condition=established --timeout=60s "
      "crd/servicemonitors.monitoring.coreos.com "
      "crd/prometheusrules.monitoring.coreos.com");
  // Established, then served: wait until kubectl finds the kinds.
  EXPECT_TRUE(WaitFor([&] {
    return RunCommandLine(absl::StrCat(TestenvBin(), " kubectl --kubeconfig ",
                                   env_.dir(), "/admin.kubeconfig -n ",
                                   namespace_,
                                   " get servicemonitors,prometheusrules"))
               .exit_code == 0;
  }));
  std::vector<YAML::Node> docs =
      DryRun("--set serviceMonitor.enabled=true "
             "--set prometheusRule.enabled=true");
  EXPECT_EQ(OfKind(docs, "ServiceMonitor").size(), 1u);
  EXPECT_EQ(OfKind(docs, "PrometheusRule").size(), 1u);
  // Its other scrapes: plain, and secure with a token Secret and a CA.
  DryRun("--set serviceMonitor.enabled=true --set securePort.enabled=false");
  DryRun(
      "--set serviceMonitor.enabled=true "
      "--set serviceMonitor.tokenSecret.name=prometheus-token "
      "--set serviceMonitor.tlsConfig.insecureSkipVerify=null "
      "--set serviceMonitor.tlsConfig.ca.secret.name=ca "
      "--set serviceMonitor.tlsConfig.ca.secret.key=ca.crt "
      "--set serviceMonitor.tlsConfig.serverName=ms.example.svc");
  // The stand-ins are strict: a misspelt field is refused, not dropped.
  const std::string file = TempPath("misspelt.yaml");
  WriteFile(file, absl::StrCat(R"(apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: misspelt, namespace: )",
                               namespace_, R"(}
spec:
  selector: {matchLabels: {app: x}}
  endpoints: [{port: http-metrics, intervall: 30s}]
)"));
  CommandResult r = RunCommandLine(
      absl::StrCat(TestenvBin(), " kubectl --kubeconfig ", env_.dir(),
                   "/admin.kubeconfig apply --dry-run=server -f ", file));
  std::remove(file.c_str());
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "intervall")) << r.err;
}

}  // namespace
}  // namespace ms
