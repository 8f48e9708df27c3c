// The six traces the benchmark ships (trace.h, docs/quality.md "Traces").
// Random numbers come from std::mt19937_64's raw output, which the C++
// standard fixes, never from std:: distributions, which it does not: a seed
// gives the same trace with any standard library.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/quality/trace.h"

namespace ms::quality {
namespace {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  std::mt19937_64 engine_;
};

constexpr double kNodeCores = 8;
constexpr double kRequest = 0.5;  // cores, for every pod but far-from-requests
constexpr double kWarmup = 20;    // seconds
constexpr double kMinDuration = 60, kMaxDuration = 180;
constexpr double kIoPerCore = 4;  // IO units per core of usage

NodeSpec Node(std::string name, double speed) {
  return {.name = std::move(name), .cores = kNodeCores, .speed = speed};
}

// Standard, fast, slow and noisy nodes in a fixed mix: of every 8 nodes 3
// standard, 2 fast (1.5x), 2 slow (0.5x), 1 with a noisy neighbour.
std::vector<NodeSpec> HeterogeneousFleet(int n) {
  std::vector<NodeSpec> nodes;
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) {
    switch (i % 8) {
      case 0:
      case 1:
      case 2:
        nodes.push_back(Node(absl::StrCat("std-", ++count[0]), 1));
        break;
      case 3:
      case 4:
        nodes.push_back(Node(absl::StrCat("fast-", ++count[1]), 1.5));
        break;
      case 5:
      case 6:
        nodes.push_back(Node(absl::StrCat("slow-", ++count[2]), 0.5));
        break;
      default: {
        NodeSpec noisy = Node(absl::StrCat("noisy-", ++count[3]), 1);
        noisy.background_cores = 1;
        noisy.burst_cores = 4;
        noisy.burst_period_s = 90;
        noisy.burst_duty = 0.5;
        nodes.push_back(std::move(noisy));
      }
    }
  }
  return nodes;
}

std::vector<NodeSpec> IdenticalFleet(int n) {
  std::vector<NodeSpec> nodes;
  for (int i = 1; i <= n; ++i)
    nodes.push_back(Node(absl::StrCat("node-", i), 1));
  return nodes;
}

// A pod's request and usage, and the workload it belongs to ("" none).
struct Shape {
  double request;
  double usage;
  const char* workload = "";
};

// Most pods use what they ask for; a quarter twice, a quarter 0.4x.
Shape TypicalShape(Random& random) {
  double u = random.Uniform();
  double factor = u < 0.5 ? 1 : (u < 0.75 ? 2 : 0.4);
  return {kRequest, kRequest * factor};
}

// Half use 3x their request, half 0.2x: heavy and light workloads.
Shape FarShape(Random& random) {
  return random.Uniform() < 0.5 ? Shape{1, 3, "heavy"} : Shape{1, 0.2, "light"};
}

// Each workload's pods go to its owners in turn, "heavy-1", "heavy-2",
// "heavy-1"...: two owners alike, so an estimate must find siblings by
// their owner, not by their shape. The turn draws no random number, so the
// trace's pods are those it had before it had owners, and its figures
// compare with earlier ones.
class Owners {
 public:
  static constexpr int kPerWorkload = 2;
  // The owner of the next pod of `workload`.
  std::string Next(const std::string& workload) {
    if (workload.empty()) return "";
    return absl::StrCat(workload, "-", taken_[workload]++ % kPerWorkload + 1);
  }

 private:
  std::map<std::string, int> taken_;
};

double MeanUsage(TraceKind kind) {
  return kind == TraceKind::kFarFromRequests ? 1 * (3 + 0.2) / 2
                                             : kRequest * (0.5 + 0.5 + 0.1);
}

// The fleet's mean capacity left for pods: cores x speed less background.
double PodCapacity(const std::vector<NodeSpec>& nodes) {
  double c = 0;
  for (const NodeSpec& n : nodes) {
    c += n.cores * n.speed - n.background_cores -
         n.burst_cores * (n.burst_period_s > 0 ? n.burst_duty : 0);
  }
  return c;
}

// Arrival times: Poisson at `rate` per second, or (bursts) every
// `burst_every_s` the same expected number within 2 s.
std::vector<double> Arrivals(Random& random, double rate, double duration_s,
                             bool bursts) {
  std::vector<double> at;
  if (!bursts) {
    for (double t = random.Exponential(1 / rate); t < duration_s;
         t += random.Exponential(1 / rate)) {
      at.push_back(t);
    }
    return at;
  }
  constexpr double kBurstEvery = 45, kBurstLength = 2;
  const int per_burst =
      std::max(1, static_cast<int>(std::lround(rate * kBurstEvery)));
  for (double start = 5; start < duration_s; start += kBurstEvery) {
    for (int i = 0; i < per_burst; ++i) {
      at.push_back(start + random.Uniform(0, kBurstLength));
    }
  }
  std::sort(at.begin(), at.end());
  return at;
}

}  // namespace

