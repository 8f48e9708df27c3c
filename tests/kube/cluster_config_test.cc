#include "kube/cluster_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(KubeconfigTest, InlineDataAndToken) {
  std::string path = Write("kc", R"(apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: )" + absl::Base64Escape("CA PEM") + R"(
users:
- name: admin
  user:
    token: secret-token
    client-certificate-data: )" + absl::Base64Escape("CERT PEM") + R"(
    client-key-data: )" + absl::Base64Escape("KEY PEM") + R"(
contexts:
- name: admin
  context: {cluster: local, user: admin}
)");
  absl::StatusOr<ClusterConfig> config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");  // trailing / removed
  EXPECT_EQ(config->tls.ca_pem, "CA PEM");
  EXPECT_EQ(config->tls.client_cert_pem, "CERT PEM");
  EXPECT_EQ(config->tls.client_key_pem, "KEY PEM");
  EXPECT_FALSE(config->tls.insecure_skip_verify);
  EXPECT_EQ(config->BearerToken(), "secret-token");
}

TEST_F(KubeconfigTest, RelativePathsAndTokenFileAndExplicitContext) {
  Write("token", "file-token\n");
  std::string path = Write("kc", R"(
current-context: other
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    tokenFile: token
    client-certificate: /abs/cert.pem
    client-key: key.pem
contexts:
- name: other
  context: {cluster: missing, user: u}
- name: mine
  context: {cluster: c, user: u}
)");
  absl::StatusOr<ClusterConfig> config = LoadKubeconfig(path, "mine");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tls.ca_file, (dir_ / "pki/ca.crt").string());
  EXPECT_EQ(config->tls.client_cert_file, "/abs/cert.pem");
  EXPECT_EQ(config->tls.client_key_file, (dir_ / "key.pem").string());
  EXPECT_TRUE(config->tls.insecure_skip_verify);
  EXPECT_EQ(config->BearerToken(), "file-token");  // white space trimmed
}

TEST_F(KubeconfigTest, Errors) {
  EXPECT_EQ(LoadKubeconfig((dir_ / "absent").string()).status().code(),
            absl::StatusCode::kNotFound);

  std::string missing_context = Write("a", R"(
current-context: nope
contexts: []
)");
  absl::Status s = LoadKubeconfig(missing_context).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(),
            missing_context + ": contexts has no entry named \"nope\"");

  std::string bad_yaml = Write("b", "clusters: [\n");
  s = LoadKubeconfig(bad_yaml).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().substr(0, bad_yaml.size() + 1), bad_yaml + ":");

  std::string bad_base64 = Write("c", R"(
current-context: x
clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: "!!!"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  s = LoadKubeconfig(bad_base64).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            bad_base64 + ": certificate-authority-data is not valid base64");

  std::string no_server = Write("d", R"(
current-context: x
clusters: [{name: c, cluster: {}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  EXPECT_EQ(LoadKubeconfig(no_server).status().message(),
            no_server + ": cluster \"c\" has no server");
}

TEST_F(KubeconfigTest, InClusterReadsServiceAccountAndRotatedToken) {
  fs::path sa = dir_ / "var/run/secrets/kubernetes.io/serviceaccount";
  fs::create_directories(sa);
  std::ofstream(sa / "token") << "first";
  std::ofstream(sa / "ca.crt") << "ca";
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  absl::StatusOr<ClusterConfig> config = InClusterConfig(dir_.string());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->tls.ca_file, (sa / "ca.crt").string());
  EXPECT_EQ(config->BearerToken(), "first");

  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig(dir_.string()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(KubeconfigTest, MalformedYamlNamesThePlace) {
  std::string path = Write("comma", "# kubeconfig\n ,\n");
  absl::Status s = LoadKubeconfig(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()), path + ":2:2: unexpected ','");
  path = Write("control", "apiVersion: v1\nkind: \x01" "Config\n");
  s = LoadKubeconfig(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            path + ":2:7: control character 0x01 is not allowed in YAML");
}

TEST(PlainUrlTest, AcceptsHttpAndRejectsOthers) {
  absl::StatusOr<ClusterConfig> config = PlainUrl("http://127.0.0.1:8001/");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, "http://127.0.0.1:8001");
  EXPECT_EQ(config->BearerToken(), "");
  EXPECT_EQ(PlainUrl("127.0.0.1:8001").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ms::kube
