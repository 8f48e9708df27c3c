// DelegatedAuth: who may call the secure port (its /metrics) and, with
// --extender-secure, the extender port, decided by the apiserver, as
// kube-scheduler decides for its own secure port.
//
// For each request to a path that is not always allowed:
//   1. who is asking: the user of a client certificate the TLS handshake
//      verified against --client-ca-file (its CN the username, its O the
//      groups, as kube's x509 authenticator reads them), handed in by the
//      server; else the bearer token of `Authorization: Bearer <token>`,
//      sent in a TokenReview. Neither, or a token the apiserver does not
//      authenticate, is kUnauthenticated (HTTP 401);
//   2. a user in a privileged group (system:masters) is allowed;
//   3. otherwise a SubjectAccessReview asks whether that user may
//      `<verb>` the non-resource URL `<path>` (GET /metrics: "get"
//      "/metrics"; POST /filter: "post" "/filter"; RBAC grants them through
//      nonResourceURLs); a refusal is kForbidden (HTTP 403).
// /healthz, /livez and /readyz are always allowed, with or without a token
// (kube's --authorization-always-allow-paths default).
//
// Answers are cached as kube's delegating authenticator and authorizer
// cache them: TokenReviews 10 s (authenticated or not), SubjectAccess
// Reviews 10 s (allowed or not); each cache holds at most `max_entries`.
// Tokens are kept only as their SHA-256. A review that fails (apiserver
// unreachable, an error answer) is kUnavailable (HTTP 503) and is not
// cached: the next request asks again.
//
// The cache stops a token sent again and again; it cannot stop a stream of
// tokens never seen before (random ones), each of which would cost the
// apiserver a TokenReview, and this scheduler's client its share of the
// apiserver's attention that its bindings need. So TokenReviews of tokens
// that are neither cached nor known (authenticated by a review within
// `known_token_ttl`) are budgeted: `new_token_review_burst` at once, then
// `new_token_reviews_per_second`. A request over the budget is kThrottled
// (HTTP 429, Retry-After) without a review. A known token (a scraper whose
// 10 s cache entry expired) is reviewed outside the budget, so a flood of
// made-up tokens cannot lock out the clients already authenticated; only a
// client whose token is new to this replica may have to retry while a flood
// lasts.
//
// The reviews go through an AccessReviewer: the KubeClient in the
// scheduler, a fake in unit tests. Thread-safe: Check may be called from
// any number of threads; two requests that miss the cache at once may
// both review.
#ifndef METRICS_SCHEDULER_SCHEDULER_SERVE_DELEGATED_AUTH_H_
#define METRICS_SCHEDULER_SCHEDULER_SERVE_DELEGATED_AUTH_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kube/review.h"

namespace ms {

namespace kube {
class KubeClient;
}

// Sends reviews to the apiserver. Implementations must be thread-safe.
class AccessReviewer {
 public:
  virtual ~AccessReviewer() = default;
  // The apiserver's answer; a non-OK status when there is none.
  virtual absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) = 0;
  virtual absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) = 0;
};

// The reviewer of the scheduler: the KubeClient's calls, with its identity.
class KubeAccessReviewer final : public AccessReviewer {
 public:
  explicit KubeAccessReviewer(kube::KubeClient& client) : client_(client) {}
  absl::StatusOr<kube::TokenReview> ReviewToken(
      const std::string& token) override;
  absl::StatusOr<kube::AccessReview> ReviewAccess(
      const kube::NonResourceAccess& access) override;

 private:
  kube::KubeClient& client_;
};