const char* TraceKindName(TraceKind kind) {
  switch (kind) {
    case TraceKind::kHeterogeneous:
      return "heterogeneous";
    case TraceKind::kIdentical:
      return "identical";
    case TraceKind::kBursts:
      return "bursts";
    case TraceKind::kDegrading:
      return "degrading";
    case TraceKind::kOtherScheduler:
      return "other-scheduler";
    case TraceKind::kFarFromRequests:
      return "far-from-requests";
    case TraceKind::kShifting:
      return "shifting";
  }
  return "?";
}

absl::StatusOr<TraceKind> ParseTraceKind(absl::string_view name) {
  for (TraceKind kind : kAllTraceKinds) {
    if (name == TraceKindName(kind)) return kind;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown trace ", name));
}

namespace {

// Load that moves after placement, for rebalancing: identical nodes filled
// over the first 25 % of the trace to 45 % of their capacity with pods of
// half a core that outlast the trace; at 30 % of it, the pods of the
// `surge` workloads (a quarter, drawn at random) triple their usage, so
// the nodes that happen to hold more of them turn hot, and stay hot until
// pods move: for the rest of the trace, so that the time a rebalancer
// takes to see a node stay hot is a small part of it.
Trace ShiftingTrace(const GenerateOptions& options) {
  Random random(options.seed);
  Trace trace{.name = "shifting", .duration_s = options.duration_s};
  trace.nodes = IdenticalFleet(options.nodes);
  const double fill_s = 0.25 * options.duration_s;
  const double pods = 0.45 * PodCapacity(trace.nodes) / kRequest;
  int n = 0;
  Owners owners;
  for (double at : Arrivals(random, pods / fill_s, fill_s, false)) {
    const bool surge = random.Uniform() < 0.25;
    trace.pods.push_back(
        {.name = absl::StrFormat("p-%04d", ++n),
         .arrival_s = at,
         .cpu_request = kRequest,
         .usage = kRequest,
         .warmup_s = kWarmup,
         .duration_s = 2 * options.duration_s,
         .io = kRequest * kIoPerCore,
         .owner = owners.Next(surge ? "surge" : "steady"),
         .shift_at_s = surge ? 0.3 * options.duration_s : kNever,
         .shift_factor = surge ? 3.0 : 1.0});
  }
  return trace;
}

}  // namespace

Trace GenerateTrace(TraceKind kind, const GenerateOptions& options) {
  if (kind == TraceKind::kShifting) return ShiftingTrace(options);
  Random random(options.seed);
  Trace trace{.name = TraceKindName(kind), .duration_s = options.duration_s};
  const bool identical = kind == TraceKind::kIdentical ||
                         kind == TraceKind::kDegrading ||
                         kind == TraceKind::kFarFromRequests;
  trace.nodes = identical ? IdenticalFleet(options.nodes)
                          : HeterogeneousFleet(options.nodes);
  if (kind == TraceKind::kDegrading) {
    NodeSpec& node = trace.nodes[trace.nodes.size() / 2];
    node.degrade_at_s = options.duration_s / 3;
    node.degrade_factor = 0.3;
  }
  // Little's law: pods running = rate x mean duration; their mean usage
  // then makes `target_load` of what the fleet has for pods.
  const double mean_duration = (kMinDuration + kMaxDuration) / 2;
  const double rate = options.target_load * PodCapacity(trace.nodes) /
                      (mean_duration * MeanUsage(kind));
  int n = 0;
  Owners owners;
  for (double at :
       Arrivals(random, rate, options.duration_s, kind == TraceKind::kBursts)) {
    Shape shape = kind == TraceKind::kFarFromRequests ? FarShape(random)
                                                      : TypicalShape(random);
    PodSpec pod{.name = absl::StrFormat("p-%04d", ++n),
                .arrival_s = at,
                .cpu_request = shape.request,
                .usage = shape.usage,
                .warmup_s = kWarmup,
                .duration_s = random.Uniform(kMinDuration, kMaxDuration),
                .io = shape.usage * kIoPerCore,
                .owner = owners.Next(shape.workload)};
    // Drawn for every trace, so that other-scheduler is heterogeneous's
    // pods with some of them given to the other scheduler: the policy's
    // own pods are the same in both, and their figures compare.
    const bool other = random.Uniform() < 0.4;
    if (kind == TraceKind::kOtherScheduler && other) {
      pod.scheduler = options.other_scheduler;
    }
    trace.pods.push_back(std::move(pod));
  }
  return trace;
}

}  // namespace ms::quality
