// DelegatedAuth (scheduler/serve/delegated_auth.h) over a fake reviewer that
// records the reviews asked and answers from tables, with a fake clock for
// the cache's TTLs.
#include "scheduler/serve/delegated_auth.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

class FakeReviewer final : public AccessReviewer {
 public:
  absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) override {
    absl::MutexLock lock(&mu_);
    tokens_asked.push_back(token);
    if (!up) return absl::UnavailableError("apiserver down");
    auto it = users.find(token);
    if (it == users.end()) return kube::TokenReview{.error = "unknown"};
    return kube::TokenReview{.authenticated = true, .user = it->second};
  }
  absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) override {
    absl::MutexLock lock(&mu_);
    accesses_asked.push_back(access);
    if (!up) return absl::UnavailableError("apiserver down");
    bool ok = allowed.count(access.user.username + " " + access.verb + " " +
                            access.path) > 0;
    return kube::AccessReview{.allowed = ok};
  }

  bool up = true;
  std::map<std::string, kube::UserInfo> users;  // token -> user
  std::set<std::string> allowed;                // "user verb path"
  std::vector<std::string> tokens_asked;
  std::vector<kube::NonResourceAccess> accesses_asked;

 private:
  absl::Mutex mu_;
};

class DelegatedAuthTest : public ::testing::Test {
 protected:
  DelegatedAuthTest() {
    reviewer_.users["reader-token"] = {.username = "reader",
                                       .groups = {"system:authenticated"}};
    reviewer_.users["other-token"] = {.username = "other"};
    reviewer_.users["admin-token"] = {.username = "admin",
                                      .groups = {"system:masters"}};
    reviewer_.allowed.insert("reader get /metrics");
  }

  AuthVerdict Get(const std::string& authorization,
                  const std::string& path = "/metrics") {
    return auth_.Check(authorization, path, "GET").verdict;
  }

  FakeReviewer reviewer_;
  FakeClock clock_;
  DelegatedAuth auth_{reviewer_, clock_};
};

TEST_F(DelegatedAuthTest, VerdictsAndTheirHttpStatus) {
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(Get(""), AuthVerdict::kUnauthenticated);
  EXPECT_EQ(Get("Basic cmVhZGVyOng="), AuthVerdict::kUnauthenticated);
  EXPECT_EQ(Get("Bearer "), AuthVerdict::kUnauthenticated);
  EXPECT_EQ(Get("Bearer wrong-token"), AuthVerdict::kUnauthenticated);
  EXPECT_EQ(Get("Bearer other-token"), AuthVerdict::kForbidden);
  // The scheme in any case, as kube reads it.
  EXPECT_EQ(Get("bearer reader-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(HttpStatusOf(AuthVerdict::kAllowed), 200);
  EXPECT_EQ(HttpStatusOf(AuthVerdict::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(AuthVerdict::kForbidden), 403);
  EXPECT_EQ(HttpStatusOf(AuthVerdict::kUnavailable), 503);
}

TEST_F(DelegatedAuthTest, ProbesAreOpenWithoutAnyReview) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    EXPECT_EQ(Get("", path), AuthVerdict::kAllowed) << path;
    EXPECT_EQ(Get("Bearer wrong-token", path), AuthVerdict::kAllowed) << path;
  }
  EXPECT_TRUE(reviewer_.tokens_asked.empty());
  // Only those exact paths.
  EXPECT_EQ(Get("", "/healthz/extra"), AuthVerdict::kUnauthenticated);
}

TEST_F(DelegatedAuthTest, AsksForTheRequestsPathAndLowercaseVerb) {
  EXPECT_EQ(auth_.Check("Bearer reader-token", "/debug", "GET").verdict,
            AuthVerdict::kForbidden);
  ASSERT_EQ(reviewer_.accesses_asked.size(), 1u);
  const kube::NonResourceAccess& asked = reviewer_.accesses_asked[0];
  EXPECT_EQ(asked.path, "/debug");
  EXPECT_EQ(asked.verb, "get");
  EXPECT_EQ(asked.user, reviewer_.users["reader-token"]);
}

TEST_F(DelegatedAuthTest, PrivilegedGroupNeedsNoAccessReview) {
  EXPECT_EQ(Get("Bearer admin-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(reviewer_.tokens_asked.size(), 1u);
  EXPECT_TRUE(reviewer_.accesses_asked.empty());
}

TEST_F(DelegatedAuthTest, AnswersAreCachedForTheirTtl) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
    EXPECT_EQ(Get("Bearer other-token"), AuthVerdict::kForbidden);
    EXPECT_EQ(Get("Bearer wrong-token"), AuthVerdict::kUnauthenticated);
  }
  // One review each: three tokens, two users authorised.
  EXPECT_EQ(reviewer_.tokens_asked.size(), 3u);
  EXPECT_EQ(reviewer_.accesses_asked.size(), 2u);

  // The grant is revoked and the bad token becomes good: the cache still
  // answers until 10 s have passed...
  reviewer_.allowed.clear();
  reviewer_.users["wrong-token"] = {.username = "reader"};
  clock_.Advance(absl::Seconds(9));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(Get("Bearer wrong-token"), AuthVerdict::kUnauthenticated);
  EXPECT_EQ(reviewer_.tokens_asked.size(), 3u);
  // ...and then asks again.
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kForbidden);
  EXPECT_EQ(Get("Bearer wrong-token"), AuthVerdict::kForbidden);
  EXPECT_EQ(reviewer_.tokens_asked.size(), 5u);
}

