// The binary's command line: --help, --version, validate-config, bad flags,
// the kubeconfig flags and exit codes.

#include <dirent.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/testing/paths.h"

namespace ms {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs the binary with `args` (shell words), $KUBECONFIG set to
// `kubeconfig_env` unless "" (ctest unsets it).
Result RunBinary(const std::string& args,
                 const std::string& kubeconfig_env = "") {
  const char* dir = std::getenv("MS_BINARY_DIR");
  EXPECT_NE(dir, nullptr) << "run through ctest";
  // (A caller's own redirections come first: "2>&1 >/dev/null" keeps
  // stderr alone.)
  std::string command = std::string(dir ? dir : ".") + "/metrics-scheduler " +
                        args +
                        (absl::StrContains(args, "2>&1") ? "" : " 2>&1");
  if (!kubeconfig_env.empty()) {
    command = "KUBECONFIG='" + kubeconfig_env + "' " + command;
  }
  FILE* pipe = popen(command.c_str(), "r");
  Result r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) {
    r.output.append(buffer, n);
  }
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the binary with stdout thrown away: what it wrote on stderr.
Result RunBinaryStderr(const std::string& args) {
  return RunBinary(args + " 2>&1 >/dev/null");
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliTest, HelpListsTheFlagsWithDashesAndExitsZero) {
  Result r = RunBinary("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("validate-config FILE"), std::string::npos);
  EXPECT_NE(r.output.find("--leader-elect (default: true)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--kubeconfig"), std::string::npos);
  EXPECT_NE(r.output.find("--context (default: \"\")"), std::string::npos)
      << r.output;
  // The order in which the cluster is found.
  EXPECT_NE(r.output.find("The cluster, as kubectl finds it: --kubeconfig "
                          "FILE; else $KUBECONFIG"),
            std::string::npos)
      << r.output;
  // Where /metrics is served: the secure port alone once it is on.
  EXPECT_NE(r.output.find("/readyz and, unless --secure-port is set, "
                          "/metrics (with --secure-port it answers 404 "
                          "there)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("then the only one serving /metrics"),
            std::string::npos)
      << r.output;
}

// "metrics-scheduler 0.1.0", then "+" and the git commit when built from a
// checkout, then ".dirty" when it had uncommitted changes.
TEST(CliTest, VersionPrintsTheVersionAndExitsZero) {
  for (const char* args : {"--version", "-version", "explain --version",
                           "--version --no-such-flag"}) {
    Result r = RunBinary(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    std::string want = "metrics-scheduler " MS_PROJECT_VERSION;
    ASSERT_TRUE(absl::StartsWith(r.output, want)) << args << ": " << r.output;
    ASSERT_TRUE(absl::EndsWith(r.output, "\n")) << r.output;
    absl::string_view rest = r.output;
    rest.remove_prefix(want.size());
    rest.remove_suffix(1);  // the newline
    if (absl::ConsumeSuffix(&rest, ".dirty")) {
      EXPECT_FALSE(rest.empty()) << r.output;
    }
    if (!rest.empty()) {
      EXPECT_EQ(rest[0], '+') << r.output;
      EXPECT_EQ(rest.size(), 13u) << r.output;  // 12 hex digits
      EXPECT_EQ(rest.find_first_not_of("0123456789abcdef", 1),
                std::string::npos)
          << r.output;
    }
  }
}

// An unknown flag or a bad value, whatever the subcommand: exit 2, the
// reason and that subcommand's usage line on stderr. (Abseil alone would
// exit 1.)
TEST(CliTest, BadFlagsExitTwoWithTheUsageLine) {
  const std::string run_usage =
      "usage: metrics-scheduler [flags]   (metrics-scheduler --help: every "
      "flag)\n";
  struct Case {
    const char* args;
    std::string stderr_text;
  };
  for (const Case& c : {
           Case{
               "--no-such-flag",
               "metrics-scheduler: --no-such-flag: unknown flag\n" + run_usage},
           Case{
               "-no_such_flag=1",
               "metrics-scheduler: --no-such-flag: unknown flag\n" + run_usage},
           Case{"--bind-workers=many",
                "metrics-scheduler: --bind-workers: bad value \"many\"\n" +
                    run_usage},
           Case{"--leader-elect=maybe",
                "metrics-scheduler: --leader-elect: bad value \"maybe\"\n" +
                    run_usage},
           Case{"--logging-format=xml",
                "metrics-scheduler: --logging-format: bad value \"xml\": "
                "want text or json\n" +
                    run_usage},
           Case{"--logging-format JSON",
                "metrics-scheduler: --logging-format: bad value \"JSON\": "
                "want text or json\n" +
                    run_usage},
           Case{"--nobind-workers",
                "metrics-scheduler: --nobind-workers: unknown flag\n" +
                    run_usage},
           Case{"--config",
                "metrics-scheduler: --config: needs a value\n" + run_usage},
           Case{"-v=lots",
                "metrics-scheduler: -v wants a number >= 0, got \"lots\"\n" +
                    run_usage},
           Case{"validate-config --no-such-flag x.yaml",
                "metrics-scheduler: --no-such-flag: unknown flag\n"
                "usage: metrics-scheduler validate-config "
                "[--check-files=false] FILE\n"},
           Case{"--config x.yaml validate-config --check-files=sometimes x",
                "metrics-scheduler: --check-files: bad value "
                "\"sometimes\"\n"
                "usage: metrics-scheduler validate-config "
                "[--check-files=false] FILE\n"},
           Case{"explain --context",
                "metrics-scheduler: --context: needs a value\n"
                "usage: metrics-scheduler explain [--config FILE] "
                "[--kubeconfig FILE] [--context NAME] [--master URL] "
                "NAMESPACE/NAME|MANIFEST\n"
                "       metrics-scheduler explain --rebalance --config FILE "
                "[--kubeconfig FILE] [--context NAME] [--master URL]\n"},
           Case{"no-such-command",
                "metrics-scheduler: unknown command \"no-such-command\"\n" +
                    run_usage},
       }) {
    Result r = RunBinaryStderr(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.output, c.stderr_text) << c.args;
  }
  // Good flags in each spelling still parse: the usage error is the
  // missing file, not the flags.
  Result r = RunBinaryStderr(
      "--noleader-elect --leader_elect=false -bind_workers 4 --seed=7 "
      "validate-config");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "usage: metrics-scheduler validate-config "
                      "[--check-files=false] FILE\n");
}

// $KUBECONFIG is read when --kubeconfig is not given, and --context picks
// one of its contexts; neither reaches a server before the configuration
// is known to be usable.
// --logging-format=json: each line on stderr is one JSON object, with
// klog's keys: "v" on an info line, none on an error line. A kubeconfig
// that does not exist makes the scheduler log its version, then the error,
// and exit 2.
TEST(CliTest, JsonLoggingWritesOneObjectPerLine) {
  Result r = RunBinaryStderr(
      "--logging-format=json --kubeconfig=/nonexistent/kubeconfig");
  EXPECT_EQ(r.exit_code, 2);
  std::vector<std::string> lines =
      absl::StrSplit(r.output, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.output;
  ASSERT_TRUE(absl::EndsWith(r.output, "\n")) << r.output;
  simdjson::ondemand::parser parser;
  for (size_t i = 0; i < lines.size(); ++i) {
    simdjson::padded_string json(lines[i]);
    simdjson::ondemand::document doc;
    ASSERT_EQ(parser.iterate(json).get(doc), simdjson::SUCCESS) << lines[i];
    double ts = 0;
    std::string_view caller, msg;
    EXPECT_EQ(doc["ts"].get(ts), simdjson::SUCCESS) << lines[i];
    EXPECT_GT(ts, 1.6e12) << lines[i];  // milliseconds since the epoch
    EXPECT_EQ(doc["caller"].get(caller), simdjson::SUCCESS) << lines[i];
    EXPECT_TRUE(caller.starts_with("cmd/main.cc:")) << caller;
    EXPECT_EQ(doc["msg"].get(msg), simdjson::SUCCESS) << lines[i];
    int64_t v = -1;
    simdjson::error_code has_v = doc["v"].get(v);
    if (i == 0) {
      EXPECT_TRUE(msg.starts_with("metrics-scheduler ")) << msg;
      EXPECT_EQ(has_v, simdjson::SUCCESS) << lines[i];
      EXPECT_EQ(v, 0);
    } else {
      EXPECT_TRUE(msg.starts_with("cannot reach the cluster: "))
          << msg;
      EXPECT_EQ(has_v, simdjson::NO_SUCH_FIELD) << lines[i];  // an error
    }
  }

  // Text stays the default: glog's lines.
  r = RunBinaryStderr("--kubeconfig=/nonexistent/kubeconfig");
  EXPECT_EQ(r.exit_code, 2);
  lines = absl::StrSplit(r.output, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.output;
  EXPECT_TRUE(absl::StartsWith(lines[0], "I")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[0], " main.cc:")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "E")) << lines[1];
  EXPECT_TRUE(absl::StrContains(lines[1], "] cannot reach the cluster: "))
      << lines[1];
}

// Start-up flags that cannot work together, or a value out of range, end
// the start with exit 2 and a line naming the flag, before the cluster is
// looked for (the kubeconfig given does not exist: reaching for it would
// say "cannot reach the cluster").
TEST(CliTest, UnusableStartUpFlagsExitTwoNamingTheFlag) {
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"--extender-max-node-names=0",
       "--extender-max-node-names must be at least 1, got 0"},
      {"--bind-workers=0", "--bind-workers must be at least 1, got 0"},
      {"--shutdown-timeout=0s",
       "--shutdown-timeout and --liveness-stall-timeout must be positive"},
      {"--extender-secure",
       "--extender-secure is set but extender.listenAddress is empty"},
      {"--client-ca-file=/nonexistent/ca.crt",
       "--client-ca-file is set but neither --secure-port nor "
       "--extender-secure is on"},
      {"--secure-port=10259 --client-ca-file=/nonexistent/ca.crt",
       "/nonexistent/ca.crt"},
      {"--tls-cert-file=/nonexistent/tls.crt",
       "--tls-cert-file and --tls-private-key-file go together"},
      {"--kube-version=2.0",
       "--kube-version: \"2.0\" is not a Kubernetes 1.x release version"},
  };
  for (const Case& c : cases) {
    Result r = RunBinaryStderr(c.args +
                               " --kubeconfig=/nonexistent/kubeconfig");
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, c.message))
        << c.args << "\n" << r.output;
    EXPECT_FALSE(absl::StrContains(r.output, "cannot reach the cluster"))
        << c.args << "\n" << r.output;
  }
}

