// Delegated authentication and authorisation: the TokenReview and
// SubjectAccessReview objects through which a server that is not the
// apiserver asks the apiserver who a bearer token belongs to, and whether
// that user may do something. kube components (kube-scheduler's secure
// port among them) guard their /metrics this way; scheduler/ does too
// (scheduler/serve/delegated_auth.h).
//
// This file holds the wire format only: the request bodies and their
// decoding. KubeClient::ReviewToken and ReviewAccess send them.
// Pure functions; thread-safe.
#ifndef METRICS_SCHEDULER_KUBE_REVIEW_H_
#define METRICS_SCHEDULER_KUBE_REVIEW_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ms::kube {

inline constexpr char kTokenReviewsPath[] =
    "/apis/authentication.k8s.io/v1/tokenreviews";
inline constexpr char kSubjectAccessReviewsPath[] =
    "/apis/authorization.k8s.io/v1/subjectaccessreviews";

// Who a token belongs to (a TokenReview's status.user).
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  friend bool operator==(const UserInfo&, const UserInfo&) = default;
};

// A TokenReview's status. `authenticated` false: the token is not valid
// (expired, revoked, unknown); `error` may say why.
struct TokenReview {
  bool authenticated = false;
  UserInfo user;
  std::string error;
};

// A SubjectAccessReview's status. `allowed` false means "no opinion or
// denied" alike: either way the request is refused.
struct AccessReview {
  bool allowed = false;
  bool denied = false;
  std::string reason;
  std::string evaluation_error;
};

// What is asked of a SubjectAccessReview: a non-resource request (a URL
// path and a lowercase HTTP verb, "get" for GET), by `user`.
struct NonResourceAccess {
  UserInfo user;
  std::string path;
  std::string verb;
};

// The POST bodies (authentication.k8s.io/v1 TokenReview,
// authorization.k8s.io/v1 SubjectAccessReview).
std::string TokenReviewBody(absl::string_view token);
std::string SubjectAccessReviewBody(const NonResourceAccess& access);

// The `status` of the answers; other fields are ignored. InvalidArgument
// when the text is not a JSON object of the expected shape.
absl::StatusOr<TokenReview> DecodeTokenReview(absl::string_view json);
absl::StatusOr<AccessReview> DecodeAccessReview(absl::string_view json);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_REVIEW_H_