struct DelegatedAuthOptions {
  // kube's --authentication-token-webhook-cache-ttl.
  absl::Duration token_ttl = absl::Seconds(10);
  // kube's --authorization-webhook-cache-authorized-ttl and -unauthorized-ttl.
  absl::Duration allowed_ttl = absl::Seconds(10);
  absl::Duration denied_ttl = absl::Seconds(10);
  // Entries per cache (the known tokens too); when full, expired ones go,
  // then the soonest to expire.
  size_t max_entries = 4096;
  // The budget of TokenReviews for tokens neither cached nor known: a
  // token bucket of `new_token_review_burst`, refilled at
  // `new_token_reviews_per_second`. A legitimate client brings a new token
  // rarely (a projected ServiceAccount token is renewed about hourly).
  int new_token_review_burst = 10;
  double new_token_reviews_per_second = 1;
  // How long a token authenticated by a review is known: re-reviewed,
  // when its cache entry expires, outside that budget.
  absl::Duration known_token_ttl = absl::Hours(1);
  // Served to anyone, unauthenticated (exact paths).
  std::vector<std::string> always_allow_paths = {"/healthz", "/livez",
                                                 "/readyz"};
  // Users in these groups are allowed without a SubjectAccessReview.
  std::vector<std::string> privileged_groups = {"system:masters"};
};

enum class AuthVerdict {
  kAllowed,
  kUnauthenticated,  // HTTP 401
  kForbidden,        // HTTP 403
  kUnavailable,      // HTTP 503: a review could not be made
  kThrottled,        // HTTP 429: too many new tokens to review
};

struct AuthDecision {
  AuthVerdict verdict = AuthVerdict::kUnauthenticated;
  // For the response body and the log; never holds the token.
  std::string message;
};

// The HTTP status of a verdict: 200, 401, 403, 503 or 429.
int HttpStatusOf(AuthVerdict verdict);

class DelegatedAuth {
 public:
  DelegatedAuth(AccessReviewer& reviewer, const Clock& clock,
                DelegatedAuthOptions options = {});

  // Whether a request may go on. `authorization`: the request's
  // Authorization header ("" when absent); `method`: its HTTP method;
  // `certificate_user`: the user of the client certificate the TLS
  // handshake verified (null: none), which wins over a token.
  AuthDecision Check(absl::string_view authorization, absl::string_view path,
                     absl::string_view method,
                     const kube::UserInfo* certificate_user = nullptr);

  // TokenReviews sent, and requests refused over the budget, so far.
  int64_t token_reviews() const;
  int64_t throttled() const;

 private:
  template <typename V>
  struct Entry {
    V value;
    absl::Time expires;
  };
  // A bounded map whose entries expire.
  template <typename V>
  class Cache {
   public:
    explicit Cache(size_t max_entries) : max_entries_(max_entries) {}
    const V* Find(const std::string& key, absl::Time now) const;
    void Put(const std::string& key, V value, absl::Time expires,
             absl::Time now);
    void Erase(const std::string& key) { entries_.erase(key); }

   private:
    const size_t max_entries_;
    std::map<std::string, Entry<V>> entries_;
  };

  AuthDecision Authenticate(absl::string_view authorization,
                            kube::UserInfo* user);
  // Takes one review from the budget unless the token is known; false
  // when the budget is spent.
  bool MayReview(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  AuthDecision Authorize(const kube::UserInfo& user, absl::string_view path,
                         absl::string_view method);

  AccessReviewer& reviewer_;
  const Clock& clock_;
  const DelegatedAuthOptions options_;
  mutable absl::Mutex mu_;
  Cache<kube::TokenReview> tokens_ ABSL_GUARDED_BY(mu_);
  Cache<kube::AccessReview> accesses_ ABSL_GUARDED_BY(mu_);
  // Tokens (SHA-256) a review authenticated, for known_token_ttl.
  Cache<bool> known_ ABSL_GUARDED_BY(mu_);
  // The budget: reviews left, as of `budget_at_` (Clock::Monotonic).
  double budget_ ABSL_GUARDED_BY(mu_);
  absl::Duration budget_at_ ABSL_GUARDED_BY(mu_);
  int64_t token_reviews_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t throttled_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_SERVE_DELEGATED_AUTH_H_