TEST(CliTest, KubeconfigListAndContext) {
  std::string a = WriteFile("kubeconfig-a", R"(current-context: a
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: a, context: {cluster: c, user: u}}]
)");
  std::string b = WriteFile("kubeconfig-b", "clusters: []\n");
  Result r = RunBinary("explain --context=nope default/p");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "metrics-scheduler explain: INVALID_ARGUMENT: --context nope: no "
            "kubeconfig to take it from; give --kubeconfig or $KUBECONFIG\n");

  r = RunBinary("explain --context=nope default/p", a + ":" + b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "metrics-scheduler explain: NOT_FOUND: " + a + ":" + b +
                          ": contexts has no entry named \"nope\"\n");

  // --kubeconfig wins over $KUBECONFIG.
  r = RunBinary("explain --kubeconfig=" + b + " default/p", a);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "metrics-scheduler explain: INVALID_ARGUMENT: " + b +
                          ": no current-context and none given\n");
}

TEST(CliTest, ValidateConfigAcceptsAGoodFile) {
  std::string path = WriteFile("good.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://prometheus:9090"}
metrics:
  - {name: latency, query: 'http_latency_seconds', weight: 2}
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, path + ": ok (1 metric(s), backend http://prometheus:9090)\n");
}

// Metrics read from the Nodes need no backend.
TEST(CliTest, ValidateConfigAcceptsNodeAttributesWithoutABackend) {
  std::string path = WriteFile("attributes.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
metrics:
  - {name: price, source: {nodeAnnotation: example.com/hourly-cost}}
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, path + ": ok (1 metric(s), no backend)\n");
}

