#include "kube/exec_credential.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/token_file.h"
#include "gtest/gtest.h"
#include "tests/testing/exec_plugin.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;
using ::ms::testing::CountRuns;
using ::ms::testing::PrintCredential;
using ::ms::testing::RunsCounted;
using ::ms::testing::TokenCredential;
using ::ms::testing::WriteScript;

TEST(DecodeExecCredentialTest, TokenCertificateAndExpiry) {
  absl::StatusOr<ExecCredential> c = DecodeExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1",
          "kind":"ExecCredential","spec":{"interactive":false},
          "status":{"token":"t0k3n",
                    "expirationTimestamp":"2030-01-02T03:04:05Z"}})",
      kExecApiV1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->token, "t0k3n");
  EXPECT_EQ(c->expiry, absl::FromCivil(absl::CivilSecond(2030, 1, 2, 3, 4, 5),
                                       absl::UTCTimeZone()));

  c = DecodeExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1",
          "kind":"ExecCredential",
          "status":{"clientCertificateData":"CERT\n","clientKeyData":"KEY\n",
                    "expirationTimestamp":null}})",
      kExecApiV1Beta1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->client_cert_pem, "CERT\n");
  EXPECT_EQ(c->client_key_pem, "KEY\n");
  EXPECT_EQ(c->expiry, absl::InfiniteFuture());

  // An offset other than Z.
  c = DecodeExecCredential(
      TokenCredential("t", "2030-01-02T05:04:05+02:00"), kExecApiV1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->expiry, absl::FromCivil(absl::CivilSecond(2030, 1, 2, 3, 4, 5),
                                       absl::UTCTimeZone()));
}

TEST(DecodeExecCredentialTest, RefusesWhatIsNotAUsableCredential) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "stdout is not JSON (Empty: no JSON found)"},
           Case{"[1]", "stdout is not a JSON object"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1beta1",
                    "kind":"ExecCredential","status":{"token":"t"}})",
                "it printed apiVersion "
                "\"client.authentication.k8s.io/v1beta1\"; the kubeconfig "
                "expects \"client.authentication.k8s.io/v1\""},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"Status","status":{"token":"t"}})",
                "it printed kind \"Status\", not ExecCredential"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"ExecCredential"})",
                "its ExecCredential has no status"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"ExecCredential","status":{}})",
                "status has neither a token nor clientCertificateData and "
                "clientKeyData"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"ExecCredential",
                    "status":{"clientCertificateData":"CERT"}})",
                "status has one of clientCertificateData and clientKeyData "
                "without the other"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"ExecCredential","status":{"token":7}})",
                "status.token, clientCertificateData, clientKeyData and "
                "expirationTimestamp must be strings"},
           Case{R"({"apiVersion":"client.authentication.k8s.io/v1",
                    "kind":"ExecCredential",
                    "status":{"token":"t","expirationTimestamp":"soon"}})",
                "status.expirationTimestamp \"soon\" is not an RFC 3339 "
                "time"},
       }) {
    absl::Status s = DecodeExecCredential(c.json, kExecApiV1).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_EQ(std::string(s.message()), c.message) << c.json;
  }
}

TEST(ExecInfoTest, SaysNotInteractiveAndGivesTheClusterWhenAsked) {
  ExecConfig config{.api_version = kExecApiV1Beta1, .command = "p"};
  EXPECT_EQ(ExecInfo(config),
            R"({"kind":"ExecCredential",)"
            R"("apiVersion":"client.authentication.k8s.io/v1beta1",)"
            R"("spec":{"interactive":false}})");
  config.api_version = kExecApiV1;
  config.provide_cluster_info = true;
  config.cluster_server = "https://10.0.0.1:6443";
  config.cluster_ca_pem = "CA PEM";
  config.cluster_insecure_skip_verify = true;
  // base64("CA PEM") = "Q0EgUEVN"
  EXPECT_EQ(ExecInfo(config),
            R"({"kind":"ExecCredential",)"
            R"("apiVersion":"client.authentication.k8s.io/v1",)"
            R"("spec":{"cluster":{"server":"https://10.0.0.1:6443",)"
            R"("insecure-skip-tls-verify":true,)"
            R"("certificate-authority-data":"Q0EgUEVN"},)"
            R"("interactive":false}})");
}

