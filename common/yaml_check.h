// A guard in front of yaml-cpp 0.7 (Debian 12's), which never returns —
// looping and allocating until memory runs out — on a document whose first
// node starts with a `,` (",", "--- ,", "!tag ,", "&a ,", "\0,"). Found by
// the fuzz targets of tests/fuzz. Every caller of YAML::Load/LoadAll on text
// it did not write checks the text with this first.
#ifndef METRICS_SCHEDULER_COMMON_YAML_CHECK_H_
#define METRICS_SCHEDULER_COMMON_YAML_CHECK_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ms {

struct YamlTrap {
  int line = 1;    // 1-based
  int column = 1;  // 1-based
  std::string what;
};

// The first thing in `text` that must not reach yaml-cpp: a control
// character YAML does not allow (any below 0x20 but tab, LF and CR; DEL),
// or a document that starts with `,`. nullopt when `text` may be parsed.
std::optional<YamlTrap> FindYamlTrap(absl::string_view text);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_YAML_CHECK_H_
