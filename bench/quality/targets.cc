#include "bench/quality/targets.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"

namespace ms::quality {
namespace {

constexpr char kKube[] = "kube-scheduler";
constexpr char kClairvoyant[] = "clairvoyant";

// The medians of `policy` on `trace`, if both ran.
std::optional<Figures> MedianOf(const std::vector<TraceResult>& results,
                                const std::string& trace,
                                const std::string& policy) {
  for (const TraceResult& t : results) {
    if (t.trace != trace) continue;
    for (const PolicyResult& p : t.policies) {
      if (p.policy == policy && !p.runs.empty()) return Median(p.runs);
    }
  }
  return std::nullopt;
}

// A target `ours / base <= bound` (figures in seconds or counts), where `ours`
// is `field` of the policy on `trace` (of its variant `variant`, when set)
// and `base` is `base_field` of `base_policy` on `base_trace`.
struct RatioTarget {
  std::string target;
  std::string trace;
  double (*field)(const Figures&);
  std::string base_trace;
  std::string base_policy;  // "" for the policy under test
  double (*base_field)(const Figures&);
  double bound;
  std::string variant = "";
};

// The variant of metrics-scheduler that rebalances (--variants=rebalance=FILE,
// docs/quality.md "Rebalancing").
constexpr char kRebalance[] = "rebalance";

double Mean(const Figures& f) { return f.mean_latency_s; }
double OwnMean(const Figures& f) { return f.own_mean_latency_s; }
double HotSeconds(const Figures& f) { return f.hot_node_seconds; }
double HotNodes(const Figures& f) { return f.hot_nodes; }
double Evictions(const Figures& f) { return f.evictions; }
double One(const Figures&) { return 1; }

TargetCheck Check(const std::vector<TraceResult>& results,
                  const std::string& policy, const RatioTarget& t) {
  TargetCheck check{.target = t.target};
  std::optional<Figures> ours = MedianOf(
      results, t.trace,
      t.variant.empty() ? policy : absl::StrCat(policy, ":", t.variant));
  std::optional<Figures> base = MedianOf(
      results, t.base_trace, t.base_policy.empty() ? policy : t.base_policy);
  if (!ours || !base) return check;
  const double a = t.field(*ours), b = t.base_field(*base);
  // 0 against 0 meets any bound; more than 0 against 0 none.
  const double ratio = b > 0 ? a / b : (a > 0 ? INFINITY : 0);
  check.measured = absl::StrFormat(
      "%s (%.4g against %.4g)",
      std::isinf(ratio) ? "inf" : absl::StrFormat("%.2fx", ratio), a, b);
  check.result = ratio <= t.bound ? TargetCheck::Result::kMet
                                  : TargetCheck::Result::kMissed;
  return check;
}

}  // namespace

std::vector<TargetCheck> CheckTargets(const std::vector<TraceResult>& results,
                                      const std::string& policy) {
  const RatioTarget targets[] = {
      {"heterogeneous: mean latency <= 1.10x clairvoyant's", "heterogeneous",
       Mean, "heterogeneous", kClairvoyant, Mean, 1.10},
      {"heterogeneous: mean latency >= 25 % below kube-scheduler's",
       "heterogeneous", Mean, "heterogeneous", kKube, Mean, 0.75},
      {"identical: mean latency <= 1.03x clairvoyant's", "identical", Mean,
       "identical", kClairvoyant, Mean, 1.03},
      {"bursts: mean latency <= 1.15x clairvoyant's", "bursts", Mean, "bursts",
       kClairvoyant, Mean, 1.15},
      {"bursts: no more nodes ever hot than clairvoyant's", "bursts", HotNodes,
       "bursts", kClairvoyant, HotNodes, 1},
      {"degrading: hot-node-seconds <= 1/4 of kube-scheduler's", "degrading",
       HotSeconds, "degrading", kKube, HotSeconds, 0.25},
      {"far-from-requests: mean latency <= 1.15x clairvoyant's",
       "far-from-requests", Mean, "far-from-requests", kClairvoyant, Mean,
       1.15},
      {"far-from-requests: mean latency >= 25 % below kube-scheduler's",
       "far-from-requests", Mean, "far-from-requests", kKube, Mean, 0.75},
      {"other-scheduler: own pods' mean latency <= 1.10x heterogeneous's "
       "(the same pods, all its own)",
       "other-scheduler", OwnMean, "heterogeneous", "", Mean, 1.10},
      {"shifting: hot-node-seconds with rebalancing <= 1/3 of without",
       "shifting", HotSeconds, "shifting", "", HotSeconds, 1.0 / 3, kRebalance},
      {"identical: no evictions with rebalancing (the ratio is the count)",
       "identical", Evictions, "identical", "", One, 0, kRebalance},
  };
  std::vector<TargetCheck> out;
  for (const RatioTarget& t : targets) out.push_back(Check(results, policy, t));
  return out;
}

const char* ResultName(TargetCheck::Result result) {
  switch (result) {
    case TargetCheck::Result::kMet:
      return "met";
    case TargetCheck::Result::kMissed:
      return "missed";
    case TargetCheck::Result::kNotRun:
      return "not run";
  }
  return "?";
}

std::string RenderTargets(const std::vector<TargetCheck>& checks,
                          const std::string& policy) {
  std::string out = absl::StrCat("\ntargets of ", policy, "\n");
  for (const TargetCheck& c : checks) {
    absl::StrAppend(
        &out, absl::StrFormat("  %-8s %s%s%s\n", ResultName(c.result), c.target,
                              c.measured.empty() ? "" : ": ", c.measured));
  }
  return out;
}

std::string TargetsJson(const std::vector<TargetCheck>& checks) {
  std::string out = "[";
  for (size_t i = 0; i < checks.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", R"({"target":)",
                    JsonQuote(checks[i].target), R"(,"measured":)",
                    JsonQuote(checks[i].measured), R"(,"result":)",
                    JsonQuote(ResultName(checks[i].result)), "}");
  }
  return out + "]";
}

}  // namespace ms::quality
