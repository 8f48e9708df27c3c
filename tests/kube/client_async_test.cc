// KubeClient's asynchronous requests (BindAsync, CreateEventAsync) with an
// exec credential plugin that blocks: the I/O thread that carries every
// request never waits for the plugin, and a request whose deadline (fixed
// when it was queued) passes while it waits for a credential is never
// sent. The plugins are shell scripts that block until the test creates a
// file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/http.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kube/client.h"
#include "tests/testing/exec_plugin.h"
#include "tests/testing/http_server.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;
using ::ms::testing::CountRuns;
using ::ms::testing::HttpAnswer;
using ::ms::testing::PrintCredential;
using ::ms::testing::RecordedRequest;
using ::ms::testing::RunsCounted;
using ::ms::testing::TestHttpServer;
using ::ms::testing::TokenCredential;
using ::ms::testing::WaitFor;
using ::ms::testing::WriteScript;

Pod MakePod(const std::string& name) {
  Pod pod;
  pod.namespace_ = "shop";
  pod.name = name;
  pod.uid = "uid-" + name;
  return pod;
}

std::string BindingPath(const std::string& pod) {
  return absl::StrCat("/api/v1/namespaces/shop/pods/", pod, "/binding");
}

constexpr char kCreated[] = R"({"kind":"Status","status":"Success","code":201})";
constexpr char kUnauthorized[] =
    R"({"kind":"Status","status":"Failure","reason":"Unauthorized",)"
    R"("message":"Unauthorized","code":401})";

// One answer to an asynchronous call.
class Answer {
 public:
  KubeClient::Done Done() {
    return [this](absl::Status status) {
      status_ = std::move(status);
      done_.Notify();
    };
  }
  bool Arrived(absl::Duration timeout = absl::Seconds(30)) {
    return done_.WaitForNotificationWithTimeout(timeout);
  }
  bool HasArrived() const { return done_.HasBeenNotified(); }
  // Once Arrived().
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
  absl::Notification done_;
};

// A plugin in a folder of the test's own. Its runs numbered `from` and
// later create `fetching` and then wait until `release` exists before
// printing their token ("token-N" for run N).
class ClientAsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/client-async-", getpid(), "-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    Release();  // a plugin still waiting ends
    fs::remove_all(dir_);
  }

  ClusterConfig Config(const std::string& server, int blocks_from) {
    ExecConfig exec;
    exec.command = dir_ + "/plugin";
    WriteScript(
        exec.command,
        CountRuns(Counter()) +
            absl::StrCat("if [ \"$n\" -ge ", blocks_from, " ]; then\n",
                         "  : >'", Path("fetching"), "'\n",
                         "  while [ ! -e '", Path("release"),
                         "' ]; do sleep 0.02; done\n", "fi\n") +
            PrintCredential(TokenCredential("token-$n")));
    ClusterConfig config;
    config.server = server;
    config.exec = std::make_shared<ExecCredentialPlugin>(exec);
    return config;
  }

  std::string Path(const std::string& name) const {
    return dir_ + "/" + name;
  }
  std::string Counter() const { return Path("runs"); }
  // Waits until a blocking run of the plugin has started.
  bool Fetching() {
    return WaitFor([&] { return fs::exists(Path("fetching")); });
  }
  void Release() { std::ofstream(Path("release")).flush(); }

  std::string dir_;
};

