// Exec credential plugins against the real kube-apiserver of tests/testenv:
// the token a plugin prints is accepted, or refused with an error that says
// so; a revoked token is replaced after the 401; a client certificate
// printed by a plugin authenticates too.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/json.h"
#include "common/token_file.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "tests/testing/exec_plugin.h"
#include "tests/testing/paths.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;
using ::ms::testing::CountRuns;
using ::ms::testing::PrintCredential;
using ::ms::testing::TokenCredential;
using ::ms::testing::WriteScript;

class ExecCredentialIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/exec-it-", getpid(), "-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // The testenv's cluster, through a kubeconfig whose user is a plugin
  // running `script`.
  ClusterConfig Load(const std::string& script) {
    plugin_ = dir_ + "/plugin";
    WriteScript(plugin_, script);
    std::string path = dir_ + "/kubeconfig";
    std::ofstream(path) << absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: testenv
clusters:
- name: testenv
  cluster:
    server: )", env_.server(), R"(
    certificate-authority: )", env_.dir(), R"(/pki/ca.crt
contexts:
- name: testenv
  context: {cluster: testenv, user: plugin}
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: )", plugin_, R"(
      interactiveMode: Never
)");
    absl::StatusOr<ClusterConfig> config = LoadKubeconfig(path);
    EXPECT_TRUE(config.ok()) << config.status();
    if (!config.ok()) return {};
    EXPECT_NE(config->exec, nullptr);
    return *config;
  }

  // Shell text printing the testenv admin's token.
  std::string AdminToken() const {
    return absl::StrCat("$(cat '", env_.dir(), "/admin.token')");
  }
  std::string Counter() const { return dir_ + "/runs"; }

  testing::Testenv env_;
  std::string dir_;
  std::string plugin_;
};

TEST_F(ExecCredentialIntegrationTest, ThePluginsTokenListsNodes) {
  ClusterConfig config = Load(CountRuns(Counter()) +
                              PrintCredential(TokenCredential(AdminToken())));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::StatusOr<ObjectList<Node>> nodes = client.ListNodes({});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_FALSE(nodes->resource_version.empty());
  EXPECT_EQ(config.exec->runs(), 1);
}

TEST_F(ExecCredentialIntegrationTest, ATokenTheApiserverRefusesIsNamed) {
  ClusterConfig config = Load(
      PrintCredential(TokenCredential("not-a-token-this-apiserver-knows")));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::Status s = client.ListNodes({}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(s.message(),
            absl::StrCat("the apiserver rejected the credential of exec "
                         "plugin ",
                         plugin_, ": HTTP 401 Unauthorized: Unauthorized"));
  // Once at first, once more after the 401.
  EXPECT_EQ(config.exec->runs(), 2);
}

TEST_F(ExecCredentialIntegrationTest, ARevokedTokenIsReplacedAfterThe401) {
  ClusterConfig config = Load(
      CountRuns(Counter()) +
      "if [ $n = 1 ]; then t=revoked; else t=" + AdminToken() + "; fi\n" +
      PrintCredential(TokenCredential("$t")));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::Status listed = client.ListNodes({}).status();
  EXPECT_TRUE(listed.ok()) << listed;
  EXPECT_EQ(config.exec->runs(), 2);
}

// The same for a request that does not wait (an Event, as the recorder
// sends it): the 401 is answered on the I/O thread by sending it again.
TEST_F(ExecCredentialIntegrationTest, ARevokedTokenIsReplacedWithoutWaiting) {
  ClusterConfig config = Load(
      CountRuns(Counter()) +
      "if [ $n = 1 ]; then t=revoked; else t=" + AdminToken() + "; fi\n" +
      PrintCredential(TokenCredential("$t")));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::Notification answered;
  absl::Status status;
  client.CreateEventAsync(
      {.pod_namespace = "default",
       .pod_name = absl::StrCat("exec-async-", getpid()),
       .pod_uid = "00000000-0000-0000-0000-000000000000",
       .type = "Normal",
       .reason = "Scheduled",
       .action = "Binding",
       .message = "an Event sent without waiting",
       .reporting_component = "metrics-scheduler",
       .reporting_instance = "exec-test"},
      [&](absl::Status s) {
        status = std::move(s);
        answered.Notify();
      });
  answered.WaitForNotification();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(config.exec->runs(), 2);
}

// The apiserver trusts client certificates signed by the testenv's CA
// (--client-ca-file); the plugin prints one for a system:masters user.
TEST_F(ExecCredentialIntegrationTest, AClientCertificateFromThePlugin) {
  std::string key = dir_ + "/client.key";
  std::string cert = dir_ + "/client.crt";
  std::string command = absl::StrCat(
      "cd '", dir_, "' && openssl req -new -newkey ec -pkeyopt "
      "ec_paramgen_curve:prime256v1 -nodes -keyout client.key "
      "-subj '/O=system:masters/CN=exec-plugin-user' -out client.csr "
      ">openssl.log 2>&1 && openssl x509 -req -in client.csr -CA '",
      env_.dir(), "/pki/ca.crt' -CAkey '", env_.dir(),
      "/pki/ca.key' -set_serial 7 -days 1 -out client.crt >>openssl.log 2>&1");
  // openssl is one of scripts/install-deps.sh's packages.
  int rc = std::system(command.c_str());
  ASSERT_EQ(rc, 0) << testing::ReadFileOrDie(dir_ + "/openssl.log");
  absl::StatusOr<std::string> cert_pem = ReadFile(cert);
  absl::StatusOr<std::string> key_pem = ReadFile(key);
  ASSERT_TRUE(cert_pem.ok() && key_pem.ok());
  std::ofstream(dir_ + "/credential.json")
      << R"({"apiVersion":"client.authentication.k8s.io/v1",)"
      << R"("kind":"ExecCredential","status":{"clientCertificateData":)"
      << JsonQuote(*cert_pem) << R"(,"clientKeyData":)" << JsonQuote(*key_pem)
      << "}}";

  ClusterConfig config =
      Load(absl::StrCat("cat '", dir_, "/credential.json'\n"));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::StatusOr<ObjectList<Node>> nodes = client.ListNodes({});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(config.exec->runs(), 1);
}

}  // namespace
}  // namespace ms::kube
