// Reading one YAML document with errors that point into it: the
// primitives config/config.cc's schema is written with. Each error is
//   "<file>:<line>:<column>: <field path>: <what is wrong>"
// with line and column 1-based, pointing at the offending value.
//
// Beware: YAML::Node has reference semantics, and assigning to a node that
// is already bound (`a = b`) overwrites the document node `a` points to.
// Node handles are therefore only ever constructed or rebound with reset().
// yaml-cpp may throw: call these inside a try block (LoadConfigString's).
// Private to config/: yaml-cpp does not appear in config.h.
#ifndef METRICS_SCHEDULER_CONFIG_YAML_READER_H_
#define METRICS_SCHEDULER_CONFIG_YAML_READER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace ms {

using YNode = YAML::Node;

// "a.b": the field path of `key` under `path` ("" for the root).
std::string Child(const std::string& path, absl::string_view key);

// `s` in double quotes, for messages.
std::string Quote(absl::string_view s);

class YamlReader {
 public:
  // `file` names the document in errors. `check_files`: CheckFile reads
  // the files values name.
  YamlReader(absl::string_view file, bool check_files)
      : file_(file), check_files_(check_files) {}

  // "<file>:<line>:<col>: <path>: <msg>", pointing at `at`.
  absl::Status Error(const YNode& at, const std::string& path,
                     absl::string_view msg) const;
  absl::Status ErrorAt(const YAML::Mark& mark, const std::string& path,
                       absl::string_view msg) const;

  // `node` must be a mapping whose keys are all in `known`, each once;
  // an unknown key close to a known one gets a "did you mean" hint.
  absl::Status CheckMap(const YNode& node, const std::string& path,
                        absl::Span<const char* const> known) const;

  // The value under `key`, or an undefined node when absent or null.
  static YNode Find(const YNode& map, const char* key);

  // When files are checked: `file` (the value at `at`) can be opened and
  // read and, for a `secret`, holds more than white space.
  absl::Status CheckFile(const YNode& at, const std::string& path,
                         const std::string& file, bool secret) const;

  absl::Status Scalar(const YNode& v, const std::string& path,
                      std::string* out) const;

  // A scalar that must read as `expected` ("a finite number"): a list or a
  // mapping is named as such rather than called "not a string".
  absl::Status TypedScalar(const YNode& v, const std::string& path,
                           absl::string_view expected, std::string* out) const;

  // Each Get* leaves *out alone when the key is absent or null, and returns
  // the value node in *where (undefined when absent) for later checks.
  absl::Status GetString(const YNode& map, const std::string& path,
                         const char* key, std::string* out,
                         YNode* where = nullptr) const;

  absl::Status GetDouble(const YNode& map, const std::string& path,
                         const char* key, double* out,
                         YNode* where = nullptr) const;

  // An integer in [lo, hi].
  absl::Status GetInt(const YNode& map, const std::string& path,
                      const char* key, int64_t lo, int64_t hi,
                      int32_t* out) const;

  absl::Status GetBool(const YNode& map, const std::string& path,
                       const char* key, bool* out) const;

  absl::Status GetDuration(const YNode& map, const std::string& path,
                           const char* key, absl::Duration* out,
                           YNode* where = nullptr) const;

  // A duration that must be > 0.
  absl::Status GetPositiveDuration(const YNode& map, const std::string& path,
                                   const char* key, absl::Duration* out,
                                   YNode* where = nullptr) const;

  // A size in bytes: a whole number, optionally with a suffix k, M, G
  // (powers of 1000) or Ki, Mi, Gi (powers of 1024), as Kubernetes writes
  // quantities; > 0.
  absl::Status GetByteSize(const YNode& map, const std::string& path,
                           const char* key, int64_t* out) const;

  // One of `values`, by name.
  template <typename E>
  absl::Status GetEnum(const YNode& map, const std::string& path,
                       const char* key,
                       std::initializer_list<std::pair<const char*, E>> values,
                       E* out, YNode* where = nullptr) const {
    YNode v = Find(map, key);
    if (where != nullptr) where->reset(v);
    if (!v.IsDefined()) return absl::OkStatus();
    std::string s;
    RETURN_IF_ERROR(Scalar(v, Child(path, key), &s));
    std::vector<std::string> names;
    for (const auto& [name, value] : values) {
      if (s == name) {
        *out = value;
        return absl::OkStatus();
      }
      names.push_back(name);
    }
    return Error(v, Child(path, key),
                 absl::StrCat("must be one of ", absl::StrJoin(names, ", "),
                              "; got ", Quote(s)));
  }

 private:
  std::string file_;
  bool check_files_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_YAML_READER_H_
