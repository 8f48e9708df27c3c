#include "kube/cluster_config.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "tests/testing/exec_plugin.h"
#include "tests/testing/http_server.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;
using ::ms::testing::CountRuns;
using ::ms::testing::PrintCredential;
using ::ms::testing::TokenCredential;
using ::ms::testing::WriteScript;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat(
               "kubeconfig-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
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

// $KUBECONFIG's files, each in a folder of its own (their relative paths
// are their own), merged as kubectl merges them.
class KubeconfigListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("kubeconfig-list-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
    std::ofstream(dir_ / "b/token") << "b-file-token\n";
    a_ = Write("a/config", R"(
current-context: a-ctx
clusters:
- name: shared-cluster
  cluster: {server: "https://a.example:6443", certificate-authority: ca.crt}
users:
- name: shared-user
  user: {token: a-token}
contexts:
- name: a-ctx
  context: {cluster: shared-cluster, user: shared-user}
- name: shared-ctx
  context: {cluster: shared-cluster, user: shared-user}
)");
    b_ = Write("b/config", R"(
current-context: b-ctx
clusters:
- name: shared-cluster
  cluster: {server: "https://b.example:6443"}
- name: b-cluster
  cluster: {server: "https://b.example:7443", certificate-authority: ca.crt}
users:
- name: shared-user
  user: {token: b-token}
- name: b-user
  user: {tokenFile: token}
contexts:
- name: shared-ctx
  context: {cluster: b-cluster, user: b-user}
- name: b-ctx
  context: {cluster: b-cluster, user: b-user}
- name: mixed-ctx
  context: {cluster: b-cluster, user: shared-user}
)");
    no_current_ = Write("none", "clusters: []\n");
    empty_ = Write("empty", "");
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Missing() const { return (dir_ / "missing").string(); }

  fs::path dir_;
  std::string a_, b_, no_current_, empty_;
};

TEST_F(KubeconfigListTest, TheFirstFileToSetAValueWins) {
  struct Case {
    std::vector<std::string> files;
    std::string context;  // --context
    std::string server, ca_file, token;
  };
  const std::string a_ca = (dir_ / "a/ca.crt").string();
  const std::string b_ca = (dir_ / "b/ca.crt").string();
  for (const Case& c : {
           // a's current-context, a's cluster and user.
           Case{{a_, b_}, "", "https://a.example:6443", a_ca, "a-token"},
           Case{{b_, a_}, "", "https://b.example:7443", b_ca, "b-file-token"},
           // The first file to *set* current-context; empty files are
           // fine.
           Case{{no_current_, empty_, b_, a_}, "", "https://b.example:7443",
                b_ca, "b-file-token"},
           // A context both define: the first file's, whole.
           Case{{a_, b_}, "shared-ctx", "https://a.example:6443", a_ca,
                "a-token"},
           Case{{b_, a_}, "shared-ctx", "https://b.example:7443", b_ca,
                "b-file-token"},
           // A context of the second file: its cluster and user by name,
           // whichever file defines them first (shared-user: a's).
           Case{{a_, b_}, "b-ctx", "https://b.example:7443", b_ca,
                "b-file-token"},
           Case{{a_, b_}, "mixed-ctx", "https://b.example:7443", b_ca,
                "a-token"},
           // Missing files are skipped, as kubectl skips them.
           Case{{Missing(), b_}, "", "https://b.example:7443", b_ca,
                "b-file-token"},
       }) {
    std::string what = absl::StrCat(absl::StrJoin(c.files, ":"), " --context=",
                                    c.context);
    absl::StatusOr<ClusterConfig> config =
        LoadKubeconfigFiles(c.files, c.context);
    ASSERT_TRUE(config.ok()) << what << ": " << config.status();
    EXPECT_EQ(config->server, c.server) << what;
    EXPECT_EQ(config->tls.ca_file, c.ca_file) << what;
    EXPECT_EQ(config->BearerToken(), c.token) << what;
  }
}

TEST_F(KubeconfigListTest, Errors) {
  absl::Status s = LoadKubeconfigFiles({Missing(), Missing() + "2"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), absl::StrCat(Missing(), ":", Missing(),
                                      "2: none of these kubeconfigs exists"));

  s = LoadKubeconfigFiles({a_, b_}, "nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), absl::StrCat(a_, ":", b_,
                                      ": contexts has no entry named "
                                      "\"nope\""));

  // One bad file fails the whole list, naming it.
  std::string bad = Write("bad", "clusters: [\n");
  s = LoadKubeconfigFiles({a_, bad}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), bad + ":")) << s.message();

  std::string no_server = Write("no-server", R"(
clusters: [{name: c, cluster: {}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)");
  s = LoadKubeconfigFiles({a_, no_server}, "x").status();
  EXPECT_EQ(s.message(), no_server + ": cluster \"c\" has no server");
}

TEST(SplitKubeconfigListTest, DropsEmptyItemsAndRepeats) {
  EXPECT_EQ(SplitKubeconfigList("/a:/b::/a:/c:"),
            (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(SplitKubeconfigList(""), std::vector<std::string>{});
  EXPECT_EQ(SplitKubeconfigList(":"), std::vector<std::string>{});
}

TEST_F(KubeconfigListTest, ResolveTakesFlagThenListThenMasterThenCluster) {
  fs::path sa = dir_ / "root/var/run/secrets/kubernetes.io/serviceaccount";
  fs::create_directories(sa);
  std::ofstream(sa / "token") << "sa-token";
  const std::string root = (dir_ / "root").string();
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  struct Case {
    ConfigSources sources;
    std::string server, token;
  };
  for (const Case& c : {
           // --kubeconfig wins over $KUBECONFIG and the cluster.
           Case{{.kubeconfig = b_, .kubeconfig_env = a_},
                "https://b.example:7443", "b-file-token"},
           Case{{.kubeconfig = b_, .context = "shared-ctx"},
                "https://b.example:7443", "b-file-token"},
           // $KUBECONFIG wins over the cluster, --context picks in it.
           Case{{.kubeconfig_env = a_ + ":" + b_},
                "https://a.example:6443", "a-token"},
           Case{{.kubeconfig_env = a_ + ":" + b_, .context = "b-ctx"},
                "https://b.example:7443", "b-file-token"},
           // --master replaces the server of the kubeconfig (the same
           // origin keeps the credentials) ...
           Case{{.kubeconfig_env = a_,
                 .master = "https://A.example:6443/prefix"},
                "https://A.example:6443/prefix", "a-token"},
           // ... or, alone, is used without credentials.
           Case{{.master = "http://127.0.0.1:8001"}, "http://127.0.0.1:8001",
                ""},
           // A $KUBECONFIG whose files are all missing is passed over.
           Case{{.kubeconfig_env = Missing(),
                 .master = "http://127.0.0.1:8001"},
                "http://127.0.0.1:8001", ""},
           Case{{.kubeconfig_env = Missing(), .in_cluster_root = root},
                "https://10.96.0.1:443", "sa-token"},
           Case{{.in_cluster_root = root}, "https://10.96.0.1:443",
                "sa-token"},
       }) {
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(c.sources);
    ASSERT_TRUE(config.ok()) << c.server << ": " << config.status();
    EXPECT_EQ(config->server, c.server);
    EXPECT_EQ(config->BearerToken(), c.token) << c.server;
  }
  unsetenv("KUBERNETES_SERVICE_HOST");

  absl::Status s = ResolveClusterConfig({.kubeconfig_env = Missing(),
                                         .in_cluster_root = root})
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            absl::StrCat("not running in a cluster: KUBERNETES_SERVICE_HOST "
                         "and KUBERNETES_SERVICE_PORT are not set ($KUBECONFIG "
                         "names no file that exists: ",
                         Missing(), ")"));
  s = ResolveClusterConfig({.context = "b-ctx", .master = "http://h:1"})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--context b-ctx: no kubeconfig to take it from; give "
            "--kubeconfig or $KUBECONFIG");
  // An explicit --kubeconfig must exist.
  s = ResolveClusterConfig({.kubeconfig = Missing(), .kubeconfig_env = a_})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  s = ResolveClusterConfig({.kubeconfig_env = a_, .context = "nope"})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

// A kubeconfig whose user `u` is `user` (YAML) and whose cluster is `server`.
std::string KubeconfigWithUser(const std::string& server,
                               const std::string& user) {
  return absl::StrCat(R"(current-context: x
clusters:
- name: c
  cluster: {server: ")", server, R"(", certificate-authority-data: )",
                      absl::Base64Escape("CA PEM"), R"(}
contexts:
- name: x
  context: {cluster: c, user: u}
users:
- name: u
  user:
)", user);
}

TEST_F(KubeconfigTest, ExecSection) {
  std::string path = Write("kc", KubeconfigWithUser("https://10.0.0.1:6443", R"(
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: bin/plugin
      args: [get-token, --cluster, "a b"]
      env:
      - {name: REGION, value: eu-west-1}
      - {name: EMPTY}
      installHint: apt install plugin
      provideClusterInfo: true
      interactiveMode: IfAvailable
)"));
  absl::StatusOr<ClusterConfig> config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_NE(config->exec, nullptr);
  const ExecConfig& exec = config->exec->config();
  EXPECT_EQ(exec.api_version, kExecApiV1);
  EXPECT_EQ(exec.command, (dir_ / "bin/plugin").string());  // its folder's
  EXPECT_EQ(exec.args,
            (std::vector<std::string>{"get-token", "--cluster", "a b"}));
  EXPECT_EQ(exec.env, (std::vector<std::pair<std::string, std::string>>{
                          {"REGION", "eu-west-1"}, {"EMPTY", ""}}));
  EXPECT_EQ(exec.install_hint, "apt install plugin");
  EXPECT_TRUE(exec.provide_cluster_info);
  EXPECT_EQ(exec.cluster_server, "https://10.0.0.1:6443");
  EXPECT_EQ(exec.cluster_ca_pem, "CA PEM");
  EXPECT_EQ(config->BearerToken(), "");

  // A bare name is looked up in $PATH; v1beta1 needs no interactiveMode.
  path = Write("kc2", KubeconfigWithUser("https://h", R"(
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: plugin}
)"));
  config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_NE(config->exec, nullptr);
  EXPECT_EQ(config->exec->config().command, "plugin");
  EXPECT_FALSE(config->exec->config().provide_cluster_info);

  // A static token wins, as in kubectl: the plugin is not used.
  path = Write("kc3", KubeconfigWithUser("https://h", R"(
    token: static
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: plugin}
)"));
  config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->exec, nullptr);
  EXPECT_EQ(config->BearerToken(), "static");
}

TEST_F(KubeconfigTest, ExecSectionErrors) {
  struct Case {
    const char* exec;
    const char* message;  // after "FILE: user \"u\": "
  };
  for (const Case& c : {
           Case{"exec: plugin", "exec must be a mapping"},
           Case{"exec: {command: p}", "exec.apiVersion is missing"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
                "command: p}",
                "exec.apiVersion \"client.authentication.k8s.io/v1alpha1\" is "
                "not client.authentication.k8s.io/v1 or "
                "client.authentication.k8s.io/v1beta1"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1beta1}",
                "exec.command is missing"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1, "
                "command: p}",
                "exec.interactiveMode is missing "
                "(client.authentication.k8s.io/v1 needs Never or "
                "IfAvailable)"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1, "
                "command: p, interactiveMode: Always}",
                "exec.interactiveMode Always needs a terminal, and the plugin "
                "never has one here; use Never or IfAvailable"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1, "
                "command: p, interactiveMode: Sometimes}",
                "exec.interactiveMode \"Sometimes\" is not Never, IfAvailable "
                "or Always"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                "command: p, args: a}",
                "exec.args must be a list"},
           Case{"exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                "command: p, env: [{value: v}]}",
                "exec.env[0].name is missing or has '='"},
       }) {
    std::string path =
        Write("kc", KubeconfigWithUser("https://h", absl::StrCat("    ", c.exec,
                                                                 "\n")));
    absl::Status s = LoadKubeconfig(path).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.exec;
    EXPECT_EQ(s.message(), absl::StrCat(path, ": user \"u\": ", c.message));
  }
}

