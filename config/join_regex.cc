#include "config/join_regex.h"

#include "absl/strings/str_cat.h"

namespace ms {

re2::RE2::Options JoinRegexOptions() {
  re2::RE2::Options options;
  options.set_log_errors(false);
  return options;
}

absl::Status CheckJoinRegex(const std::string& pattern) {
  re2::RE2 re(pattern, JoinRegexOptions());
  if (re.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid regular expression: ", re.error(),
      " (RE2 syntax: no lookaround, no backreferences)"));
}

}  // namespace ms