TEST_F(DelegatedAuthTest, EachTokenIsReviewedOnItsOwn) {
  // Another token of the same user is reviewed itself.
  reviewer_.users["reader-token-2"] = reviewer_.users["reader-token"];
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(Get("Bearer reader-token-2"), AuthVerdict::kAllowed);
  EXPECT_EQ(reviewer_.tokens_asked,
            (std::vector<std::string>{"reader-token", "reader-token-2"}));
  // The same user asking the same thing: one access review.
  EXPECT_EQ(reviewer_.accesses_asked.size(), 1u);
}

TEST_F(DelegatedAuthTest, FailedReviewsAreUnavailableAndNotCached) {
  reviewer_.up = false;
  AuthDecision down = auth_.Check("Bearer reader-token", "/metrics", "GET");
  EXPECT_EQ(down.verdict, AuthVerdict::kUnavailable);
  EXPECT_NE(down.message.find("apiserver down"), std::string::npos)
      << down.message;
  EXPECT_EQ(down.message.find("reader-token"), std::string::npos);
  reviewer_.up = true;
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  // The token reviewed again; the failed access review not remembered.
  EXPECT_EQ(reviewer_.tokens_asked.size(), 2u);
  reviewer_.up = false;
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kUnavailable);
}

TEST_F(DelegatedAuthTest, ABadTokenSentAgainIsReviewedOnce) {
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(Get("Bearer the-same-bad-token"), AuthVerdict::kUnauthenticated);
  }
  EXPECT_EQ(reviewer_.tokens_asked.size(), 1u);
  EXPECT_EQ(auth_.token_reviews(), 1);
}

// Random tokens, each new: the cache cannot stop them; the budget does.
// 1,000 of them at once cost `new_token_review_burst` TokenReviews; the
// rest are refused (429) unasked. Then the budget refills at
// `new_token_reviews_per_second`.
TEST_F(DelegatedAuthTest, MadeUpTokensCostABoundedNumberOfReviews) {
  int unauthenticated = 0;
  int throttled = 0;
  for (int i = 0; i < 1000; ++i) {
    AuthDecision d = auth_.Check(absl::StrCat("Bearer made-up-", i), "/metrics",
                                 "GET");
    unauthenticated += d.verdict == AuthVerdict::kUnauthenticated;
    throttled += d.verdict == AuthVerdict::kThrottled;
    if (d.verdict == AuthVerdict::kThrottled) {
      EXPECT_EQ(d.message,
                "Too many requests: more than 10 tokens not seen before to "
                "review at once (1 a second after that); retry later");
    }
  }
  EXPECT_EQ(reviewer_.tokens_asked.size(), 10u);
  EXPECT_EQ(unauthenticated, 10);
  EXPECT_EQ(throttled, 990);
  EXPECT_EQ(auth_.token_reviews(), 10);
  EXPECT_EQ(auth_.throttled(), 990);
  EXPECT_EQ(HttpStatusOf(AuthVerdict::kThrottled), 429);

  // Three seconds later, three more; a flood over a minute costs at most
  // the burst and a review a second.
  clock_.Advance(absl::Seconds(3));
  for (int i = 1000; i < 1100; ++i) {
    Get(absl::StrCat("Bearer made-up-", i));
  }
  EXPECT_EQ(reviewer_.tokens_asked.size(), 13u);
  for (int second = 0; second < 60; ++second) {
    clock_.Advance(absl::Seconds(1));
    for (int i = 0; i < 100; ++i) {
      Get(absl::StrCat("Bearer minute-", second, "-", i));
    }
  }
  EXPECT_EQ(reviewer_.tokens_asked.size(), 13u + 60u);
}

