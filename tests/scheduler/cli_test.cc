// The binary's command line: --help, validate-config, bad flags and exit
// codes.

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
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"

namespace ms {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Result RunBinary(const std::string& args) {
  const char* dir = std::getenv("MS_BINARY_DIR");
  EXPECT_NE(dir, nullptr) << "run through ctest";
  std::string command =
      std::string(dir ? dir : ".") + "/metrics-scheduler " + args + " 2>&1";
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

TEST(CliTest, ValidateConfigNamesFileLineAndFieldAndExitsTwo) {
  std::string path = WriteFile("bad.yaml", R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {url: "http://prometheus:9090"}
metrics:
  - name: latency
    query: up
    weight: 0
)");
  Result r = RunBinary("validate-config " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, path + ":7:13: metrics[0].weight: must be > 0\n");
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