// Through the client: the plugin's token goes out, a 401 runs the plugin
// again and the request is sent once more.
class ExecThroughClientTest : public KubeconfigTest {
 protected:
  void SetUp() override {
    KubeconfigTest::SetUp();
    absl::StatusOr<std::unique_ptr<testing::TestHttpServer>> server =
        testing::TestHttpServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    // Only "good" is a token this apiserver knows.
    server_->SetHandler([](const testing::RecordedRequest& r) {
      if (r.Header("authorization") != "Bearer good") {
        return testing::HttpAnswer{
            401, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                 R"("message":"Unauthorized","reason":"Unauthorized",)"
                 R"("code":401})"};
      }
      return testing::HttpAnswer{
          200, R"({"kind":"NodeList","metadata":{},"items":[]})"};
    });
  }
  // A kubeconfig for the server whose user's plugin runs `script`.
  ClusterConfig Load(const std::string& script) {
    plugin_ = (dir_ / "plugin").string();
    WriteScript(plugin_, script);
    absl::StatusOr<ClusterConfig> config = LoadKubeconfig(
        Write("kc", KubeconfigWithUser(server_->url(), absl::StrCat(R"(
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: )", plugin_, R"(
      interactiveMode: Never
)"))));
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? *config : ClusterConfig{};
  }
  std::vector<std::string> Authorizations() const {
    std::vector<std::string> out;
    for (const auto& r : server_->requests()) {
      out.push_back(r.Header("authorization"));
    }
    return out;
  }
  std::string Counter() const { return (dir_ / "runs").string(); }

  std::unique_ptr<testing::TestHttpServer> server_;
  std::string plugin_;
};

TEST_F(ExecThroughClientTest, A401RunsThePluginAgainAndRetriesOnce) {
  // The first token it prints has been revoked; the next one is good.
  ClusterConfig config = Load(
      CountRuns(Counter()) +
      "if [ $n = 1 ]; then t=revoked; else t=good; fi\n" +
      PrintCredential(TokenCredential("$t")));
  ASSERT_NE(config.exec, nullptr);
  KubeClient client(config);
  absl::Status listed = client.ListNodes({}).status();
  EXPECT_TRUE(listed.ok()) << listed;
  EXPECT_EQ(Authorizations(),
            (std::vector<std::string>{"Bearer revoked", "Bearer good"}));
  EXPECT_EQ(config.exec->runs(), 2);
  // Cached from now on.
  listed = client.ListNodes({}).status();
  EXPECT_TRUE(listed.ok()) << listed;
  EXPECT_EQ(config.exec->runs(), 2);
  EXPECT_EQ(server_->request_count(), 3);
}

TEST_F(ExecThroughClientTest, ATokenRefusedTwiceIsUnauthenticated) {
  ClusterConfig config = Load(CountRuns(Counter()) +
                              PrintCredential(TokenCredential("bad-$n")));
  KubeClient client(config);
  absl::Status listed = client.ListNodes({}).status();
  EXPECT_EQ(listed.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(std::string(listed.message()),
            absl::StrCat("the apiserver rejected the credential of exec "
                         "plugin ",
                         plugin_, ": HTTP 401 Unauthorized: Unauthorized"));
  EXPECT_EQ(Authorizations(),
            (std::vector<std::string>{"Bearer bad-1", "Bearer bad-2"}));
  EXPECT_EQ(config.exec->runs(), 2);

  // A watch is not retried: it returns, and the next request gets the
  // plugin's next credential.
  server_->ClearRequests();
  std::atomic<bool> cancel{false};
  absl::Status watched = client.WatchNodes(
      {}, "1", [](WatchEvent<Node>&) { return true; }, &cancel);
  EXPECT_EQ(watched.code(), absl::StatusCode::kUnauthenticated) << watched;
  EXPECT_TRUE(absl::StrContains(watched.message(), plugin_)) << watched;
  EXPECT_EQ(Authorizations(), (std::vector<std::string>{"Bearer bad-3"}));
  listed = client.ListNodes({}).status();
  EXPECT_EQ(Authorizations(),
            (std::vector<std::string>{"Bearer bad-3", "Bearer bad-4",
                                      "Bearer bad-5"}));
}

TEST_F(ExecThroughClientTest, APluginThatFailsFailsTheRequestUnsent) {
  ClusterConfig config = Load("echo 'not logged in' >&2\nexit 1\n");
  KubeClient client(config);
  absl::Status listed = client.ListNodes({}).status();
  EXPECT_EQ(listed.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(std::string(listed.message()),
            absl::StrCat("exec plugin ", plugin_,
                         ": failed with exit code 1: not logged in"));
  EXPECT_EQ(server_->request_count(), 0);
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
  config.exec = std::make_shared<ExecCredentialPlugin>(
      ExecConfig{.command = "plugin"});
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
  EXPECT_NE(config.exec, nullptr);
}

void ExpectDropped(const ClusterConfig& config) {
  EXPECT_EQ(config.BearerToken(), "");
  EXPECT_EQ(config.token, "");
  EXPECT_EQ(config.token_file, nullptr);
  EXPECT_EQ(config.exec, nullptr);
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