// A token authenticated before is reviewed again (its cache entry gone)
// outside the budget: a flood does not lock out the clients already
// known. A valid token never seen must wait for the budget, like any.
TEST_F(DelegatedAuthTest, KnownTokensAreReviewedOutsideTheBudget) {
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  clock_.Advance(absl::Seconds(30));  // its cache entry expires
  for (int i = 0; i < 100; ++i) Get(absl::StrCat("Bearer made-up-", i));
  ASSERT_EQ(Get("Bearer made-up-more"), AuthVerdict::kThrottled);
  const size_t asked = reviewer_.tokens_asked.size();
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  EXPECT_EQ(reviewer_.tokens_asked.size(), asked + 1);
  EXPECT_EQ(Get("Bearer other-token"), AuthVerdict::kThrottled);

  // Known for an hour; then it is new again.
  clock_.Advance(absl::Minutes(61));
  for (int i = 0; i < 100; ++i) Get(absl::StrCat("Bearer later-", i));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kThrottled);

  // A token that stops being valid stops being known.
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kAllowed);
  reviewer_.users.erase("reader-token");
  clock_.Advance(absl::Seconds(11));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kUnauthenticated);
  clock_.Advance(absl::Seconds(11));
  for (int i = 0; i < 100; ++i) Get(absl::StrCat("Bearer again-", i));
  EXPECT_EQ(Get("Bearer reader-token"), AuthVerdict::kThrottled);
}

// The user of a verified client certificate is authorised as a token's
// user would be, with no TokenReview; the certificate wins over a token.
TEST_F(DelegatedAuthTest, CertificateUserNeedsNoTokenReview) {
  const kube::UserInfo client{.username = "reader",
                              .groups = {"system:authenticated"}};
  EXPECT_EQ(auth_.Check("", "/metrics", "GET", &client).verdict,
            AuthVerdict::kAllowed);
  EXPECT_EQ(auth_.Check("Bearer wrong-token", "/metrics", "GET", &client)
                .verdict,
            AuthVerdict::kAllowed);
  EXPECT_TRUE(reviewer_.tokens_asked.empty());
  ASSERT_EQ(reviewer_.accesses_asked.size(), 1u);
  EXPECT_EQ(reviewer_.accesses_asked[0].user, client);
  const kube::UserInfo stranger{.username = "stranger"};
  EXPECT_EQ(auth_.Check("Bearer reader-token", "/metrics", "GET", &stranger)
                .verdict,
            AuthVerdict::kForbidden);
  const kube::UserInfo admin{.username = "x", .groups = {"system:masters"}};
  EXPECT_EQ(auth_.Check("", "/filter", "POST", &admin).verdict,
            AuthVerdict::kAllowed);
}

TEST(DelegatedAuthCacheTest, BoundedSize) {
  FakeReviewer reviewer;
  FakeClock clock;
  DelegatedAuth auth(reviewer, clock, {.max_entries = 2});
  for (const char* t : {"a", "b", "c"}) {
    reviewer.users[t] = {.username = t};
    reviewer.allowed.insert(std::string(t) + " get /metrics");
  }
  // Each entry a second apart, so "a" expires first and goes first.
  for (const char* t : {"a", "b", "c"}) {
    EXPECT_EQ(auth.Check(std::string("Bearer ") + t, "/metrics", "GET").verdict,
              AuthVerdict::kAllowed);
    clock.Advance(absl::Seconds(1));
  }
  ASSERT_EQ(reviewer.tokens_asked.size(), 3u);
  // "b" and "c" are held; "a" was dropped to make room and is asked again.
  auth.Check("Bearer c", "/metrics", "GET");
  auth.Check("Bearer b", "/metrics", "GET");
  EXPECT_EQ(reviewer.tokens_asked.size(), 3u);
  auth.Check("Bearer a", "/metrics", "GET");
  EXPECT_EQ(reviewer.tokens_asked.size(), 4u);
  EXPECT_EQ(reviewer.tokens_asked.back(), "a");
}

}  // namespace
}  // namespace ms
