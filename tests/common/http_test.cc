// HttpClient::Send, the requests that do not wait, against a loopback
// server: answers, failures, a `done` that sends again, and the destructor
// waiting for what was sent.
#include "common/http.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/http_server.h"
#include "tests/testing/loopback.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ms::testing::HttpAnswer;
using ms::testing::RecordedRequest;
using ms::testing::TestHttpServer;

// The answers `done` got, in arrival order.
class Answers {
 public:
  HttpClient::Done Add() {
    return [this](absl::StatusOr<HttpResponse> r) {
      absl::MutexLock lock(&mu_);
      answers_.push_back(std::move(r));
    };
  }
  // Waits until `n` answers have come.
  std::vector<absl::StatusOr<HttpResponse>> Await(size_t n) {
    absl::MutexLock lock(&mu_);
    auto arrived = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return answers_.size() >= n;
    };
    mu_.Await(absl::Condition(&arrived));
    return answers_;
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return answers_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::StatusOr<HttpResponse>> answers_ ABSL_GUARDED_BY(mu_);
};

class HttpSendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestHttpServer>> s = TestHttpServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    server_->SetHandler([](const RecordedRequest& r) {
      return HttpAnswer{200, absl::StrCat("{\"echo\":\"", r.body, "\"}")};
    });
  }
  HttpRequest Post(const std::string& body) {
    HttpRequest r;
    r.method = "POST";
    r.url = server_->url() + "/things";
    r.body = body;
    return r;
  }

  std::unique_ptr<TestHttpServer> server_;
};

TEST_F(HttpSendTest, EveryRequestSentIsAnswered) {
  HttpClient client;
  Answers answers;
  constexpr int kRequests = 40;
  for (int i = 0; i < kRequests; ++i) {
    client.Send(Post(absl::StrCat("n", i)), answers.Add());
  }
  std::vector<std::string> bodies;
  for (const absl::StatusOr<HttpResponse>& a : answers.Await(kRequests)) {
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->status, 200);
    EXPECT_EQ(a->content_type, "application/json");
    bodies.push_back(a->body);
  }
  std::vector<std::string> want;
  for (int i = 0; i < kRequests; ++i) {
    want.push_back(absl::StrCat("{\"echo\":\"n", i, "\"}"));
  }
  EXPECT_THAT(bodies, ::testing::UnorderedElementsAreArray(want));
  EXPECT_EQ(server_->request_count(), kRequests);
}

TEST_F(HttpSendTest, AnHttpErrorIsAnAnswer) {
  server_->SetAnswer(429, "{\"reason\":\"TooManyRequests\"}");
  HttpClient client;
  Answers answers;
  client.Send(Post("x"), answers.Add());
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->status, 429);
  EXPECT_EQ(a->body, "{\"reason\":\"TooManyRequests\"}");
}

TEST_F(HttpSendTest, NoServerIsUnavailable) {
  const int port = ms::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  HttpClient client;
  Answers answers;
  HttpRequest r = Post("x");
  r.url = absl::StrCat("http://127.0.0.1:", port, "/things");
  client.Send(r, answers.Add());
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  EXPECT_TRUE(absl::IsUnavailable(a.status())) << a.status();
}

TEST_F(HttpSendTest, ASlowServerTimesOut) {
  absl::Notification release;
  server_->SetHandler([&](const RecordedRequest&) {
    release.WaitForNotification();
    return HttpAnswer{200, "{}"};
  });
  HttpClient client;
  Answers answers;
  HttpRequest r = Post("x");
  r.timeout = absl::Milliseconds(200);
  client.Send(r, answers.Add());
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  release.Notify();
  EXPECT_TRUE(absl::IsDeadlineExceeded(a.status())) << a.status();
}

TEST_F(HttpSendTest, DoneMaySendAgain) {
  HttpClient client;
  Answers answers;
  HttpClient::Done second = answers.Add();
  client.Send(Post("first"), [&](absl::StatusOr<HttpResponse> a) {
    ASSERT_TRUE(a.ok()) << a.status();
    client.Send(Post(a->body.substr(0, 1) + "second"), second);
  });
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->body, "{\"echo\":\"{second\"}");
  EXPECT_EQ(server_->request_count(), 2);
}

TEST_F(HttpSendTest, TheDestructorWaitsForWhatWasSent) {
  Answers answers;
  {
    HttpClient client;
    for (int i = 0; i < 5; ++i) client.Send(Post("x"), answers.Add());
  }
  EXPECT_EQ(answers.size(), 5u);
  EXPECT_EQ(server_->request_count(), 5);
}

// A request whose deadline has passed when the I/O thread comes to it is
// not sent: it fails as never sent, and the server sees nothing.
TEST_F(HttpSendTest, ARequestPastItsDeadlineIsNotSent) {
  HttpClient client;
  Answers answers;
  HttpRequest r = Post("x");
  r.deadline = absl::Now() - absl::Milliseconds(1);
  client.Send(r, answers.Add());
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  EXPECT_EQ(a.status().code(), absl::StatusCode::kCancelled) << a.status();
  EXPECT_TRUE(IsNotSent(a.status())) << a.status();
  EXPECT_EQ(server_->request_count(), 0);
  // Do() alike.
  absl::StatusOr<HttpResponse> d = client.Do(r);
  EXPECT_TRUE(IsNotSent(d.status())) << d.status();
  EXPECT_EQ(server_->request_count(), 0);
}

// The deadline counts from when the request was queued: time spent waiting
// for a busy I/O thread (here, a `done` that blocks, which `done` must not
// do) is taken from it, and once it is gone the request is not sent.
TEST_F(HttpSendTest, TheDeadlineCountsTheTimeQueuedBehindTheIoThread) {
  HttpClient client;
  Answers answers;
  absl::Notification in_done, release;
  client.Send(Post("busy"), [&](absl::StatusOr<HttpResponse>) {
    in_done.Notify();
    release.WaitForNotification();
  });
  in_done.WaitForNotification();
  HttpRequest r = Post("queued");
  r.timeout = absl::Seconds(30);
  r.deadline = absl::Now() + absl::Milliseconds(200);
  client.Send(r, answers.Add());
  ASSERT_TRUE(ms::testing::WaitFor([&] { return absl::Now() > r.deadline; }));
  release.Notify();
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  EXPECT_TRUE(IsNotSent(a.status())) << a.status();
  EXPECT_EQ(server_->request_count(), 1);
}

// A deadline sooner than the timeout bounds the request.
TEST_F(HttpSendTest, TheDeadlineBoundsTheTimeout) {
  absl::Notification release;
  server_->SetHandler([&](const RecordedRequest&) {
    // Answers in time for the timeout, not for the deadline.
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
    return HttpAnswer{200, "{}"};
  });
  HttpClient client;
  Answers answers;
  HttpRequest r = Post("x");
  r.timeout = absl::Seconds(60);
  r.deadline = absl::Now() + absl::Milliseconds(300);
  client.Send(r, answers.Add());
  absl::StatusOr<HttpResponse> a = answers.Await(1)[0];
  release.Notify();
  EXPECT_TRUE(absl::IsDeadlineExceeded(a.status())) << a.status();
}

}  // namespace
}  // namespace ms
