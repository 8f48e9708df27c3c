#include "scheduler/telemetry/self_metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ms {
namespace {

void AtomicAdd(std::atomic<double>& target, double by) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + by,
                                       std::memory_order_relaxed)) {
  }
}

// The shortest text that reads back as `v` (absl::StrCat keeps 6 digits:
// a timestamp or a byte count would lose its last ones).
std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

std::string Labels(const std::vector<std::string>& names,
                   const LabelValues& values, const std::string& extra = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    std::string escaped = absl::StrReplaceAll(
        values[i], {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
    absl::StrAppend(&out, out.empty() ? "" : ",", names[i], "=\"", escaped,
                    "\"");
  }
  if (!extra.empty()) absl::StrAppend(&out, out.empty() ? "" : ",", extra);
  return out.empty() ? "" : absl::StrCat("{", out, "}");
}

void Header(std::string& out, const std::string& name, const std::string& help,
            const char* type) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ",
                  type, "\n");
}

}  // namespace

void Counter::Inc(double by) { AtomicAdd(value_, by); }

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds),
      counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) counts_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t i = std::lower_bound(bounds_->begin(), bounds_->end(), value) -
             bounds_->begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(bounds_->size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

Family<Counter>& Registry::AddCounter(const std::string& name,
                                      const std::string& help,
                                      std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  counters_.push_back(std::make_unique<Family<Counter>>(
      name, help, std::move(labels),
      [] { return std::make_unique<Counter>(); }));
  // Without labels, the one series exists from the start.
  if (counters_.back()->labels().empty()) counters_.back()->With({});
  return *counters_.back();
}

Family<Histogram>& Registry::AddHistogram(const std::string& name,
                                          const std::string& help,
                                          std::vector<double> bounds,
                                          std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  std::sort(bounds.begin(), bounds.end());
  bounds_.push_back(std::make_unique<std::vector<double>>(std::move(bounds)));
  const std::vector<double>* b = bounds_.back().get();
  histograms_.push_back(std::make_unique<Family<Histogram>>(
      name, help, std::move(labels),
      [b] { return std::make_unique<Histogram>(b); }));
  if (histograms_.back()->labels().empty()) histograms_.back()->With({});
  return *histograms_.back();
}

void Registry::AddGauge(const std::string& name, const std::string& help,
                        std::vector<std::string> labels,
                        std::function<GaugeSamples()> collect) {
  absl::MutexLock lock(&mu_);
  gauges_.push_back(
      {name, help, std::move(labels), std::move(collect), "gauge"});
}

void Registry::AddCounterFunc(const std::string& name, const std::string& help,
                              std::vector<std::string> labels,
                              std::function<GaugeSamples()> collect) {
  absl::MutexLock lock(&mu_);
  gauges_.push_back(
      {name, help, std::move(labels), std::move(collect), "counter"});
}

std::string Registry::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& family : counters_) {
    Header(out, family->name(), family->help(), "counter");
    family->ForEach([&](const LabelValues& values, const Counter& c) {
      absl::StrAppend(&out, family->name(), Labels(family->labels(), values),
                      " ", Number(c.Value()), "\n");
    });
  }
  for (size_t h = 0; h < histograms_.size(); ++h) {
    const auto& family = histograms_[h];
    Header(out, family->name(), family->help(), "histogram");
    family->ForEach([&](const LabelValues& values, const Histogram& hist) {
      std::vector<uint64_t> counts = hist.CumulativeCounts();
      const std::vector<double>& bounds = *bounds_[h];
      for (size_t i = 0; i < counts.size(); ++i) {
        std::string le = i < bounds.size() ? Number(bounds[i]) : "+Inf";
        absl::StrAppend(&out, family->name(), "_bucket",
                        Labels(family->labels(), values,
                               absl::StrCat("le=\"", le, "\"")),
                        " ", counts[i], "\n");
      }
      absl::StrAppend(&out, family->name(), "_sum",
                      Labels(family->labels(), values), " ",
                      Number(hist.Sum()), "\n", family->name(), "_count",
                      Labels(family->labels(), values), " ", counts.back(),
                      "\n");
    });
  }
  for (const Gauge& gauge : gauges_) {
    Header(out, gauge.name, gauge.help, gauge.type);
    for (const auto& [values, v] : gauge.collect()) {
      absl::StrAppend(&out, gauge.name, Labels(gauge.labels, values), " ",
                      Number(v), "\n");
    }
  }
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor,
                                       int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i, start *= factor) out.push_back(start);
  return out;
}

}  // namespace ms
