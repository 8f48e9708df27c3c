#include "kube/cluster_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "tests/testing/http_server.h"

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

// A kubeconfig's config with every kind of credential and TLS setting.
ClusterConfig WithCredentials(const std::string& server) {
  ClusterConfig config;
  config.server = server;
  config.token = "secret-token";
  config.tls.ca_pem = "CA PEM";
  config.tls.ca_file = "/pki/ca.crt";
  config.tls.client_cert_pem = "CERT PEM";
  config.tls.client_cert_file = "/pki/cert.pem";
  config.tls.client_key_pem = "KEY PEM";
  config.tls.client_key_file = "/pki/key.pem";
  config.tls.insecure_skip_verify = true;
  return config;
}

void ExpectKept(const ClusterConfig& config) {
  EXPECT_EQ(config.BearerToken(), "secret-token");
  EXPECT_EQ(config.tls.ca_pem, "CA PEM");
  EXPECT_EQ(config.tls.ca_file, "/pki/ca.crt");
  EXPECT_EQ(config.tls.client_cert_pem, "CERT PEM");
  EXPECT_EQ(config.tls.client_cert_file, "/pki/cert.pem");
  EXPECT_EQ(config.tls.client_key_pem, "KEY PEM");
  EXPECT_EQ(config.tls.client_key_file, "/pki/key.pem");
  EXPECT_TRUE(config.tls.insecure_skip_verify);
}

void ExpectDropped(const ClusterConfig& config) {
  EXPECT_EQ(config.BearerToken(), "");
  EXPECT_EQ(config.token, "");
  EXPECT_EQ(config.token_file, nullptr);
  EXPECT_EQ(config.tls.ca_pem, "");
  EXPECT_EQ(config.tls.ca_file, "");
  EXPECT_EQ(config.tls.client_cert_pem, "");
  EXPECT_EQ(config.tls.client_cert_file, "");
  EXPECT_EQ(config.tls.client_key_pem, "");
  EXPECT_EQ(config.tls.client_key_file, "");
  EXPECT_FALSE(config.tls.insecure_skip_verify);
}

TEST(OverrideServerTest, TheSameOriginKeepsEverything) {
  struct Case {
    const char* kubeconfig;
    const char* url;
    const char* server;  // the result's
  };
  for (const Case& c : {
           Case{"https://127.0.0.1:6443", "https://127.0.0.1:6443/",
                "https://127.0.0.1:6443"},
           Case{"https://127.0.0.1:6443", "HTTPS://127.0.0.1:6443/prefix",
                "HTTPS://127.0.0.1:6443/prefix"},
           Case{"https://k8s.example.com", "https://K8S.example.com:443",
                "https://K8S.example.com:443"},
           Case{"http://proxy:80/", "http://proxy", "http://proxy"},
           Case{"https://[fd00::1]:6443", "https://[FD00::1]:6443",
                "https://[FD00::1]:6443"},
       }) {
    absl::StatusOr<ClusterConfig> config =
        OverrideServer(WithCredentials(c.kubeconfig), c.url, false);
    ASSERT_TRUE(config.ok()) << c.url << ": " << config.status();
    EXPECT_EQ(config->server, c.server);
    ExpectKept(*config);
  }
}

TEST(OverrideServerTest, AnotherOriginGetsNoCredentialsUnlessAsked) {
  for (const char* url : {
           "https://10.0.0.2:6443",         // another host
           "https://127.0.0.1:6444",        // another port
           "http://127.0.0.1:6443",         // another scheme
           "https://127.0.0.1",             // the default port, 443
           "https://127.0.0.1.evil.example:6443",
           "https://[::1]:6443",
       }) {
    absl::StatusOr<ClusterConfig> config = OverrideServer(
        WithCredentials("https://127.0.0.1:6443"), url, false);
    ASSERT_TRUE(config.ok()) << url << ": " << config.status();
    EXPECT_EQ(config->server, url);
    ExpectDropped(*config);

    config = OverrideServer(WithCredentials("https://127.0.0.1:6443"), url,
                            /*keep_credentials=*/true);
    ASSERT_TRUE(config.ok()) << url << ": " << config.status();
    EXPECT_EQ(config->server, url);
    ExpectKept(*config);
  }
}

TEST(OverrideServerTest, ATokenFileIsDroppedToo) {
  std::string path = ::testing::TempDir() + "/override-token";
  std::ofstream(path) << "file-token\n";
  absl::StatusOr<std::unique_ptr<TokenFile>> file = TokenFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ClusterConfig kubeconfig;
  kubeconfig.server = "https://127.0.0.1:6443";
  kubeconfig.token_file = std::move(*file);
  ASSERT_EQ(kubeconfig.BearerToken(), "file-token");
  absl::StatusOr<ClusterConfig> config =
      OverrideServer(kubeconfig, "http://127.0.0.1:8001", false);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token_file, nullptr);
  EXPECT_EQ(config->BearerToken(), "");
}

TEST(OverrideServerTest, RejectsWhatIsNotAServerUrl) {
  for (const char* url : {
           "127.0.0.1:6443", "ftp://127.0.0.1", "https://", "https:///api",
           "https://user:password@127.0.0.1:6443",
           "https://127.0.0.1:6443@10.0.0.2", "https://127.0.0.1:0",
           "https://127.0.0.1:65536", "https://127.0.0.1:+80",
           "https://127.0.0.1:", "https://[::1", "https://[::1]x",
       }) {
    EXPECT_EQ(OverrideServer(WithCredentials("https://127.0.0.1:6443"), url,
                             false)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << url;
  }
}

// Through the client: what a server on another origin receives.
TEST(OverrideServerTest, TheOtherServerReceivesNoToken) {
  absl::StatusOr<std::unique_ptr<testing::TestHttpServer>> server =
      testing::TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetAnswer(200, R"({"kind":"NodeList","metadata":{},"items":[]})");
  auto authorization = [&](const ClusterConfig& config) {
    (*server)->ClearRequests();
    absl::Status listed = KubeClient(config).ListNodes({}).status();
    EXPECT_TRUE(listed.ok()) << listed;
    std::vector<testing::RecordedRequest> requests = (*server)->requests();
    return requests.size() == 1 ? requests[0].Header("authorization")
                                : "no request";
  };
  ClusterConfig kubeconfig;
  kubeconfig.server = "https://10.0.0.1:6443";
  kubeconfig.token = "secret-token";
  EXPECT_EQ(authorization(OverrideServer(kubeconfig, (*server)->url(), false)
                              .value()),
            "");
  EXPECT_EQ(authorization(OverrideServer(kubeconfig, (*server)->url(), true)
                              .value()),
            "Bearer secret-token");
  kubeconfig.server = (*server)->url() + "/";
  EXPECT_EQ(authorization(OverrideServer(kubeconfig, (*server)->url(), false)
                              .value()),
            "Bearer secret-token");
}

}  // namespace
}  // namespace ms::kube
