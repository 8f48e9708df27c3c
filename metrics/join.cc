#include "metrics/join.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ms::metrics {

absl::StatusOr<Joiner> Joiner::Create(const JoinConfig& join,
                                      JoinOptions options) {
  std::optional<std::regex> regex;
  if (!join.regex.empty()) {
    try {
      regex.emplace(join.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "join.regex \"", join.regex, "\": invalid regular expression: ",
          e.what()));
    }
  }
  return Joiner(join.match, std::move(regex), options);
}

const std::string* Joiner::Match(absl::string_view label_value,
                                 const NodeSet& nodes) const {
  absl::string_view key = label_value;
  if (regex_.has_value()) {
    std::cmatch m;
    if (!std::regex_match(label_value.data(),
                          label_value.data() + label_value.size(), m,
                          *regex_)) {
      return nullptr;
    }
    const std::csub_match& part = m.size() > 1 ? m[1] : m[0];
    if (!part.matched) return nullptr;
    key = absl::string_view(part.first, part.second - part.first);
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