// A fake apiserver answering on cpp-httplib's pool of threads, so that it
// can hold one request while it answers others (TestHttpServer answers one
// at a time). `handler` gets the path and the Authorization header and
// returns the status and body.
class ConcurrentServer {
 public:
  using Handler =
      std::function<std::pair<int, std::string>(const std::string& path,
                                                const std::string& auth)>;
  explicit ConcurrentServer(Handler handler) : handler_(std::move(handler)) {
    server_.Post(".*", [this](const httplib::Request& req,
                              httplib::Response& res) {
      auto [status, body] =
          handler_(req.path, req.get_header_value("Authorization"));
      res.status = status;
      res.set_content(body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~ConcurrentServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_); }

 private:
  const Handler handler_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A 401 makes the plugin run again, and that run blocks: the answers of the
// other requests in flight still arrive meanwhile (the plugin does not run
// on the I/O thread that carries them), and the refused request is sent
// again with the new credential once the plugin prints it.
TEST_F(ClientAsyncTest, ARefusedCredentialIsReplacedOffTheIoThread) {
  absl::Notification answer_held;  // outlives the server
  ConcurrentServer server([&](const std::string& path,
                              const std::string& auth)
                              -> std::pair<int, std::string> {
    if (path == BindingPath("held")) {
      // Answered once the plugin's second run is under way.
      answer_held.WaitForNotificationWithTimeout(absl::Seconds(60));
      return {201, kCreated};
    }
    if (auth == "Bearer token-1") return {401, kUnauthorized};
    return {201, kCreated};
  });
  auto client =
      std::make_unique<KubeClient>(Config(server.url(), /*blocks_from=*/2));
  Answer held, refused;
  client->BindAsync(MakePod("held"), "node-a", absl::Seconds(60),
                    held.Done());
  client->BindAsync(MakePod("refused"), "node-a", absl::Seconds(60),
                    refused.Done());
  ASSERT_TRUE(Fetching());
  answer_held.Notify();
  EXPECT_TRUE(held.Arrived())
      << "the answer to a binding in flight waited for the plugin";
  EXPECT_FALSE(refused.HasArrived());
  Release();
  ASSERT_TRUE(refused.Arrived());
  EXPECT_TRUE(refused.status().ok()) << refused.status();
  if (held.Arrived()) {
    EXPECT_TRUE(held.status().ok()) << held.status();
  }
  EXPECT_EQ(RunsCounted(Counter()), 2);
  client.reset();  // before the server: waits for what it sent
}

// A request queued with a short timeout behind a slow credential fetch is
// not sent once that timeout (counted from when it was queued) has passed:
// it fails as never sent. One queued with time to spare is sent.
TEST_F(ClientAsyncTest, ARequestIsNotSentAfterItsDeadline) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetAnswer(201, kCreated);
  KubeClient client(Config((*server)->url(), /*blocks_from=*/1));
  Answer late, in_time;
  const absl::Duration timeout = absl::Milliseconds(300);
  // Before the change, the caller's thread ran the plugin.
  std::thread caller([&] {
    client.BindAsync(MakePod("late"), "node-a", timeout, late.Done());
  });
  ASSERT_TRUE(Fetching());
  // The call was made by now (its credential is being fetched), so its
  // deadline is at most this + timeout; a loaded machine may have started
  // the caller's thread late.
  const absl::Time queued = absl::Now();
  std::thread second_caller([&] {
    client.CreateEventAsync({.pod_namespace = "shop", .pod_name = "in-time",
                             .type = "Normal", .reason = "Scheduled"},
                            in_time.Done());
  });
  // The plugin answers only once the late request's deadline has passed.
  ASSERT_TRUE(WaitFor([&] { return absl::Now() > queued + timeout; }));
  Release();
  caller.join();
  second_caller.join();
  ASSERT_TRUE(late.Arrived());
  ASSERT_TRUE(in_time.Arrived());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kCancelled)
      << late.status();
  EXPECT_TRUE(IsNotSent(late.status())) << late.status();
  EXPECT_TRUE(absl::StrContains(late.status().message(), "not sent"))
      << late.status();
  EXPECT_TRUE(in_time.status().ok()) << in_time.status();
  std::vector<RecordedRequest> requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].Path(), "/api/v1/namespaces/shop/events");
}

// The blocking calls alike: the plugin runs on the caller's thread, and a
// call whose deadline passed meanwhile is not sent.
TEST_F(ClientAsyncTest, ABlockingBindIsNotSentAfterItsDeadline) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetAnswer(201, kCreated);
  KubeClient client(Config((*server)->url(), /*blocks_from=*/1));
  const absl::Duration timeout = absl::Milliseconds(300);
  absl::Status bound;
  std::thread caller(
      [&] { bound = client.Bind(MakePod("late"), "node-a", timeout); });
  ASSERT_TRUE(Fetching());
  // The call was made by now: its deadline is at most this + timeout.
  const absl::Time queued = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return absl::Now() > queued + timeout; }));
  Release();
  caller.join();
  EXPECT_TRUE(IsNotSent(bound)) << bound;
  EXPECT_EQ((*server)->request_count(), 0);
}

// After a 401, the request waits for the plugin's next credential with the
// deadline it was queued with: when the plugin is slower than that, it is
// not sent again.
TEST_F(ClientAsyncTest, ARefusedRequestKeepsItsDeadline) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server =
      TestHttpServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->SetHandler([](const RecordedRequest& r) {
    return r.Header("authorization") == "Bearer token-1"
               ? HttpAnswer{401, kUnauthorized}
               : HttpAnswer{201, kCreated};
  });
  KubeClient client(Config((*server)->url(), /*blocks_from=*/2));
  Answer refused;
  // Time for the first attempt's 401 on a loaded machine.
  const absl::Duration timeout = absl::Seconds(5);
  client.BindAsync(MakePod("refused"), "node-a", timeout, refused.Done());
  // Its deadline is at most this + timeout.
  const absl::Time queued = absl::Now();
  ASSERT_TRUE(Fetching());
  ASSERT_TRUE(WaitFor([&] { return absl::Now() > queued + timeout; }));
  Release();
  ASSERT_TRUE(refused.Arrived());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kCancelled)
      << refused.status();
  EXPECT_TRUE(IsNotSent(refused.status())) << refused.status();
  EXPECT_EQ((*server)->request_count(), 1);
  EXPECT_EQ(RunsCounted(Counter()), 2);
}

}  // namespace
}  // namespace ms::kube
