#include "model/threshold_scope.h"

#include <cmath>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ms {

bool SelectsPod(const ThresholdScope& scope, const Pod& pod) {
  if (!scope.pods) return true;
  const PodClass& pods = *scope.pods;
  if (pods.min_priority && pod.priority < *pods.min_priority) return false;
  if (pods.max_priority && pod.priority > *pods.max_priority) return false;
  return !pods.labels || Selects(pods.labels, pod.labels);
}

bool SelectsNode(const ThresholdScope& scope, const Node& node) {
  return !scope.nodes || Selects(scope.nodes, node.labels);
}

std::string MaxFilterAnnotation(absl::string_view metric) {
  return absl::StrCat(kMaxFilterAnnotationPrefix, metric);
}

std::string MinFilterAnnotation(absl::string_view metric) {
  return absl::StrCat(kMinFilterAnnotationPrefix, metric);
}

double FilterAnnotationBound(const Node& node, const std::string& key) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  auto it = node.annotations.find(key);
  if (it == node.annotations.end()) return kNaN;
  const absl::string_view text = it->second;
  // SimpleAtod alone would also take surrounding white space, hexadecimal,
  // "inf" and "nan": only a decimal's characters go to it.
  const bool decimal = !text.empty() && absl::c_all_of(text, [](char c) {
    return absl::ascii_isdigit(c) || c == '.' || c == 'e' || c == 'E' ||
           c == '+' || c == '-';
  });
  double v;
  if (!decimal || !absl::SimpleAtod(text, &v) || !std::isfinite(v)) {
    return kNaN;
  }
  return v;
}

}  // namespace ms
