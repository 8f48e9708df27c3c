#include "scoring/unseen_load.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace ms {
namespace {

using Basis = UnseenLoadEstimate::Basis;
using From = PodEstimate::From;

// `amount` of the basis' resource (millicores, bytes) over `node`'s
// allocatable, x factor.
double OfAllocatable(const UnseenLoadEstimate& e, double amount,
                     const Node& node) {
  const double allocatable = static_cast<double>(
      e.on_cpu() ? node.allocatable.milli_cpu : node.allocatable.memory);
  return allocatable > 0 ? e.factor * amount / allocatable : 0;
}

// The pod's amount of the basis' resource: its limit when the basis is
// limits and it has one, else its requests; and whether it was a limit.
std::pair<double, bool> Declared(const UnseenLoadEstimate& e,
                                 const PodInfo& pod) {
  const int64_t limit = e.on_cpu() ? pod.limits.milli_cpu : pod.limits.memory;
  if (e.on_limits() && limit > 0) return {static_cast<double>(limit), true};
  return {static_cast<double>(e.on_cpu() ? pod.requests.milli_cpu
                                         : pod.requests.memory),
          false};
}

// A measured usage (cores, bytes) in the unit of Declared.
double Measured(const UnseenLoadEstimate& e, double usage) {
  return e.on_cpu() ? usage * 1000 : usage;
}

}  // namespace

SiblingUsages MeasureSiblings(
    const UnseenLoadEstimate& estimate, const PodSamples& by_pod,
    absl::FunctionRef<const PodInfo*(const std::string& key)> find_pod,
    int64_t now_ms, int64_t max_staleness_ms) {
  SiblingUsages out;
  for (const auto& [key, sample] : by_pod) {
    if (!std::isfinite(sample.value) || sample.time_ms == 0 ||
        now_ms - sample.time_ms > max_staleness_ms) {
      continue;
    }
    const PodInfo* pod = find_pod(key);
    if (pod == nullptr || pod->owner_uid.empty() || pod->start_time_ms == 0 ||
        sample.time_ms < pod->start_time_ms + estimate.sibling_warmup_ms()) {
      continue;
    }
    SiblingUsage& usage = out[pod->owner_uid];
    ++usage.pods;
    usage.mean += (sample.value - usage.mean) / usage.pods;
  }
  return out;
}

