#include "scheduler/serve/delegated_auth.h"

#include <openssl/evp.h>

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kube/client.h"

namespace ms {
namespace {

// The cache key of a token: its SHA-256, so that the cache holds no
// credential.
std::string TokenKey(absl::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(token.data(), token.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

// The token of "Bearer <token>" (the scheme in any case, as kube reads
// it); "" when the header holds none.
absl::string_view BearerToken(absl::string_view authorization) {
  absl::string_view header = absl::StripAsciiWhitespace(authorization);
  constexpr absl::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme)) {
    return "";
  }
  return absl::StripAsciiWhitespace(header.substr(kScheme.size()));
}

}  // namespace

absl::StatusOr<kube::TokenReview> KubeAccessReviewer::ReviewToken(
    const std::string& token) {
  return client_.ReviewToken(token);
}

absl::StatusOr<kube::AccessReview> KubeAccessReviewer::ReviewAccess(
    const kube::NonResourceAccess& access) {
  return client_.ReviewAccess(access);
}

int HttpStatusOf(AuthVerdict verdict) {
  switch (verdict) {
    case AuthVerdict::kAllowed:
      return 200;
    case AuthVerdict::kUnauthenticated:
      return 401;
    case AuthVerdict::kForbidden:
      return 403;
    case AuthVerdict::kUnavailable:
      return 503;
    case AuthVerdict::kThrottled:
      return 429;
  }
  return 500;
}

template <typename V>
const V* DelegatedAuth::Cache<V>::Find(const std::string& key,
                                       absl::Time now) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.expires <= now) return nullptr;
  return &it->second.value;
}

template <typename V>
void DelegatedAuth::Cache<V>::Put(const std::string& key, V value,
                                  absl::Time expires, absl::Time now) {
  if (max_entries_ == 0) return;
  if (entries_.size() >= max_entries_ && !entries_.contains(key)) {
    std::erase_if(entries_,
                  [now](const auto& kv) { return kv.second.expires <= now; });
    if (entries_.size() >= max_entries_) {
      entries_.erase(std::min_element(
          entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
            return a.second.expires < b.second.expires;
          }));
    }
  }
  entries_.insert_or_assign(key, Entry<V>{std::move(value), expires});
}

DelegatedAuth::DelegatedAuth(AccessReviewer& reviewer, const Clock& clock,
                             DelegatedAuthOptions options)
    : reviewer_(reviewer),
      clock_(clock),
      options_(std::move(options)),
      tokens_(options_.max_entries),
      accesses_(options_.max_entries),
      known_(options_.max_entries),
      budget_(options_.new_token_review_burst),
      budget_at_(clock_.Monotonic()) {}

AuthDecision DelegatedAuth::Check(absl::string_view authorization,
                                  absl::string_view path,
                                  absl::string_view method,
                                  const kube::UserInfo* certificate_user) {
  for (const std::string& open : options_.always_allow_paths) {
    if (path == open) return {AuthVerdict::kAllowed, ""};
  }
  if (certificate_user != nullptr) {
    return Authorize(*certificate_user, path, method);
  }
  kube::UserInfo user;
  AuthDecision authenticated = Authenticate(authorization, &user);
  if (authenticated.verdict != AuthVerdict::kAllowed) return authenticated;
  return Authorize(user, path, method);
}

int64_t DelegatedAuth::token_reviews() const {
  absl::MutexLock lock(&mu_);
  return token_reviews_;
}

int64_t DelegatedAuth::throttled() const {
  absl::MutexLock lock(&mu_);
  return throttled_;
}

bool DelegatedAuth::MayReview(const std::string& key) {
  const absl::Time now = clock_.Now();
  if (known_.Find(key, now) != nullptr) return true;
  const absl::Duration at = clock_.Monotonic();
  if (at > budget_at_) {
    budget_ = std::min<double>(
        options_.new_token_review_burst,
        budget_ + absl::ToDoubleSeconds(at - budget_at_) *
                      options_.new_token_reviews_per_second);
    budget_at_ = at;
  }
  if (budget_ < 1) return false;
  budget_ -= 1;
  return true;
}

AuthDecision DelegatedAuth::Authenticate(absl::string_view authorization,
                                         kube::UserInfo* user) {
  absl::string_view token = BearerToken(authorization);
  if (token.empty()) {
    return {AuthVerdict::kUnauthenticated, "Unauthorized: no bearer token"};
  }
  const std::string key = TokenKey(token);
  std::optional<kube::TokenReview> review;
  {
    absl::MutexLock lock(&mu_);
    if (const kube::TokenReview* cached = tokens_.Find(key, clock_.Now())) {
      review = *cached;
    } else if (!MayReview(key)) {
      ++throttled_;
      return {AuthVerdict::kThrottled,
              absl::StrCat("Too many requests: more than ",
                           options_.new_token_review_burst,
                           " tokens not seen before to review at once (",
                           options_.new_token_reviews_per_second,
                           " a second after that); retry later")};
    } else {
      ++token_reviews_;
    }
  }
  if (!review.has_value()) {
    absl::StatusOr<kube::TokenReview> answer =
        reviewer_.ReviewToken(std::string(token));
    if (!answer.ok()) {
      return {AuthVerdict::kUnavailable,
              absl::StrCat("cannot review the token: ",
                           answer.status().message())};
    }
    review = *std::move(answer);
    absl::Time now = clock_.Now();
    absl::MutexLock lock(&mu_);
    tokens_.Put(key, *review, now + options_.token_ttl, now);
    if (review->authenticated) {
      known_.Put(key, true, now + options_.known_token_ttl, now);
    } else {
      known_.Erase(key);
    }
  }
  if (!review->authenticated) {
    return {AuthVerdict::kUnauthenticated, "Unauthorized: invalid token"};
  }
  *user = std::move(review->user);
  return {AuthVerdict::kAllowed, ""};
}

AuthDecision DelegatedAuth::Authorize(const kube::UserInfo& user,
                                      absl::string_view path,
                                      absl::string_view method) {
  for (const std::string& group : user.groups) {
    if (std::find(options_.privileged_groups.begin(),
                  options_.privileged_groups.end(),
                  group) != options_.privileged_groups.end()) {
      return {AuthVerdict::kAllowed, ""};
    }
  }
  kube::NonResourceAccess access{.user = user,
                                 .path = std::string(path),
                                 .verb = absl::AsciiStrToLower(method)};
  // The request body says everything the answer depends on.
  const std::string key = kube::SubjectAccessReviewBody(access);
  std::optional<kube::AccessReview> review;
  {
    absl::MutexLock lock(&mu_);
    if (const kube::AccessReview* cached = accesses_.Find(key, clock_.Now())) {
      review = *cached;
    }
  }
  if (!review.has_value()) {
    absl::StatusOr<kube::AccessReview> answer = reviewer_.ReviewAccess(access);
    if (!answer.ok()) {
      return {AuthVerdict::kUnavailable,
              absl::StrCat("cannot review the access: ",
                           answer.status().message())};
    }
    review = *std::move(answer);
    absl::Time now = clock_.Now();
    absl::MutexLock lock(&mu_);
    accesses_.Put(key, *review,
                  now + (review->allowed ? options_.allowed_ttl
                                         : options_.denied_ttl),
                  now);
  }
  if (!review->allowed) {
    return {AuthVerdict::kForbidden,
            absl::StrCat("Forbidden: user \"", user.username,
                         "\" may not ", access.verb, " path \"", path, "\"")};
  }
  return {AuthVerdict::kAllowed, ""};
}

}  // namespace ms
