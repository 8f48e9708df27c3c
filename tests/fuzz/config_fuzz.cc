// Fuzzes the configuration loader (config/config.h) with whole files, and
// Go-style durations. A loaded config must hold the invariants config.h
// promises.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "config/config.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ms::ParseDuration(text);
  absl::StatusOr<ms::Config> config = ms::LoadConfigString(text, "fuzz.yaml");
  if (!config.ok()) {
    Check(config.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  Check(config->backend.timeout > absl::ZeroDuration());
  Check(config->cache.ttl > absl::ZeroDuration());
  Check(config->cache.max_staleness >= config->cache.ttl);
  Check(!config->profiles.empty());
  std::set<std::string> scheduler_names;
  for (const ms::ProfileConfig& profile : config->profiles) {
    Check(scheduler_names.insert(profile.scheduler_name).second);
    Check(profile.herd.penalty_per_placement >= 0 &&
          profile.herd.penalty_per_placement <= 100);
    std::set<std::string> names;
    for (const ms::MetricConfig& m : profile.metrics) {
      Check(!m.name.empty());
      // A query, or a node attribute with a key and no query.
      Check(m.origin.is_query() ? !m.query.empty()
                                : m.query.empty() && !m.origin.key.empty());
      if (m.filter.max) Check(std::isfinite(*m.filter.max));
      if (m.filter.min) Check(std::isfinite(*m.filter.min));
      if (m.filter.max && m.filter.min) Check(*m.filter.min <= *m.filter.max);
      Check(m.filter.scopes.size() <= ms::kMaxThresholdScopes);
      for (const ms::ThresholdScope& scope : m.filter.scopes) {
        Check(scope.nodes || scope.pods);
        Check(!std::isnan(scope.bounds.max) && !std::isnan(scope.bounds.min));
        Check(std::isfinite(scope.bounds.max) ||
              std::isfinite(scope.bounds.min));
        Check(scope.bounds.min <= scope.bounds.max);
        if (scope.pods && scope.pods->min_priority &&
            scope.pods->max_priority) {
          Check(*scope.pods->min_priority <= *scope.pods->max_priority);
        }
      }
      Check(names.insert(m.name).second);
      Check(std::isfinite(m.weight) && m.weight > 0);
      Check(m.ttl > absl::ZeroDuration() && m.max_staleness >= m.ttl);
      if (m.normalization.type == ms::NormalizationType::kRange) {
        Check(std::isfinite(m.normalization.min) &&
              std::isfinite(m.normalization.max) &&
              m.normalization.min < m.normalization.max);
      }
      if (m.normalization.type == ms::NormalizationType::kTarget) {
        Check(std::isfinite(m.normalization.min) &&
              std::isfinite(m.normalization.max) &&
              m.normalization.min < m.normalization.target &&
              m.normalization.target < m.normalization.max);
      }
    }
  }
  if (!ms::QueryMetrics(*config).empty()) {
    Check(!config->backend.url.empty());
  }
  Check(config->backend.cert_file.empty() == config->backend.key_file.empty());
  for (const ms::HeaderConfig& h : config->backend.headers) {
    Check(!h.name.empty() && (h.value.empty() != h.value_file.empty()));
  }
  const ms::LeaderElectionConfig& le = config->leader_election;
  Check(le.lease_duration > le.renew_deadline &&
        le.renew_deadline > le.retry_period &&
        le.retry_period > absl::ZeroDuration());
  return 0;
}
