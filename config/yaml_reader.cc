#include "config/yaml_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "config/duration.h"

namespace ms {
namespace {

// Edit distance, for "did you mean" hints on unknown keys.
int Distance(absl::string_view a, absl::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int subst =
          prev[j - 1] +
          (absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]) ? 0
                                                                          : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string Child(const std::string& path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

absl::Status YamlReader::CheckMap(const YNode& node, const std::string& path,
                                  absl::Span<const char* const> known) const {
  if (!node.IsMap()) return Error(node, path, "must be a mapping");
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    // A copy: `it->first` lives in a proxy destroyed with this statement.
    const YNode key = it->first;
    if (!key.IsScalar()) return Error(key, path, "keys must be strings");
    const std::string& name = key.Scalar();
    bool found = false;
    std::string best;
    int best_distance = 3;  // suggest only close matches
    for (const char* k : known) {
      if (name == k) {
        found = true;
        break;
      }
      int d = Distance(name, k);
      if (d < best_distance) {
        best_distance = d;
        best = k;
      }
    }
    if (!found) {
      std::string msg = "unknown key";
      if (!best.empty()) absl::StrAppend(&msg, " (did you mean ", best, "?)");
      return Error(key, Child(path, name), msg);
    }
    if (!seen.insert(name).second) {
      return Error(key, Child(path, name), "duplicate key");
    }
  }
  return absl::OkStatus();
}

absl::Status YamlReader::Error(const YNode& at, const std::string& path,
                               absl::string_view msg) const {
  return ErrorAt(at.Mark(), path, msg);
}

absl::Status YamlReader::ErrorAt(const YAML::Mark& mark,
                                 const std::string& path,
                                 absl::string_view msg) const {
  int line = mark.line >= 0 ? mark.line + 1 : 1;
  int column = mark.column >= 0 ? mark.column + 1 : 1;
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line, ":", column, ": ", msg));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(file_, ":", line, ":", column, ": ", path, ": ", msg));
}

YNode YamlReader::Find(const YNode& map, const char* key) {
  const YNode& cmap = map;
  YNode v = cmap[key];
  if (!v.IsDefined() || v.IsNull()) return YNode(YAML::NodeType::Undefined);
  return v;
}

absl::Status YamlReader::CheckFile(const YNode& at, const std::string& path,
                                   const std::string& file, bool secret) const {
  if (!check_files_ || file.empty()) return absl::OkStatus();
  auto cannot = [&](int err) {
    return Error(at, path,
                 absl::StrCat("cannot read ", file, ": ", std::strerror(err)));
  };
  struct stat st;
  if (stat(file.c_str(), &st) != 0) return cannot(errno);
  if (S_ISDIR(st.st_mode)) return cannot(EISDIR);
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return cannot(errno);
  // A secret is short; a prefix shows whether it is blank.
  char buffer[4096];
  ssize_t n = read(fd, buffer, sizeof buffer);
  int err = errno;
  close(fd);
  if (n < 0) return cannot(err);
  if (secret && absl::StripAsciiWhitespace(
                    absl::string_view(buffer, static_cast<size_t>(n)))
                    .empty()) {
    return Error(at, path, absl::StrCat("file ", file, " is empty"));
  }
  return absl::OkStatus();
}

absl::Status YamlReader::Scalar(const YNode& v, const std::string& path,
                                std::string* out) const {
  if (!v.IsScalar()) return Error(v, path, "must be a string");
  *out = v.Scalar();
  return absl::OkStatus();
}

absl::Status YamlReader::TypedScalar(const YNode& v, const std::string& path,
                                     absl::string_view expected,
                                     std::string* out) const {
  if (!v.IsScalar()) {
    return Error(v, path,
                 absl::StrCat("must be ", expected, ", got ",
                              v.IsSequence() ? "a list" : "a mapping"));
  }
  *out = v.Scalar();
  return absl::OkStatus();
}

absl::Status YamlReader::GetString(const YNode& map, const std::string& path,
                                   const char* key, std::string* out,
                                   YNode* where) const {
  YNode v = Find(map, key);
  if (where != nullptr) where->reset(v);
  if (!v.IsDefined()) return absl::OkStatus();
  return Scalar(v, Child(path, key), out);
}

