// FakeSource: a map-backed MetricsSource with an error switch, for tests of
// the cache and of what is built on it. Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_METRICS_FAKE_SOURCE_H_
#define METRICS_SCHEDULER_TESTS_METRICS_FAKE_SOURCE_H_

#include <functional>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "metrics/metrics_source.h"

namespace ms::metrics {

class FakeSource : public MetricsSource {
 public:
  // Sets `node`'s value of `metric`. Only nodes of the NodeSet passed to
  // Fetch are returned; the others count as unmatched series.
  void Set(const std::string& metric, const std::string& node, double value,
           int64_t time_ms) {
    absl::MutexLock lock(&mu_);
    values_[metric][node] = {value, time_ms};
  }
  void Remove(const std::string& metric, const std::string& node) {
    absl::MutexLock lock(&mu_);
    values_[metric].erase(node);
  }
  // While set (not OK), Fetch of `metric` returns `status`.
  void SetError(const std::string& metric, absl::Status status) {
    absl::MutexLock lock(&mu_);
    errors_[metric] = std::move(status);
  }
  // Sets the pod `key`'s (namespace/name) value of `metric`'s per-pod
  // query, and while set (not OK) its FetchPods error.
  void SetPod(const std::string& metric, const std::string& key, double value,
              int64_t time_ms) {
    absl::MutexLock lock(&mu_);
    pod_values_[metric][key] = {value, time_ms};
  }
  void SetPodError(const std::string& metric, absl::Status status) {
    absl::MutexLock lock(&mu_);
    pod_errors_[metric] = std::move(status);
  }
  // What Fetch of `metric` reports as FetchResult::detected_join.
  void SetDetectedJoin(const std::string& metric, const std::string& join) {
    absl::MutexLock lock(&mu_);
    detected_joins_[metric] = join;
  }
  int fetches(const std::string& metric) const {
    absl::MutexLock lock(&mu_);
    auto it = fetches_.find(metric);
    return it == fetches_.end() ? 0 : it->second;
  }
  // Called at the start of every Fetch, outside the lock.
  void SetHook(std::function<void(const MetricConfig&)> hook) {
    absl::MutexLock lock(&mu_);
    hook_ = std::move(hook);
  }

  absl::StatusOr<FetchResult> Fetch(const MetricConfig& metric,
                                    const NodeSet& nodes,
                                    absl::Duration) override {
    std::function<void(const MetricConfig&)> hook;
    {
      absl::MutexLock lock(&mu_);
      ++fetches_[metric.name];
      hook = hook_;
    }
    if (hook) hook(metric);
    absl::MutexLock lock(&mu_);
    if (auto it = errors_.find(metric.name);
        it != errors_.end() && !it->second.ok()) {
      return it->second;
    }
    FetchResult out;
    out.detected_join = detected_joins_[metric.name];
    for (const auto& [node, sample] : values_[metric.name]) {
      ++out.series;
      if (nodes.FindByName(node) == nullptr) {
        ++out.unmatched;
        if (out.unmatched_examples.size() < FetchResult::kMaxExamples) {
          out.unmatched_examples.push_back(node);
        }
        continue;
      }
      out.by_node[node] = sample;
    }
    return out;
  }

  absl::StatusOr<PodFetchResult> FetchPods(const MetricConfig& metric,
                                           absl::Duration) override {
    absl::MutexLock lock(&mu_);
    if (auto it = pod_errors_.find(metric.name);
        it != pod_errors_.end() && !it->second.ok()) {
      return it->second;
    }
    PodFetchResult out;
    for (const auto& [key, sample] : pod_values_[metric.name]) {
      ++out.series;
      out.by_pod[key] = sample;
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, MetricSample>> values_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> errors_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, MetricSample>> pod_values_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> pod_errors_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> fetches_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> detected_joins_ ABSL_GUARDED_BY(mu_);
  std::function<void(const MetricConfig&)> hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_TESTS_METRICS_FAKE_SOURCE_H_