// The plugins are shell scripts in a folder of the test's own.
class ExecPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/exec-plugin-", getpid(), "-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // A plugin whose script is `body`, run with `config`'s other fields.
  ExecConfig Plugin(const std::string& body, ExecConfig config = {}) {
    config.command = dir_ + "/plugin";
    WriteScript(config.command, body);
    return config;
  }
  std::string Counter() const { return dir_ + "/runs"; }
  std::string ReadOrEmpty(const std::string& name) const {
    absl::StatusOr<std::string> text = ReadFile(dir_ + "/" + name);
    return text.ok() ? *text : "";
  }

  std::string dir_;
  FakeClock clock_;  // 2023-11-14T22:13:20Z
};

TEST_F(ExecPluginTest, RunsTheCommandWithArgsAndEnvironmentAndCaches) {
  setenv("MS_EXEC_TEST_OURS", "ours", 1);
  setenv("MS_EXEC_TEST_OVERRIDDEN", "ours", 1);
  ExecConfig config = Plugin(
      absl::StrCat(
          "cd '", dir_, "'\n",
          "printf '%s\\n' \"$@\" >args\n",
          "echo \"$MS_EXEC_TEST_OURS $MS_EXEC_TEST_OVERRIDDEN $GREETING\" "
          ">env\n",
          "env | grep -c '^MS_EXEC_TEST_OVERRIDDEN=' >count\n",
          "printf '%s' \"$KUBERNETES_EXEC_INFO\" >info\n",
          "read line && echo \"stdin: $line\" >stdin\n",
          CountRuns(Counter()), PrintCredential(TokenCredential("token-$n"))),
      {.args = {"get-token", "--cluster=a b"},
       .env = {{"GREETING", "hello world"},
               {"MS_EXEC_TEST_OVERRIDDEN", "theirs"}}});
  ExecCredentialPlugin plugin(config, clock_);
  absl::StatusOr<std::shared_ptr<const ExecCredential>> c = plugin.Get();
  unsetenv("MS_EXEC_TEST_OURS");
  unsetenv("MS_EXEC_TEST_OVERRIDDEN");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->token, "token-1");
  EXPECT_EQ((*c)->expiry, absl::InfiniteFuture());
  EXPECT_EQ(ReadOrEmpty("args"), "get-token\n--cluster=a b\n");
  EXPECT_EQ(ReadOrEmpty("env"), "ours theirs hello world\n");
  EXPECT_EQ(ReadOrEmpty("count"), "1\n");
  EXPECT_EQ(ReadOrEmpty("info"), ExecInfo(config));
  EXPECT_EQ(ReadOrEmpty("stdin"), "");  // /dev/null: nothing to read

  // No expiry: the same credential from now on, without running again.
  clock_.Advance(absl::Hours(24 * 365));
  absl::StatusOr<std::shared_ptr<const ExecCredential>> again = plugin.Get();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *c);
  EXPECT_EQ(plugin.runs(), 1);
  EXPECT_EQ(RunsCounted(Counter()), 1);
}

TEST_F(ExecPluginTest, RunsAgainOnceTheCredentialHasExpired) {
  // Run n expires at 22:(13 + 10n):20, 10 minutes after the fake clock's
  // start for the first run, 20 for the second.
  ExecCredentialPlugin plugin(
      Plugin(CountRuns(Counter()) +
             "m=$((13 + 10 * n))\n" +
             PrintCredential(
                 TokenCredential("token-$n", "2023-11-14T22:${m}:20Z"))),
      clock_);
  auto token = [&plugin]() -> std::string {
    absl::StatusOr<std::shared_ptr<const ExecCredential>> c = plugin.Get();
    return c.ok() ? (*c)->token : c.status().ToString();
  };
  EXPECT_EQ(token(), "token-1");
  clock_.Advance(absl::Minutes(10) - absl::Seconds(1));  // 22:23:19
  EXPECT_EQ(token(), "token-1");
  EXPECT_EQ(plugin.runs(), 1);
  clock_.Advance(absl::Seconds(1));  // 22:23:20: expired
  EXPECT_EQ(token(), "token-2");
  EXPECT_EQ(plugin.runs(), 2);
  clock_.Advance(absl::Minutes(9));  // 22:32:20, before 22:33:20
  EXPECT_EQ(token(), "token-2");
  EXPECT_EQ(plugin.runs(), 2);
  EXPECT_EQ(RunsCounted(Counter()), 2);
}

