// DelegatedAuth: who may read the secure port's /metrics, decided by the
// apiserver, as kube-scheduler decides for its own secure port.
//
// For each request to a path that is not always allowed:
//   1. the bearer token of `Authorization: Bearer <token>` is sent in a
//      TokenReview; no token, or one the apiserver does not authenticate,
//      is kUnauthenticated (HTTP 401);
//   2. a user in a privileged group (system:masters) is allowed;
//   3. otherwise a SubjectAccessReview asks whether that user may
//      `<verb>` the non-resource URL `<path>` (GET /metrics: "get"
//      "/metrics", which RBAC grants through nonResourceURLs); a refusal is
//      kForbidden (HTTP 403).
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
// The reviews go through an AccessReviewer: the KubeClient in the
// scheduler, a fake in unit tests. Thread-safe: Check may be called from
// any number of threads; two requests that miss the cache at once may
// both review.
#ifndef METRICS_SCHEDULER_SCHEDULER_DELEGATED_AUTH_H_
#define METRICS_SCHEDULER_SCHEDULER_DELEGATED_AUTH_H_

#include <cstddef>
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
  // Entries per cache; when full, expired ones go, then the soonest to
  // expire.
  size_t max_entries = 4096;
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
};

struct AuthDecision {
  AuthVerdict verdict = AuthVerdict::kUnauthenticated;
  // For the response body and the log; never holds the token.
  std::string message;
};

// The HTTP status of a verdict: 200, 401, 403 or 503.
int HttpStatusOf(AuthVerdict verdict);

class DelegatedAuth {
 public:
  DelegatedAuth(AccessReviewer& reviewer, const Clock& clock,
                DelegatedAuthOptions options = {});

  // Whether a request may go on. `authorization`: the request's
  // Authorization header ("" when absent); `method`: its HTTP method.
  AuthDecision Check(absl::string_view authorization, absl::string_view path,
                     absl::string_view method);

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

   private:
    const size_t max_entries_;
    std::map<std::string, Entry<V>> entries_;
  };

  AuthDecision Authenticate(absl::string_view authorization,
                            kube::UserInfo* user);
  AuthDecision Authorize(const kube::UserInfo& user, absl::string_view path,
                         absl::string_view method);

  AccessReviewer& reviewer_;
  const Clock& clock_;
  const DelegatedAuthOptions options_;
  absl::Mutex mu_;
  Cache<kube::TokenReview> tokens_ ABSL_GUARDED_BY(mu_);
  Cache<kube::AccessReview> accesses_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_DELEGATED_AUTH_H_
