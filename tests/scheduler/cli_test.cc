// The binary's command line: --help, validate-config, bad flags and exit
// codes.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace ms