TEST_F(ExecPluginTest, ARejectedCredentialIsReplacedOnce) {
  ExecCredentialPlugin plugin(
      Plugin(CountRuns(Counter()) +
             PrintCredential(TokenCredential("token-$n"))),
      clock_);
  absl::StatusOr<std::shared_ptr<const ExecCredential>> first = plugin.Get();
  ASSERT_TRUE(first.ok()) << first.status();
  plugin.Reject(*first);
  absl::StatusOr<std::shared_ptr<const ExecCredential>> second = plugin.Get();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->token, "token-2");
  // A request that carried the first one is refused late: the second
  // stays.
  plugin.Reject(*first);
  absl::StatusOr<std::shared_ptr<const ExecCredential>> third = plugin.Get();
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*third, *second);
  EXPECT_EQ(plugin.runs(), 2);
}

TEST_F(ExecPluginTest, ConcurrentCallersShareOneRun) {
  ExecCredentialPlugin plugin(
      Plugin(CountRuns(Counter()) + "sleep 0.2\n" +
             PrintCredential(TokenCredential("token-$n"))),
      clock_);
  std::vector<std::shared_ptr<const ExecCredential>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&plugin, &got, i] {
      absl::StatusOr<std::shared_ptr<const ExecCredential>> c = plugin.Get();
      if (c.ok()) got[i] = *c;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& c : got) {
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c, got[0]);
  }
  EXPECT_EQ(got[0]->token, "token-1");
  EXPECT_EQ(plugin.runs(), 1);
  EXPECT_EQ(RunsCounted(Counter()), 1);
}

// Current() and Reject() never wait for a run in progress (KubeClient's
// I/O thread calls them): during a run they answer from the cache, and the
// run's credential is Current() once it ends.
TEST_F(ExecPluginTest, CurrentAndRejectDoNotWaitForARun) {
  const std::string fetching = dir_ + "/fetching";
  const std::string release = dir_ + "/release";
  ExecCredentialPlugin plugin(
      Plugin(CountRuns(Counter()) +
             absl::StrCat("if [ \"$n\" -ge 2 ]; then\n  : >'", fetching,
                          "'\n  while [ ! -e '", release,
                          "' ]; do sleep 0.02; done\nfi\n") +
             PrintCredential(TokenCredential("token-$n"))),
      clock_);
  absl::StatusOr<std::shared_ptr<const ExecCredential>> first = plugin.Get();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(plugin.Current(), *first);
  plugin.Reject(*first);
  EXPECT_EQ(plugin.Current(), nullptr);
  std::thread second([&] { (void)plugin.Get(); });
  ASSERT_TRUE(ms::testing::WaitFor([&] { return fs::exists(fetching); }));
  absl::Notification answered;
  std::shared_ptr<const ExecCredential> during;
  std::thread reader([&] {
    during = plugin.Current();
    plugin.Reject(*first);
    answered.Notify();
  });
  EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "Current() or Reject() waited for the plugin";
  std::ofstream(release).flush();
  second.join();
  reader.join();
  EXPECT_EQ(during, nullptr);
  ASSERT_NE(plugin.Current(), nullptr);
  EXPECT_EQ(plugin.Current()->token, "token-2");
}

