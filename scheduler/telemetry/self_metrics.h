// The scheduler's own metrics, served on /metrics in Prometheus' text format.
//
// A deliberately small registry: counters and histograms that the hot path
// updates with one atomic operation (no lock, no allocation, once the
// labelled child has been looked up), and gauges computed when scraped from a
// callback (queue lengths, cache ages). Families are created at start-up;
// children by label values on first use. A family without labels has its
// one child from the start; the owner of a labelled family creates a child
// for every label value it knows at start-up (With() each), so that no
// series appears only once its first event happened.
//
//   Registry registry;
//   auto& attempts = registry.AddCounter("scheduler_schedule_attempts_total",
//                                        "Scheduling attempts by result.",
//                                        {"result"});
//   attempts.With({"scheduled"}).Inc();
//   std::string text = registry.Render();
//
// Thread-safe: every method may be called from any thread.
#ifndef METRICS_SCHEDULER_SCHEDULER_TELEMETRY_SELF_METRICS_H_
#define METRICS_SCHEDULER_SCHEDULER_TELEMETRY_SELF_METRICS_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ms {

using LabelValues = std::vector<std::string>;

class Counter {
 public:
  void Inc(double by = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>* bounds);
  void Observe(double value);
  // Cumulative counts per bound, then the +Inf count; and the sum.
  std::vector<uint64_t> CumulativeCounts() const;
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double>* bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds + 1 (+Inf)
  std::atomic<double> sum_{0};
};

// A metric family: one child per combination of label values.
template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labels,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        labels_(std::move(labels)),
        make_(std::move(make)) {}

  // The child for `values` (as many as the family has labels), created on
  // first use. The reference stays valid for the registry's life.
  T& With(const LabelValues& values) {
    absl::MutexLock lock(&mu_);
    std::unique_ptr<T>& child = children_[values];
    if (!child) child = make_();
    return *child;
  }

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labels() const { return labels_; }
  template <typename Fn>
  void ForEach(Fn fn) const {
    absl::MutexLock lock(&mu_);
    for (const auto& [values, child] : children_) fn(values, *child);
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> labels_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable absl::Mutex mu_;
  std::map<LabelValues, std::unique_ptr<T>> children_ ABSL_GUARDED_BY(mu_);
};

class Registry {
 public:
  // Samples of a gauge computed at scrape time: label values and a value.
  using GaugeSamples = std::vector<std::pair<LabelValues, double>>;

  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              std::vector<std::string> labels = {});
  Family<Histogram>& AddHistogram(const std::string& name,
                                  const std::string& help,
                                  std::vector<double> bounds,
                                  std::vector<std::string> labels = {});
  void AddGauge(const std::string& name, const std::string& help,
                std::vector<std::string> labels,
                std::function<GaugeSamples()> collect);
  // A counter kept elsewhere (the metrics cache's fetch counts), read at
  // scrape time; typed `counter`, so the values must never decrease.
  void AddCounterFunc(const std::string& name, const std::string& help,
                      std::vector<std::string> labels,
                      std::function<GaugeSamples()> collect);

  // Everything in the Prometheus text exposition format, version 0.0.4.
  std::string Render() const;

 private:
  // A family whose samples are computed at scrape time.
  struct Gauge {
    std::string name, help;
    std::vector<std::string> labels;
    std::function<GaugeSamples()> collect;
    const char* type;  // "gauge" or "counter"
  };
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family<Counter>>> counters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<std::vector<double>>> bounds_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<Histogram>>> histograms_
      ABSL_GUARDED_BY(mu_);
  std::vector<Gauge> gauges_ ABSL_GUARDED_BY(mu_);
};

// Exponential bucket bounds: start, start*factor, ... (count bounds).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_TELEMETRY_SELF_METRICS_H_