namespace {

// The annotation's value, when it is a finite decimal.
std::optional<double> AnnotatedEstimate(const std::string& text) {
  double value = 0;
  if (absl::SimpleAtod(text, &value) && std::isfinite(value)) return value;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> InvalidEstimateAnnotations(
    const std::vector<MetricTerm>& terms,
    const std::map<std::string, std::string>& annotations) {
  std::vector<std::string> out;
  for (const MetricTerm& term : terms) {
    auto it = annotations.find(term.name);
    if (!term.estimate.enabled() || term.estimate.basis == Basis::kQueueing ||
        it == annotations.end() || AnnotatedEstimate(it->second).has_value()) {
      continue;
    }
    out.push_back(absl::StrFormat(
        "annotation %s%s: \"%s\" is not a decimal; %s is estimated as "
        "configured",
        kEstimateAnnotationPrefix, term.name, absl::CHexEscape(it->second),
        term.name));
  }
  return out;
}

double UnseenPart(const UnseenLoadEstimate& e, int64_t sample_ms,
                  int64_t start_ms) {
  if (SampleShows(e, sample_ms, start_ms)) return 0;
  if (e.fade != UnseenLoadEstimate::Fade::kLinear || sample_ms <= start_ms) {
    return 1;
  }
  return 1 - static_cast<double>(sample_ms - start_ms) /
                 static_cast<double>(e.warmup_ms);
}

double UnseenLoad(const MetricTerm& term, const PodInfo& pod, const Node& node,
                  const SiblingUsages* siblings, int64_t sample_ms,
                  int64_t start_ms, double sampled,
                  std::optional<double> own) {
  const double part = UnseenPart(term.estimate, sample_ms, start_ms);
  if (part == 0) return 0;
  const double estimate = part * EstimatePod(term, pod, node, siblings).value;
  if (term.estimate.basis == Basis::kPerPodShare) {
    return std::isfinite(sampled) ? estimate * std::max(sampled, 0.0) : 0;
  }
  if (term.estimate.fade != UnseenLoadEstimate::Fade::kMeasured || !own) {
    return estimate;
  }
  return std::max(0.0,
                  estimate - PodTakes(term, pod, node, nullptr, own).value);
}

double QueueingGrowth(double u, double unseen) {
  if (!std::isfinite(u) || !std::isfinite(unseen)) return 1;
  const double seen = std::clamp(u, 0.0, kMaxQueueingUtilisation);
  const double all =
      std::min(seen + std::max(unseen, 0.0), kMaxQueueingUtilisation);
  return (1 - seen) / (1 - all);
}

double Unloaded(double sample, double u, double full) {
  if (!std::isfinite(sample) || !std::isfinite(u)) return NAN;
  return sample * (1 - std::clamp(u / full, 0.0, kMaxUnloadedUtilisation));
}

PodEstimate EstimatePod(const MetricTerm& term, const PodInfo& pod,
                        const Node& node, const SiblingUsages* siblings) {
  const UnseenLoadEstimate& e = term.estimate;
  if (!e.enabled() || e.basis == Basis::kQueueing) return {};
  if (auto it = pod.estimates.find(term.name); it != pod.estimates.end()) {
    if (std::optional<double> value = AnnotatedEstimate(it->second)) {
      return {.from = From::kAnnotation, .value = *value};
    }
  }
  if (e.basis == Basis::kPerPod) {
    return {.from = From::kPerPod, .value = e.factor};
  }
  if (e.basis == Basis::kPerPodShare) {
    return {.from = From::kPerPodShare, .value = e.factor};
  }
  if (siblings != nullptr && !pod.owner_uid.empty()) {
    if (auto it = siblings->find(pod.owner_uid); it != siblings->end()) {
      return {.from = From::kSiblings,
              .value = OfAllocatable(e, Measured(e, it->second.mean), node),
              .siblings = it->second};
    }
  }
  const auto [amount, limit] = Declared(e, pod);
  return {.from = limit ? From::kLimits : From::kRequests,
          .value = OfAllocatable(e, amount, node)};
}

std::optional<double> OwnSample(const MetricsSnapshot* metrics,
                                const MetricTerm& term, const std::string& key,
                                int64_t at_ms) {
  const MetricValues* values =
      metrics == nullptr ? nullptr : metrics->Find(term.name);
  if (values == nullptr || values->by_pod == nullptr) return std::nullopt;
  auto it = values->by_pod->find(key);
  if (it == values->by_pod->end() || !std::isfinite(it->second.value) ||
      it->second.time_ms == 0 ||
      std::abs(at_ms - it->second.time_ms) > term.max_staleness_ms) {
    return std::nullopt;
  }
  return it->second.value;
}

PodEstimate PodTakes(const MetricTerm& term, const PodInfo& pod,
                     const Node& node, const SiblingUsages* siblings,
                     std::optional<double> own) {
  const UnseenLoadEstimate& e = term.estimate;
  if (e.on_resources() && own && std::isfinite(*own)) {
    return {.from = From::kOwn,
            .value = OfAllocatable(e, Measured(e, *own), node),
            .own = *own};
  }
  return EstimatePod(term, pod, node, siblings);
}

std::string DescribeEstimate(const MetricTerm& term,
                             const PodEstimate& estimate) {
  const bool cpu = term.estimate.on_cpu();
  switch (estimate.from) {
    case From::kOwn:
      return absl::StrFormat("its own measured usage (%.4g %s)", estimate.own,
                             cpu ? "cores" : "bytes");
    case From::kNone:
      return "none";
    case From::kAnnotation:
      return absl::StrCat("the pod's annotation ", kEstimateAnnotationPrefix,
                          term.name);
    case From::kPerPod:
      return "perPod";
    case From::kPerPodShare:
      return "perPodShare";
    case From::kSiblings:
      return absl::StrFormat(
          "siblings' measured usage (%d pod%s, %.4g %s each)",
          estimate.siblings.pods, estimate.siblings.pods == 1 ? "" : "s",
          estimate.siblings.mean, cpu ? "cores" : "bytes");
    case From::kLimits:
      return term.estimate.siblings_query.empty()
                 ? "limits"
                 : "limits (no sibling measured yet)";
    case From::kRequests: {
      const bool limits = term.estimate.on_limits();
      if (term.estimate.siblings_query.empty()) {
        return limits ? "requests (no limit)" : "requests";
      }
      return limits ? "requests (no limit, no sibling measured yet)"
                    : "requests (no sibling measured yet)";
    }
  }
  return "";
}

std::vector<std::string> ExplainEstimates(
    const std::vector<MetricTerm>& terms, const PodInfo& pod, const Node& node,
    const std::vector<SiblingUsages>& siblings) {
  std::vector<std::string> out;
  for (size_t m = 0; m < terms.size(); ++m) {
    const MetricTerm& term = terms[m];
    if (!term.estimate.enabled()) continue;
    if (term.estimate.basis == Basis::kQueueing) {
      out.push_back(absl::StrFormat(
          "%s x (1 - u) / (1 - u - du), u = %s as sampled, du = %s's "
          "estimate with it",
          term.name, term.estimate.utilisation, term.estimate.utilisation));
      continue;
    }
    const PodEstimate e = EstimatePod(
        term, pod, node, m < siblings.size() ? &siblings[m] : nullptr);
    const bool share = term.estimate.basis == Basis::kPerPodShare;
    out.push_back(absl::StrFormat(
        "%s %+.4g%s %s %s%s: %s", term.name, share ? 100 * e.value : e.value,
        share ? " % of its sample" : "",
        term.estimate.fade == UnseenLoadEstimate::Fade::kLinear
            ? "fading to 0 over"
            : "for",
        absl::FormatDuration(absl::Milliseconds(term.estimate.warmup_ms)),
        term.estimate.fade == UnseenLoadEstimate::Fade::kMeasured
            ? " less what its own sample shows"
            : "",
        DescribeEstimate(term, e)));
  }
  return out;
}

}  // namespace ms
