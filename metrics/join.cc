#include "metrics/join.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "config/join_regex.h"
#include "re2/re2.h"

namespace ms::metrics {

absl::StatusOr<Joiner> Joiner::Create(const JoinConfig& join,
                                      JoinOptions options) {
  std::shared_ptr<const re2::RE2> regex;
  if (!join.regex.empty()) {
    absl::Status valid = CheckJoinRegex(join.regex);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("join.regex \"", join.regex, "\": ", valid.message()));
    }
    regex = std::make_shared<const re2::RE2>(join.regex, JoinRegexOptions());
  }
  return Joiner(join.match, std::move(regex), options);
}

const std::string* Joiner::Match(absl::string_view label_value,
                                 const NodeSet& nodes) const {
  absl::string_view key = label_value;
  if (regex_ != nullptr) {
    // The whole value must match; the first group, if any, is the key.
    re2::StringPiece text(label_value.data(), label_value.size());
    re2::StringPiece parts[2];
    int n = regex_->NumberOfCapturingGroups() > 0 ? 2 : 1;
    if (!regex_->Match(text, 0, text.size(), re2::RE2::ANCHOR_BOTH, parts,
                       n)) {
      return nullptr;
    }
    const re2::StringPiece& part = parts[n - 1];
    if (part.data() == nullptr) return nullptr;  // the group took no part
    key = absl::string_view(part.data(), part.size());
  }
  if (match_ == JoinMatch::kAddress) {
    absl::string_view host = StripPort(key);
    if (const std::string* node = nodes.FindByAddress(host)) return node;
    return nodes.FindByName(host);
  }
  if (const std::string* node = nodes.FindByName(key)) return node;
  if (!options_.short_names) return nullptr;
  if (const std::string* node = nodes.FindByName(ShortName(key))) return node;
  return nodes.FindByShortName(key);
}

}  // namespace ms::metrics