absl::Status YamlReader::GetDouble(const YNode& map, const std::string& path,
                                   const char* key, double* out,
                                   YNode* where) const {
  YNode v = Find(map, key);
  if (where != nullptr) where->reset(v);
  if (!v.IsDefined()) return absl::OkStatus();
  std::string s;
  RETURN_IF_ERROR(TypedScalar(v, Child(path, key), "a finite number", &s));
  double d;
  if (!absl::SimpleAtod(s, &d) || !std::isfinite(d)) {
    return Error(v, Child(path, key),
                 absl::StrCat("must be a finite number, got ", Quote(s)));
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status YamlReader::GetInt(const YNode& map, const std::string& path,
                                const char* key, int64_t lo, int64_t hi,
                                int32_t* out) const {
  YNode v = Find(map, key);
  if (!v.IsDefined()) return absl::OkStatus();
  std::string s;
  RETURN_IF_ERROR(TypedScalar(v, Child(path, key), "an integer", &s));
  int64_t i;
  if (!absl::SimpleAtoi(s, &i) || i < lo || i > hi) {
    return Error(v, Child(path, key),
                 absl::StrCat("must be an integer in [", lo, ", ", hi,
                              "], got ", Quote(s)));
  }
  *out = static_cast<int32_t>(i);
  return absl::OkStatus();
}

absl::Status YamlReader::GetBool(const YNode& map, const std::string& path,
                                 const char* key, bool* out) const {
  YNode v = Find(map, key);
  if (!v.IsDefined()) return absl::OkStatus();
  std::string s;
  RETURN_IF_ERROR(TypedScalar(v, Child(path, key), "true or false", &s));
  if (s == "true") {
    *out = true;
  } else if (s == "false") {
    *out = false;
  } else {
    return Error(v, Child(path, key),
                 absl::StrCat("must be true or false, got ", Quote(s)));
  }
  return absl::OkStatus();
}

absl::Status YamlReader::GetDuration(const YNode& map, const std::string& path,
                                     const char* key, absl::Duration* out,
                                     YNode* where) const {
  YNode v = Find(map, key);
  if (where != nullptr) where->reset(v);
  if (!v.IsDefined()) return absl::OkStatus();
  std::string s;
  RETURN_IF_ERROR(
      TypedScalar(v, Child(path, key), "a duration such as 15s", &s));
  absl::StatusOr<absl::Duration> d = ParseDuration(s);
  if (!d.ok()) return Error(v, Child(path, key), d.status().message());
  *out = *d;
  return absl::OkStatus();
}

absl::Status YamlReader::GetPositiveDuration(const YNode& map,
                                             const std::string& path,
                                             const char* key,
                                             absl::Duration* out,
                                             YNode* where) const {
  YNode v;
  RETURN_IF_ERROR(GetDuration(map, path, key, out, &v));
  if (where != nullptr) where->reset(v);
  if (v.IsDefined() && *out <= absl::ZeroDuration()) {
    return Error(v, Child(path, key), "must be > 0");
  }
  return absl::OkStatus();
}

absl::Status YamlReader::GetByteSize(const YNode& map, const std::string& path,
                                     const char* key, int64_t* out) const {
  YNode v = Find(map, key);
  if (!v.IsDefined()) return absl::OkStatus();
  std::string s;
  RETURN_IF_ERROR(TypedScalar(v, Child(path, key), "a size such as 64Mi", &s));
  static constexpr std::pair<const char*, int64_t> kSuffixes[] = {
      {"Ki", int64_t{1} << 10}, {"Mi", int64_t{1} << 20},
      {"Gi", int64_t{1} << 30}, {"k", 1000},
      {"M", 1000 * 1000},       {"G", 1000 * 1000 * 1000}};
  absl::string_view digits = s;
  int64_t unit = 1;
  for (const auto& [suffix, value] : kSuffixes) {
    if (absl::ConsumeSuffix(&digits, suffix)) {
      unit = value;
      break;
    }
  }
  int64_t n = 0;
  if (digits.empty() || !absl::c_all_of(digits, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &n) || n <= 0 ||
      n > std::numeric_limits<int64_t>::max() / unit) {
    return Error(v, Child(path, key),
                 absl::StrCat("must be a positive size such as 67108864 or "
                              "64Mi, got ",
                              Quote(s)));
  }
  *out = n * unit;
  return absl::OkStatus();
}

}  // namespace ms
