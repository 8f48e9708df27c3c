#include "metrics/cache.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "metrics/join_detect.h"

namespace ms::metrics {
namespace {

// The refresh thread re-reads the clock at least this often, so a clock
// that jumps (or a FakeClock) is noticed.
constexpr absl::Duration kMaxIdleWait = absl::Seconds(1);
// Node names a coverage message lists before "and N more".
constexpr size_t kMaxNamesLogged = 10;

int64_t Ms(absl::Time t) { return absl::ToUnixMillis(t); }

// The wait before a metric that failed `failures` times in a row is
// fetched again: `min_retry` doubling with each failure up to `ttl`, and
// at least a millisecond.
absl::Duration RetryDelay(int failures, absl::Duration min_retry,
                          absl::Duration ttl) {
  absl::Duration retry = min_retry;
  for (int k = 1; k < failures && retry < ttl; ++k) retry *= 2;
  return std::max(std::min(retry, ttl), absl::Milliseconds(1));
}

// How the last fetch of `config` (its `stats`) joined its series, for the
// coverage message.
std::string JoinUsed(const MetricConfig& config, const MetricStats& stats) {
  if (!config.join.automatic) {
    return absl::StrCat("join.label \"", config.join.label, "\"");
  }
  return DescribeDetectedJoin(stats.detected_join);
}

}  // namespace

bool IsFresh(const MetricSample& sample, int64_t now_ms,
             absl::Duration max_staleness) {
  return sample.time_ms != 0 && std::isfinite(sample.value) &&
         now_ms - sample.time_ms <= absl::ToInt64Milliseconds(max_staleness);
}

struct MetricsCache::MetricState {
  MetricConfig config;
  MetricValues values;  // what the next snapshot publishes
  MetricStats stats;
  absl::Time next_due = absl::InfinitePast();
  absl::Time last_fetch_start = absl::InfinitePast();
  uint64_t nodes_generation = 0;  // of the node list the last fetch used
  int consecutive_failures = 0;
  bool attempted = false;
  // The missing set logged last (comma-joined); "<none>" before the first.
  std::string logged_coverage = "<none>";
  std::string logged_error;     // the failure logged last
  std::string logged_warnings;
  std::string logged_pod_error;  // the per-pod query's failure logged last
  // The detected join logged last; "<none>" before the first.
  std::string logged_join = "<none>";
};

MetricsCache::MetricsCache(MetricsSource* source,
                           std::vector<MetricConfig> metrics,
                           CacheOptions options)
    : source_(source),
      options_(options),
      clock_(options.clock != nullptr ? *options.clock : RealClock::Get()) {
  auto snapshot = std::make_shared<MetricsSnapshot>();
  absl::MutexLock lock(&mu_);
  states_.resize(metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) {
    states_[i].config = std::move(metrics[i]);
    states_[i].values.name = states_[i].config.name;
    states_[i].stats.name = states_[i].config.name;
    snapshot->metrics.push_back(states_[i].values);
  }
  absl::MutexLock snapshot_lock(&snapshot_mu_);
  snapshot_ = std::move(snapshot);
}

MetricsCache::~MetricsCache() { Stop(); }

void MetricsCache::SetNodes(std::vector<NodeAddresses> nodes) {
  {
    absl::MutexLock lock(&mu_);
    if (nodes_ != nullptr && nodes_->nodes() == nodes) return;
  }
  auto set = std::make_shared<const NodeSet>(std::move(nodes));
  absl::MutexLock lock(&mu_);
  nodes_ = std::move(set);
  ++nodes_generation_;
  wake_ = true;
}

void MetricsCache::Start() {
  if (thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void MetricsCache::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const MetricsSnapshot> MetricsCache::Snapshot() const {
  absl::MutexLock lock(&snapshot_mu_);
  return snapshot_;
}

bool MetricsCache::AllFetchedLocked() const {
  return first_done_ == static_cast<int>(states_.size());
}

bool MetricsCache::FirstRefreshDone() const {
  absl::MutexLock lock(&mu_);
  return AllFetchedLocked();
}

bool MetricsCache::WaitForFirstRefresh(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(this, &MetricsCache::AllFetchedLocked), timeout);
}

void MetricsCache::RefreshDue() { RefreshPass(/*all=*/false); }
void MetricsCache::RefreshAll() { RefreshPass(/*all=*/true); }

absl::Time MetricsCache::NextDue() const {
  absl::MutexLock lock(&mu_);
  return NextDueLocked();
}

absl::Time MetricsCache::NextDueLocked() const {
  if (nodes_ == nullptr) return absl::InfiniteFuture();
  absl::Time next = absl::InfiniteFuture();
  for (const MetricState& state : states_) {
    next = std::min(next, state.next_due);
    if (state.nodes_generation != nodes_generation_) {
      next = std::min(next, state.last_fetch_start + options_.node_change_delay);
    }
  }
  return next;
}

std::vector<MetricStats> MetricsCache::Stats() const {
  absl::MutexLock lock(&mu_);
  std::vector<MetricStats> out;
  out.reserve(states_.size());
  for (const MetricState& state : states_) out.push_back(state.stats);
  return out;
}

struct MetricsCache::FetchJob {
  size_t index;                // into states_
  const MetricConfig* config;  // states_ never resizes after construction
  absl::Time start;
  absl::Time end;
  absl::StatusOr<FetchResult> result;
  // The per-pod query's answer; unset when the metric has none.
  std::optional<absl::StatusOr<PodFetchResult>> pods;
};

struct MetricsCache::Pass {
  std::vector<FetchJob> jobs;
  std::shared_ptr<const NodeSet> nodes;
  uint64_t generation = 0;  // of `nodes`
};

void MetricsCache::RefreshPass(bool all) {
  absl::MutexLock pass_lock(&pass_mu_);
  Pass pass = DuePass(all);
  if (pass.jobs.empty()) return;
  Fetch(pass);
  absl::MutexLock lock(&mu_);
  for (FetchJob& job : pass.jobs) Record(job, pass.generation);
  const absl::Time now = clock_.Now();
  for (MetricState& state : states_) UpdateCoverage(state, now);
  Publish();
}

MetricsCache::Pass MetricsCache::DuePass(bool all) {
  Pass pass;
  absl::MutexLock lock(&mu_);
  if (nodes_ == nullptr) return pass;
  pass.nodes = nodes_;
  pass.generation = nodes_generation_;
  const absl::Time now = clock_.Now();
  for (size_t i = 0; i < states_.size(); ++i) {
    const MetricState& state = states_[i];
    bool due = all || state.next_due <= now ||
               (state.nodes_generation != pass.generation &&
                state.last_fetch_start + options_.node_change_delay <= now);
    if (due) {
      pass.jobs.push_back(FetchJob{
          i, &state.config, {}, {}, absl::UnknownError("not fetched")});
    }
  }
  return pass;
}

void MetricsCache::Fetch(Pass& pass) {
  std::vector<FetchJob>& jobs = pass.jobs;
  std::vector<const MetricConfig*> configs;
  configs.reserve(jobs.size());
  const absl::Time start = clock_.Now();
  std::vector<std::thread> pod_fetches;  // beside the metrics' own
  for (FetchJob& job : jobs) {
    job.start = start;
    configs.push_back(job.config);
    if (job.config->estimate.siblings_query.empty()) continue;
    pod_fetches.emplace_back([this, &job] {
      job.pods = source_->FetchPods(*job.config, options_.refresh_timeout);
    });
  }
  absl::Cleanup join = [&pod_fetches] {
    for (std::thread& t : pod_fetches) t.join();
  };
  source_->FetchAll(configs, *pass.nodes, options_.refresh_timeout,
                    [&](size_t j, absl::StatusOr<FetchResult> answer) {
                      jobs[j].result = std::move(answer);
                      jobs[j].end = clock_.Now();
                    });
}

void MetricsCache::Record(FetchJob& job, uint64_t generation) {
  MetricState& state = states_[job.index];
  MetricStats& stats = state.stats;
  if (!state.attempted) {
    state.attempted = true;
    ++first_done_;
  }
  state.last_fetch_start = job.start;
  state.nodes_generation = generation;
  stats.last_attempt_ms = Ms(job.end);
  stats.last_fetch_duration = job.end - job.start;
  stats.last_status = job.result.status();
  if (options_.on_fetch) {
    options_.on_fetch(state.config, stats.last_fetch_duration,
                      stats.last_status);
  }
  if (job.result.ok()) {
    RecordSuccess(state, job);
  } else {
    RecordFailure(state, job);
  }
  if (job.pods.has_value()) RecordPods(state, job);
}

void MetricsCache::RecordPods(MetricState& state, FetchJob& job) {
  absl::StatusOr<PodFetchResult>& answer = *job.pods;
  state.stats.last_pod_status = answer.status();
  std::string problem;  // logged once per change
  if (answer.ok()) {
    if (answer->unlabelled > 0) {
      problem = absl::StrCat(answer->unlabelled, " of ", answer->series,
                             " series have no namespace or pod label");
    }
    if (answer->duplicates > 0) {
      // Per-container series, most likely: the query must sum by pod.
      absl::StrAppend(&problem, problem.empty() ? "" : "; ",
                      answer->duplicates, " of ", answer->series,
                      " series name a pod an earlier one named (the first "
                      "is kept; sum by (namespace, pod))");
    }
    state.stats.pods_measured = static_cast<int>(answer->by_pod.size());
    state.values.by_pod =
        std::make_shared<const PodSamples>(std::move(answer->by_pod));
  } else {
    problem = absl::StrCat("failed, keeping the last values: ",
                           answer.status().ToString());
  }
  if (problem == state.logged_pod_error) return;
  if (problem.empty()) {
    LOG(INFO) << "metric " << state.config.name
              << ": per-pod usage query (estimate.siblings) answers again";
  } else {
    LOG(WARNING) << "metric " << state.config.name
                 << ": per-pod usage query (estimate.siblings): " << problem
                 << "; pods without measured siblings are estimated from "
                    "their requests";
  }
  state.logged_pod_error = std::move(problem);
}

void MetricsCache::RecordSuccess(MetricState& state, FetchJob& job) {
  MetricStats& stats = state.stats;
  const std::string& name = state.config.name;
  FetchResult& r = *job.result;
  state.values.by_node = std::move(r.by_node);
  state.values.fetched_at_ms = Ms(job.end);
  state.values.last_error.clear();
  state.next_due = job.start + state.config.ttl;
  state.consecutive_failures = 0;
  ++stats.refresh_successes;
  stats.last_success_ms = Ms(job.end);
  stats.series = r.series;
  stats.unmatched = r.unmatched;
  stats.duplicates = r.duplicates;
  stats.unmatched_examples = std::move(r.unmatched_examples);
  stats.warnings = std::move(r.warnings);
  stats.detected_join = std::move(r.detected_join);
  LogDetectedJoin(state);
  if (!state.logged_error.empty()) {
    LOG(INFO) << "metric " << name << ": refresh succeeded again";
    state.logged_error.clear();
  }
  std::string warnings = absl::StrJoin(stats.warnings, "; ");
  if (warnings != state.logged_warnings) {
    if (!warnings.empty()) {
      LOG(WARNING) << "metric " << name << ": backend warnings: " << warnings;
    }
    state.logged_warnings = std::move(warnings);
  }
}

void MetricsCache::LogDetectedJoin(MetricState& state) {
  const MetricStats& stats = state.stats;
  // An empty answer says nothing of how series name nodes.
  if (!state.config.join.automatic || stats.series == 0) return;
  if (stats.detected_join == state.logged_join) return;
  const std::string line = absl::StrCat(
      "metric ", state.config.name, ": ",
      DescribeDetectedJoin(stats.detected_join), "; set join to fix it");
  if (stats.detected_join.empty()) {
    LOG(WARNING) << line;
  } else {
    LOG(INFO) << line;
  }
  state.logged_join = stats.detected_join;
}

void MetricsCache::RecordFailure(MetricState& state, const FetchJob& job) {
  const absl::Status& status = job.result.status();
  state.values.last_error = status.ToString();
  ++state.consecutive_failures;
  ++state.stats.refresh_failures;
  state.next_due =
      job.end + RetryDelay(state.consecutive_failures,
                           options_.min_retry_interval, state.config.ttl);
  if (state.values.last_error != state.logged_error) {
    LOG(WARNING) << "metric " << state.config.name
                 << ": refresh failed, keeping the "
                 << state.values.by_node.size()
                 << " values of the last success until they are older "
                    "than maxStaleness ("
                 << absl::FormatDuration(state.config.max_staleness)
                 << "): " << status;
    state.logged_error = state.values.last_error;
  }
}

void MetricsCache::UpdateCoverage(MetricState& state, absl::Time now) {
  const int64_t now_ms = Ms(now);
  const int64_t max_ms = absl::ToInt64Milliseconds(state.config.max_staleness);
  std::erase_if(state.values.by_node, [&](const auto& entry) {
    return now_ms - entry.second.time_ms > max_ms;
  });
  MetricStats& stats = state.stats;
  stats.nodes_missing.clear();
  stats.nodes_known = static_cast<int>(nodes_->size());
  for (const NodeAddresses& node : nodes_->nodes()) {
    auto it = state.values.by_node.find(node.name);
    if (it == state.values.by_node.end() ||
        !IsFresh(it->second, now_ms, state.config.max_staleness)) {
      stats.nodes_missing.push_back(node.name);
    }
  }
  std::sort(stats.nodes_missing.begin(), stats.nodes_missing.end());
  stats.nodes_with_data =
      stats.nodes_known - static_cast<int>(stats.nodes_missing.size());
  if (!state.attempted) return;

  // Logged once per change of the missing set.
  std::string line;
  if (!stats.nodes_missing.empty()) {
    size_t shown = std::min(stats.nodes_missing.size(), kMaxNamesLogged);
    line = absl::StrCat(
        "metric ", state.config.name, ": no usable value (absent, stale, NaN "
        "or infinite) for ", stats.nodes_missing.size(), " of ",
        stats.nodes_known, " nodes: ",
        absl::StrJoin(stats.nodes_missing.begin(),
                      stats.nodes_missing.begin() + shown, ", "));
    if (shown < stats.nodes_missing.size()) {
      absl::StrAppend(&line, " and ", stats.nodes_missing.size() - shown,
                      " more");
    }
    if (stats.unmatched > 0) {
      absl::StrAppend(&line, "; ", stats.unmatched, " of ", stats.series,
                      " series matched no node (",
                      JoinUsed(state.config, stats), "), e.g. ",
                      absl::StrJoin(stats.unmatched_examples, ", "));
    }
  } else {
    line = absl::StrCat("metric ", state.config.name, ": all ",
                        stats.nodes_known, " nodes have data");
  }
  std::string key = absl::StrJoin(stats.nodes_missing, ",");
  if (key == state.logged_coverage) return;
  if (stats.nodes_missing.empty()) {
    LOG(INFO) << line;
  } else {
    LOG(WARNING) << line;
  }
  state.logged_coverage = std::move(key);
}

void MetricsCache::Publish() {
  auto snapshot = std::make_shared<MetricsSnapshot>();
  snapshot->metrics.reserve(states_.size());
  for (const MetricState& state : states_) {
    snapshot->metrics.push_back(state.values);
  }
  absl::MutexLock lock(&snapshot_mu_);
  snapshot_ = std::move(snapshot);
}

void MetricsCache::Loop() {
  while (true) {
    RefreshDue();
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    if (!wake_) {
      absl::Duration wait = std::clamp(NextDueLocked() - clock_.Now(),
                                       absl::ZeroDuration(), kMaxIdleWait);
      if (wait > absl::ZeroDuration()) {
        auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || wake_;
        };
        mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
      }
    }
    if (stopping_) return;
    wake_ = false;
  }
}

}  // namespace ms::metrics
