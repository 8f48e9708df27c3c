// Helpers shared by the metrics source tests.
#ifndef METRICS_SCHEDULER_TESTS_METRICS_SOURCE_TEST_UTIL_H_
#define METRICS_SCHEDULER_TESTS_METRICS_SOURCE_TEST_UTIL_H_

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "metrics/metrics_source.h"

namespace ms::metrics {

// node -> value of a fetch result.
inline std::map<std::string, double> ValuesOf(const FetchResult& r) {
  std::map<std::string, double> out;
  for (const auto& [node, sample] : r.by_node) out[node] = sample.value;
  return out;
}

// A file in a fresh temporary directory, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char pattern[] = "/tmp/ms-metrics-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/secret";
    Write(content);
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }
  // Replaces the file the way the kubelet rotates a mounted Secret: a new
  // file renamed over the old one.
  void Write(const std::string& content) {
    std::string tmp = path_ + ".new";
    std::ofstream(tmp) << content;
    std::filesystem::rename(tmp, path_);
  }

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_TESTS_METRICS_SOURCE_TEST_UTIL_H_
