// The load model of the placement-quality benchmark: how nodes behave with
// the pods placed on them. docs/quality.md gives its equations; this file
// is their one implementation, pure functions of the model's inputs.
//
// A node has cores, a speed (work per core-second, relative to 1) and a
// background load outside the pods (constant, plus an optional square wave:
// the noisy neighbour); from a given time its speed may fall (a node that
// degrades). A pod asks for `cpu_request` cores but uses `usage` cores once
// warmed up: it ramps linearly from 0 over `warmup_s` after it starts, the
// load the metrics have not seen yet. The node's utilisation is its demand
// over its capacity (cores times speed), and may exceed 1: the excess is
// work that waits. From the utilisation follow the metrics users query:
// CPU busy fraction, request latency (an M/M/1 queue: mean S/(1-u), capped),
// IO latency, and an error ratio rising near saturation.
#ifndef METRICS_SCHEDULER_BENCH_QUALITY_LOAD_MODEL_H_
#define METRICS_SCHEDULER_BENCH_QUALITY_LOAD_MODEL_H_

#include <limits>
#include <string>
#include <vector>

namespace ms::quality {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

struct NodeSpec {
  std::string name;
  double cores = 8;             // allocatable CPU
  double memory_gib = 32;       // allocatable memory
  double speed = 1;             // work per core-second; 0.5: half as fast
  double background_cores = 0;  // load outside the pods, always there
  // The noisy neighbour: `burst_cores` more during the first `burst_duty`
  // of every `burst_period_s` (0: none).
  double burst_cores = 0;
  double burst_period_s = 0;
  double burst_duty = 0.5;
  // From `degrade_at_s` on, the speed is multiplied by `degrade_factor`.
  double degrade_at_s = kNever;
  double degrade_factor = 1;
};

struct PodSpec {
  std::string name;
  double arrival_s = 0;      // when it is created, from the start of the run
  double cpu_request = 0.5;  // cores
  double memory_request_gib = 0.5;
  double usage = 0.5;       // cores it uses once warmed up
  double warmup_s = 0;      // linear ramp from 0 to `usage` after it starts
  double duration_s = 300;  // it ends this long after it starts
  double io = 1;            // IO units it uses once warmed up
  // Who places it: "" the policy under test; otherwise a scheduler beside
  // it (its schedulerName), whose pods share the same nodes.
  std::string scheduler;
  // The workload it belongs to: "" none; pods with the same owner are
  // siblings (created with one controlling ownerReference).
  std::string owner;
  // From `shift_at_s` (trace time) on, it uses `shift_factor` times as
  // much (cores and IO): load that moves after placement.
  double shift_at_s = kNever;
  double shift_factor = 1;
};

// Constants of the model (docs/quality.md, "The load model").
struct ModelParams {
  double service_time_s = 0.02;   // mean request time at speed 1, no load
  double max_latency_s = 5;       // the latency cap (a timeout)
  double requests_per_core = 50;  // request rate per core of pod usage
  double io_capacity = 100;       // IO units a node serves
  double io_service_s = 0.004;    // IO latency with no IO load
  // Errors: none up to this utilisation, then rising to `error_at_one` at
  // 1; beyond 1 the excess requests fail too.
  double error_onset = 0.85;
  double error_at_one = 0.05;
};

// A node at one instant.
struct NodeState {
  double demand_cores = 0;    // background + pods' current usage
  double capacity_cores = 0;  // cores x current speed
  double utilisation = 0;     // demand / capacity; may exceed 1
  double cpu_busy = 0;        // min(utilisation, 1)
  double request_rate = 0;    // requests per second to the node's pods
  double mean_latency_s = 0;  // mean request time
  double io_units = 0;        // pods' current IO load
  double io_latency_s = 0;
  double error_ratio = 0;  // failed requests / requests
};

// A pod's usage (cores, or IO units with `full` = io) `age_s` after it
// started: the warm-up ramp, then `full`.
double RampedUsage(double full, double warmup_s, double age_s);

// What `pod` uses at trace time `t` having started at `started_s`: `full`
// (its usage, or its io) ramped over its warm-up, times its shift_factor
// from its shift_at_s on.
double UsageAt(const PodSpec& pod, double full, double started_s, double t);

// The node's speed at `t` (degradation applied).
double SpeedAt(const NodeSpec& node, double t);

// The node's background load at `t` (the noisy neighbour's bursts included).
double BackgroundAt(const NodeSpec& node, double t);

// Mean request time at utilisation `u` with mean service time `service_s`:
// service_s / (1 - u), capped at max_latency_s (and at the cap for u >= 1).
double QueueLatency(double service_s, double u, double max_latency_s);

// The fraction of requests at most `le` seconds when request times are
// exponential with mean `mean_s` (an M/M/1 queue's response time).
double LatencyCdf(double mean_s, double le);

// The error ratio at utilisation `u`.
double ErrorRatio(const ModelParams& params, double u);

// A pod running on a node: its spec and when it started there.
struct RunningPod {
  const PodSpec* spec = nullptr;
  double started_s = 0;
};

// The node at `t` with `pods` on it.
NodeState NodeAt(const NodeSpec& node, const std::vector<RunningPod>& pods,
                 double t, const ModelParams& params);

// The cores a pod keeps busy (the rate of its CPU time, what cAdvisor
// counts) when it uses `usage` cores of work at this instant on a node of
// `cores` cores in `state`: usage x cores / max(capacity, demand). Usage is
// work at speed 1, so a node of speed s takes usage / s cores for it (a
// slow node spends more CPU time on the same work, as its busy time
// shows); when demand exceeds capacity each load, the background's too,
// gets the same share capacity / demand of what it asks. So the pods' and
// the background's cores add up to the node's busy cores, cpu_busy x cores.
double PodCpuCores(double usage, double cores, const NodeState& state);

}  // namespace ms::quality

#endif  // METRICS_SCHEDULER_BENCH_QUALITY_LOAD_MODEL_H_
