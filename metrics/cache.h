// MetricsCache: per-node metric values, refreshed in the background, read
// without waiting.
//
// The scheduler owns one cache. It hands it the node list (names and
// addresses) whenever that changes, starts it, and on every scheduling
// cycle takes Snapshot(): an immutable MetricsSnapshot published after each
// refresh pass, which never waits on the network. While the cache is cold
// the cycle may first call WaitForFirstRefresh(fallback.coldCacheDeadline).
//
//   MetricsCache cache(source.get(), config.metrics,
//                      {.refresh_timeout = config.cache.refresh_timeout});
//   cache.SetNodes(nodes);            // from the node informer, on change
//   cache.Start();
//   ...
//   if (!cache.FirstRefreshDone()) {
//     cache.WaitForFirstRefresh(config.fallback.cold_cache_deadline);
//   }
//   std::shared_ptr<const MetricsSnapshot> snap = cache.Snapshot();
//
// Refresh policy:
// - Each metric is fetched every `ttl` (its own, MetricConfig::ttl),
//   bounded by `refresh_timeout`; the metrics due together are handed to
//   one MetricsSource::FetchAll, which fetches them in parallel (or, for the
//   metricsServer source, with one list). Nothing is fetched before the
//   first SetNodes().
// - A failed fetch is retried after `min_retry_interval`, doubling up to
//   the ttl. It discards nothing: the metric keeps its last good values
//   (and last_error says what failed); other metrics are unaffected.
// - A successful fetch replaces the metric's values: a node absent from the
//   answer has no value.
// - A sample older than the metric's `maxStaleness` (now - sample time)
//   counts as missing: each pass drops such samples from the snapshot, and
//   since samples age between passes, readers check too (IsFresh).
// - A metric's per-pod query (estimate.siblings) is fetched beside its
//   query, in the same pass; its answer replaces the pods' values, a
//   failure keeps the old ones (readers check their age). It does not
//   change when the metric is due.
// - A new node list refreshes every metric `node_change_delay` after the
//   previous fetch at the earliest, so new nodes get data soon.
//
// Coverage: after every pass the cache knows, per metric, which known
// nodes have no usable value (absent, stale, NaN or infinite). It logs the
// list once each time it changes and keeps it, with refresh counters, for
// the scheduler's /metrics (Stats()). For a metric whose join is detected
// (JoinConfig::automatic) it logs the join found, once when it is first
// found and whenever it changes.
//
// Thread-safe. All times come from the injected Clock, except the waits of
// the refresh thread and WaitForFirstRefresh, which are real time.
#ifndef METRICS_SCHEDULER_METRICS_CACHE_H_
#define METRICS_SCHEDULER_METRICS_CACHE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "config/config.h"
#include "metrics/metrics_source.h"
#include "metrics/node_set.h"
#include "model/metrics.h"

namespace ms::metrics {

struct CacheOptions {
  // Bound on each Fetch (config: cache.refreshTimeout).
  absl::Duration refresh_timeout = absl::Seconds(5);
  // First retry after a failed fetch; doubles up to the metric's ttl.
  absl::Duration min_retry_interval = absl::Seconds(1);
  // Least time between fetches of a metric caused by node list changes.
  absl::Duration node_change_delay = absl::Seconds(1);
  // Where time comes from; null means RealClock::Get(). Must outlive the
  // cache.
  Clock* clock = nullptr;
  // Called once per finished Fetch, successful or not, with its duration
  // (by the clock) and status: the scheduler's histogram of backend
  // queries. Runs on the refresh thread with the cache's lock held: it
  // must be quick and must not call the cache. May be empty.
  std::function<void(const MetricConfig&, absl::Duration,
                     const absl::Status&)>
      on_fetch;
};

// What the scheduler exports per metric. Counts are as of the last pass.
struct MetricStats {
  std::string name;
  int64_t refresh_successes = 0;
  int64_t refresh_failures = 0;
  int64_t last_attempt_ms = 0;  // clock time a fetch last ended; 0 = never
  int64_t last_success_ms = 0;  // clock time a fetch last succeeded
  absl::Duration last_fetch_duration;  // of the last fetch, by the clock
  absl::Status last_status;     // of the last fetch; OK before the first
  int nodes_known = 0;          // nodes in the current node list
  int nodes_with_data = 0;      // of those, with a fresh finite value
  std::vector<std::string> nodes_missing;  // the others, sorted
  int series = 0;     // series the last successful fetch returned
  int unmatched = 0;  // of those, series that matched no node
  int duplicates = 0;
  std::vector<std::string> unmatched_examples;
  std::vector<std::string> warnings;  // of the last successful fetch
  // Of the last successful fetch, for a metric whose join is detected: the
  // join found ("instance (address)"), "" when none named a node
  // (FetchResult::detected_join). "" for a configured join.
  std::string detected_join;
  // The per-pod query (estimate.siblings), when the metric has one: pods
  // with a value after its last success, and its last fetch's status.
  int pods_measured = 0;
  absl::Status last_pod_status;
};

// Whether `sample` may be used at `now_ms`: sampled, finite, and no older
// than `max_staleness`.
bool IsFresh(const MetricSample& sample, int64_t now_ms,
             absl::Duration max_staleness);

class MetricsCache {
 public:
  // `source` must outlive the cache. `metrics` as validated by config/.
  MetricsCache(MetricsSource* source, std::vector<MetricConfig> metrics,
               CacheOptions options = {});
  // Stops the refresh thread (waiting for an in-flight pass, bounded by
  // refresh_timeout).
  ~MetricsCache();
  MetricsCache(const MetricsCache&) = delete;
  MetricsCache& operator=(const MetricsCache&) = delete;