// Several profiles: each named with its metrics; one query under two
// names is a warning.
TEST(CliTest, ValidateConfigNamesEachProfile) {
  std::string path = WriteFile("profiles.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://prometheus:9090"}
profiles:
  - schedulerName: metrics-scheduler
    metrics:
      - {name: latency, query: 'http_latency_seconds'}
  - schedulerName: cost-first
    metrics:
      - {name: lat, query: 'http_latency_seconds'}
      - {name: price, source: {nodeAnnotation: example.com/hourly-cost}}
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            path + ": warning: metrics \"latency\" and \"lat\" fetch the "
                   "same query: give them one name to fetch it once\n" +
                path + ": ok (profile metrics-scheduler with 1 metric(s), "
                       "profile cost-first with 2 metric(s), backend "
                       "http://prometheus:9090)\n");
}

// A client certificate over plain http:// is never presented.
TEST(CliTest, ValidateConfigWarnsOfACertificateOverPlainHttp) {
  std::string cert = WriteFile("tls.crt", "certificate");
  std::string key = WriteFile("tls.key", "key");
  std::string path = WriteFile("plain.yaml", absl::StrCat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://127.0.0.1:9090", certFile: )", cert, ", keyFile: ", key, R"(}
)"));
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            path + ": warning: backend.certFile is set but backend.url is "
                   "plain http://: the client certificate is never "
                   "presented; use https://\n" +
                path + ": ok (0 metric(s), backend http://127.0.0.1:9090)\n");
}

TEST(CliTest, ValidateConfigNamesFileLineAndFieldAndExitsTwo) {
  std::string path = WriteFile("bad.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://prometheus:9090"}
metrics:
  - name: latency
    query: up
    weight: -1
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, path + ":7:13: metrics[0].weight: must be >= 0\n");
}

