// Fuzzes the decoders of the apiserver's TokenReview and
// SubjectAccessReview answers (kube/review.h), which decide who may read
// the secure port.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "kube/review.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view body(reinterpret_cast<const char*>(data), size);
  size_t total = 0;
  auto token = ms::kube::DecodeTokenReview(body);
  if (token.ok()) {
    total += token->authenticated + token->error.size() +
             token->user.username.size() + token->user.groups.size() +
             token->user.extra.size();
  }
  auto access = ms::kube::DecodeAccessReview(body);
  if (access.ok()) {
    total += access->allowed + access->denied + access->reason.size() +
             access->evaluation_error.size();
  }
  return total == 0xFFFFFFFF ? 1 : 0;
}
