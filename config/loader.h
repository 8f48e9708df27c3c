// Loader: reads one YAML document into a Config, the schema of config.h
// written with YamlReader's primitives. Its methods are defined by part:
// config.cc (the document, profiles, metrics, leader election),
// load_backend.cc (backend and cache), load_node_affinity.cc
// (nodeAffinity), load_threshold.cc (a metric's filter and its scopes),
// load_rebalance.cc (rebalance).
// Private to config/; LoadConfigString is its caller.
#ifndef METRICS_SCHEDULER_CONFIG_LOADER_H_
#define METRICS_SCHEDULER_CONFIG_LOADER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "config/yaml_reader.h"
#include "model/metrics.h"
#include "model/pod.h"
#include "model/policy.h"
#include "model/threshold_scope.h"

namespace ms {

// config.h's parts (declared here so that config.h's implementation may
// include this header without a loop; the definitions include config.h).
struct AggregationsConfig;
struct BackendConfig;
struct CacheConfig;
struct Config;
struct HeaderConfig;
struct HotBound;
struct JoinConfig;
struct LeaderElectionConfig;
struct MetricConfig;
struct MetricThreshold;
struct NodeAffinityConfig;
struct PreemptionConfig;
struct ProfileConfig;
struct RebalancePods;

// Reads one YAML document into a Config. Every yaml-cpp call that may throw
// is made inside LoadConfigString's try block.
//
// Beware: YAML::Node has reference semantics, and assigning to a node that
// is already bound (`a = b`) overwrites the document node `a` points to.
// Node handles are therefore only ever constructed or rebound with reset().
class Loader : public YamlReader {
 public:
  // `check_files`: LoadOptions::check_files.
  Loader(absl::string_view file, bool check_files)
      : YamlReader(file, check_files) {}

  absl::Status Load(const YNode& root, Config* config);

 private:
  absl::Status LoadBackend(const YNode& node, const std::string& path,
                           BackendConfig* out);
  // backend.basicAuth and backend.sysdig, once the type is known.
  absl::Status LoadBasicAuth(const YNode& node, const std::string& path,
                             BackendConfig* out);
  absl::Status LoadSysdig(const YNode& node, const std::string& path,
                          BackendConfig* out);
  // `profiles`, each profile in order, and the query metrics they share.
  absl::Status LoadProfiles(const YNode& root, const YNode& profiles,
                            Config* config);
  absl::Status LoadPreemption(const YNode& node, const std::string& path,
                              PreemptionConfig* out);
  absl::Status LoadCache(const YNode& node, const std::string& path,
                         CacheConfig* out);
  // A profile's keys in `node` (the root for the one-profile form, path
  // ""; profiles[i] otherwise).
  absl::Status LoadProfile(const YNode& node, const std::string& path,
                           const Config& config, ProfileConfig* out);
  absl::Status LoadMetric(const YNode& node, const std::string& path,
                          const Config& config, MetricConfig* out);
  absl::Status LoadMetricOrigin(const YNode& node, const std::string& path,
                                const Config& config, MetricConfig* out);
  absl::Status LoadFreshness(const YNode& node, const std::string& path,
                             const CacheConfig& cache, MetricConfig* out);
  absl::Status LoadAggregations(const YNode& node, const std::string& path,
                                AggregationsConfig* out);
  absl::Status LoadNormalization(const YNode& node, const std::string& path,
                                 NormalizationConfig* out);
  absl::Status LoadJoin(const YNode& node, const std::string& path,
                        JoinConfig* out);
  absl::Status LoadSource(const YNode& node, const std::string& path,
                          MetricOrigin* out);
  absl::Status LoadHeaders(const YNode& node, const std::string& path,
                           std::vector<HeaderConfig>* out);
  // `backend`: the configured one (siblings' usage needs PromQL).
  absl::Status LoadEstimate(const YNode& node, const std::string& path,
                            BackendType backend, UnseenLoadEstimate* out);
  absl::Status LoadSiblings(const YNode& node, const std::string& path,
                            BackendType backend, UnseenLoadEstimate* out);
  // Metric i's queueing estimate names another metric of the list whose
  // estimate is from requests, and its `unloaded` another metric not
  // unloaded itself; `node` and `path` are metric i's.
  absl::Status CheckUtilisation(const std::vector<MetricConfig>& metrics,
                                size_t i, const YNode& node,
                                const std::string& path);
  absl::Status CheckNamedMetric(
      const std::vector<MetricConfig>& metrics, size_t i,
      const std::string& name, const YNode& node, const std::string& path,
      const char* key,
      absl::FunctionRef<std::string(const MetricConfig&)> why_not);
  absl::Status LoadUnloaded(const YNode& node, const std::string& path,
                            UnloadedValue* out);
  absl::Status LoadThreshold(const YNode& node, const std::string& path,
                             MetricThreshold* out);
  absl::Status LoadThresholdScope(const YNode& node, const std::string& path,
                                  ThresholdScope* out);
  // A scope's `pods`: a label selector and a priority range.
  absl::Status LoadPodClass(const YNode& node, const std::string& path,
                            std::optional<PodClass>* out);
  // The matchLabels and matchExpressions of `node`, a mapping whose keys
  // the caller has checked (operators In, NotIn, Exists, DoesNotExist).
  absl::Status LoadLabelSelector(const YNode& node, const std::string& path,
                                 LabelSelector* out);
  absl::Status LoadBuiltins(const YNode& node, const std::string& path,
                            BuiltinWeights* out);
  absl::Status LoadNodeAffinity(const YNode& node, const std::string& path,
                                NodeAffinityConfig* out);
  absl::Status LoadTerm(const YNode& node, const std::string& path,
                        NodeSelectorTerm* out);
  absl::Status LoadRequirements(const YNode& node, const std::string& path,
                                bool fields,
                                std::vector<NodeSelectorRequirement>* out);
  absl::Status LoadLeaderElection(const YNode& node, const std::string& path,
                                  LeaderElectionConfig* out);
  // `rebalance` (load_rebalance.cc), once the profiles are loaded: its hot
  // metrics and scheduler names are theirs.
  absl::Status LoadRebalance(const YNode& node, const std::string& path,
                             Config* config);
  absl::Status LoadHotBound(const YNode& node, const std::string& path,
                            const Config& config, HotBound* out);
  absl::Status LoadRebalancePods(const YNode& node, const std::string& path,
                                 const Config& config, RebalancePods* out);
  // A list of strings under `key`, replacing `out` when present; `invalid`
  // says what is wrong with an item ("" when nothing is).
  absl::Status GetStringList(
      const YNode& map, const std::string& path, const char* key,
      std::vector<std::string>* out,
      absl::FunctionRef<std::string(const std::string&)> invalid);
  // `{listenAddress: "[host]:port"}` (http, extender).
  absl::Status LoadListenAddress(const YNode& node, const std::string& path,
                                 std::string* out);
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_LOADER_H_