  // Replaces the node list the series are joined to. Cheap when the list
  // is unchanged.
  void SetNodes(std::vector<NodeAddresses> nodes);

  // Starts the background refresh thread (once). Stop() ends it.
  void Start();
  void Stop();

  // The latest published values, one MetricValues per configured metric in
  // configuration order (empty by_node before the first success). Never
  // blocks on the network; never null.
  std::shared_ptr<const MetricsSnapshot> Snapshot() const;

  // Waits, at most `timeout` of real time, until every metric has finished
  // its first fetch, successful or not. Returns whether that happened.
  // Returns at once when it already has (or when no metric is configured).
  bool WaitForFirstRefresh(absl::Duration timeout) const;
  bool FirstRefreshDone() const;

  // Runs one refresh pass of the metrics that are due now (RefreshDue) or
  // of all of them (RefreshAll), on the calling thread and helpers, then
  // publishes a snapshot. Returns when the pass is done. The refresh thread
  // calls RefreshDue; tests and benchmarks call these directly instead of
  // Start(). Passes never overlap.
  void RefreshDue();
  void RefreshAll();

  // When the next metric is due (InfiniteFuture without nodes or metrics).
  absl::Time NextDue() const;

  std::vector<MetricStats> Stats() const;

 private:
  struct MetricState;
  // One metric's fetch in a refresh pass.
  struct FetchJob;
  // A refresh pass: its fetches and the node list they join to.
  struct Pass;

  // A refresh pass (RefreshDue, RefreshAll): the metrics due, fetched, each
  // answer recorded, the coverage updated and a snapshot published.
  void RefreshPass(bool all);
  // The metrics due now (every metric with `all`) and the node list; no
  // jobs before the first SetNodes().
  Pass DuePass(bool all) ABSL_LOCKS_EXCLUDED(mu_);
  // Fetches the pass's metrics through the source, without the lock: each
  // job gets its answer and the time it came.
  void Fetch(Pass& pass) ABSL_LOCKS_EXCLUDED(mu_);
  // A fetch's answer into its metric's state and stats.
  void Record(FetchJob& job, uint64_t generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The new values replace the old; the next fetch is a ttl later.
  void RecordSuccess(MetricState& state, FetchJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The old values stay; the next fetch is a retry (see "Refresh policy").
  void RecordFailure(MetricState& state, const FetchJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The per-pod query's answer, when the job fetched one.
  void RecordPods(MetricState& state, FetchJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Logs a detected join when it is new or changed.
  void LogDetectedJoin(MetricState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Publish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateCoverage(MetricState& state, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time NextDueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AllFetchedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();

  MetricsSource* const source_;
  const CacheOptions options_;
  Clock& clock_;

  absl::Mutex pass_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one pass at a time

  mutable absl::Mutex mu_;
  std::vector<MetricState> states_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const NodeSet> nodes_ ABSL_GUARDED_BY(mu_);
  uint64_t nodes_generation_ ABSL_GUARDED_BY(mu_) = 0;
  int first_done_ ABSL_GUARDED_BY(mu_) = 0;  // metrics fetched at least once
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;

  // Readers only ever take this one, briefly, to copy the pointer.
  mutable absl::Mutex snapshot_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::shared_ptr<const MetricsSnapshot> snapshot_
      ABSL_GUARDED_BY(snapshot_mu_);
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_CACHE_H_
