// Parsing YAML that comes from outside (the configuration, kubeconfigs,
// manifests) with Debian 12's yaml-cpp 0.7. These are the only entry points
// to yaml-cpp's parser in the project; they close two of its gaps:
//
//  - YAML::LoadAll never returns — it loops, allocating, until memory runs
//    out — on a document that starts with a token its parser has no rule
//    for (",", "--- ,", "&a ,"): it reads an empty document without
//    consuming the token, then the same empty document again, forever.
//  - It accepts control characters YAML does not allow.
//
// Both are reported as yaml-cpp reports any syntax error: a
// YAML::ParserException carrying the position. Callers catch
// YAML::Exception as they must for yaml-cpp anyway.
#ifndef METRICS_SCHEDULER_COMMON_YAML_H_
#define METRICS_SCHEDULER_COMMON_YAML_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace ms {

// Every document of `text`, as YAML::LoadAll.
std::vector<YAML::Node> LoadAllYaml(absl::string_view text);

// The first document of `text` (a null node when there is none), as
// YAML::Load, except that the documents after it must parse too.
YAML::Node LoadYaml(absl::string_view text);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_YAML_H_