TEST(CliTest, BadConfigAtStartExitsTwo) {
  std::string path = WriteFile("typo.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
schedulerNmae: x
)");
  Result r = RunBinary("--config=" + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(path + ":3:1: schedulerNmae: unknown key"),
            std::string::npos)
      << r.output;
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunBinary("validate-config").exit_code, 2);
  EXPECT_EQ(RunBinary("no-such-command").exit_code, 2);
  EXPECT_EQ(RunBinary("-v=lots").exit_code, 2);
  EXPECT_EQ(RunBinary("validate-config /nonexistent.yaml").exit_code, 2);
  EXPECT_EQ(RunBinary("--no-such-flag").exit_code, 2);
}

// The secure port's flags are checked before anything is served or asked
// of a server (--master points nowhere).
TEST(CliTest, BadSecurePortFlagsExitTwoNamingTheFlag) {
  const std::string base = "--master=http://127.0.0.1:1 --leader-elect=false ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--secure-port=70000", "--secure-port=70000: must be in 0..65535"},
      {"--secure-port=10259 --bind-address=pod-ip",
       "--bind-address=pod-ip: not an IP address"},
      {"--secure-port=10259 --tls-cert-file=/tls.crt",
       "--tls-cert-file and --tls-private-key-file go together"},
      {"--tls-cert-file=/tls.crt --tls-private-key-file=/tls.key",
       "--tls-cert-file is set but --secure-port is 0 (off)"},
      {"--secure-port=10259 --tls-cert-file=/nonexistent.crt "
       "--tls-private-key-file=/nonexistent.key",
       "--tls-cert-file /nonexistent.crt: "},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunBinary(base + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos)
        << args << "\n" << r.output;
  }
}

// The malformed configurations of tests/testdata/config/bad/ (each with
// its message in a .want file; tests/config/bad_config_test.cc checks the
// loader over them): the binary rejects each one with exactly that message
// and exit code 2, from validate-config and at start-up, before it talks to
// any server.
TEST(CliTest, EveryBadConfigExitsTwoWithItsMessage) {
  std::string dir = testing::TestDataPath("config/bad");
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (absl::EndsWith(e->d_name, ".yaml")) {
        files.push_back(dir + "/" + e->d_name);
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u) << dir;
  for (const std::string& path : files) {
    std::string want = absl::StrReplaceAll(
        absl::StripTrailingAsciiWhitespace(testing::ReadFileOrDie(
            std::string(absl::StripSuffix(path, ".yaml")) + ".want")),
        {{"FILE", path}});
    Result validate = RunBinary("validate-config " + path);
    EXPECT_EQ(validate.exit_code, 2) << path;
    EXPECT_EQ(validate.output, want + "\n");
    // --master points nowhere: the configuration must fail first.
    Result start =
        RunBinary("--config=" + path + " --master=http://127.0.0.1:1");
    EXPECT_EQ(start.exit_code, 2) << path << "\n" << start.output;
    EXPECT_EQ(start.output, want + "\n");
  }
}

// A configuration written for the cluster names files that exist only
// there; --check-files=false checks the YAML alone.
TEST(CliTest, CheckFilesFalseSkipsTheFiles) {
  std::string path =
      testing::TestDataPath("config/bad/missing-token-file.yaml");
  Result r = RunBinary("validate-config --check-files=false " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // (Its token goes over plain http:// to another host: said too.)
  EXPECT_EQ(r.output, path + ": warning: backend.url is plain http:// to "
                             "prometheus: the bearer token is sent in clear "
                             "text; use https://\n" +
                          path + ": ok (0 metric(s), backend "
                                 "http://prometheus:9090)\n");
}

TEST(CliTest, ValidateConfigWarnsWhenTlsVerificationIsOff) {
  std::string path = WriteFile("insecure.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "https://prometheus:9090", insecureSkipVerify: true}
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            path + ": warning: backend.insecureSkipVerify is true: the metrics "
                   "backend's TLS certificate is not verified; anyone on the "
                   "path can read its token and forge its answers\n" +
                path + ": ok (0 metric(s), backend https://prometheus:9090)\n");
}

// A token sent over plain http:// to another host is legal, and worth a
// warning; to loopback (a sidecar, a port-forward) it is not.
TEST(CliTest, ValidateConfigWarnsOfATokenInClearText) {
  std::string token = WriteFile("token", "t0ken");
  std::string path = WriteFile("cleartext.yaml", absl::StrCat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://prometheus.monitoring:9090", tokenFile: )", token, R"(}
)"));
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            path + ": warning: backend.url is plain http:// to "
                   "prometheus.monitoring: the bearer token is sent in clear "
                   "text; use https://\n" +
                path + ": ok (0 metric(s), backend "
                       "http://prometheus.monitoring:9090)\n");

  std::string local = WriteFile("local.yaml", absl::StrCat(R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://127.0.0.1:9090", tokenFile: )", token, R"(}
)"));
  r = RunBinary("validate-config " + local);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(absl::StrContains(r.output, "warning")) << r.output;
}

}  // namespace
}  // namespace ms