TEST_F(ExecPluginTest, AFailureNamesThePluginAndCarriesItsStderr) {
  ExecCredentialPlugin plugin(
      Plugin(CountRuns(Counter()) +
             "echo 'error: could not reach the token endpoint' >&2\n"
             "echo '{\"partial\":' \n"
             "exit 3\n"),
      clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            absl::StrCat("exec plugin ", dir_,
                         "/plugin: failed with exit code 3: error: could not "
                         "reach the token endpoint"));
  // Not cached: the next call runs it again.
  EXPECT_EQ(plugin.Get().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(plugin.runs(), 2);
  EXPECT_EQ(RunsCounted(Counter()), 2);
}

TEST_F(ExecPluginTest, OnlyTheEndOfALongStderrIsKept) {
  ExecCredentialPlugin plugin(
      Plugin("i=0\n"
             "while [ $i -lt 1000 ]; do\n"
             "  echo 'line of noise' >&2; i=$((i + 1))\n"
             "done\n"
             "echo 'the real reason' >&2\n"
             "exit 1\n"),
      clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  std::string prefix = absl::StrCat("exec plugin ", dir_,
                                    "/plugin: failed with exit code 1: ...");
  EXPECT_TRUE(absl::StartsWith(s.message(), prefix)) << s.message();
  EXPECT_TRUE(absl::EndsWith(s.message(), "line of noise\nthe real reason"))
      << s.message();
  // 4 KiB of stderr at most (less the white space trimmed).
  EXPECT_LE(s.message().size(), prefix.size() + 4096);
  EXPECT_GE(s.message().size(), prefix.size() + 4000);
}

TEST_F(ExecPluginTest, KilledBySignal) {
  ExecCredentialPlugin plugin(Plugin("kill -9 $$\n"), clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            absl::StrCat("exec plugin ", dir_,
                         "/plugin: failed with signal 9 (Killed) (nothing on "
                         "stderr)"));
}

TEST_F(ExecPluginTest, AMissingCommandGivesTheInstallHint) {
  ExecCredentialPlugin on_path(
      {.command = "metrics-scheduler-test-no-such-plugin",
       .install_hint = "Install it with:\n  apt install no-such-plugin\n"},
      clock_);
  absl::Status s = on_path.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "exec plugin metrics-scheduler-test-no-such-plugin: not found on "
            "$PATH: Install it with:\n  apt install no-such-plugin");

  ExecCredentialPlugin by_path({.command = dir_ + "/absent"}, clock_);
  s = by_path.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            absl::StrCat("exec plugin ", dir_, "/absent: not found"));
}

TEST_F(ExecPluginTest, ACommandThatIsNotExecutable) {
  std::string path = dir_ + "/not-executable";
  std::ofstream(path) << "#!/bin/sh\necho hi\n";
  ExecCredentialPlugin plugin({.command = path}, clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), absl::StrCat("exec plugin ", path,
                                      ": cannot be executed (Permission "
                                      "denied)"));
}

TEST_F(ExecPluginTest, APluginThatHangsIsKilled) {
  // A helper it started holds stdout open too: the whole process group
  // goes.
  ExecCredentialPlugin plugin(
      Plugin("sleep 60 &\nsleep 60\n",
             {.timeout = absl::Milliseconds(300)}),
      clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(), absl::StrCat("exec plugin ", dir_,
                                      "/plugin: did not finish within 300ms"));
}

TEST_F(ExecPluginTest, OutputThatIsNotACredential) {
  ExecCredentialPlugin plugin(Plugin("echo 'Token: abc'\n"), clock_);
  absl::Status s = plugin.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(
      s.message(),
      absl::StrCat("exec plugin ", dir_, "/plugin: stdout is not JSON")))
      << s.message();

  // It prints a v1 credential; the kubeconfig says v1beta1.
  ExecCredentialPlugin expects_v1beta1(
      Plugin(PrintCredential(TokenCredential("t")),
             {.api_version = kExecApiV1Beta1}),
      clock_);
  s = expects_v1beta1.Get().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            absl::StrCat("exec plugin ", dir_,
                         "/plugin: it printed apiVersion "
                         "\"client.authentication.k8s.io/v1\"; the kubeconfig "
                         "expects \"client.authentication.k8s.io/v1beta1\""));
}

}  // namespace
}  // namespace ms::kube
