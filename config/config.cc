#include "config/config.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "common/yaml.h"
#include "config/join_regex.h"
#include "config/loader.h"
#include "config/preset_expansion.h"
#include "config/validation.h"
#include "config/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

// Whether two query metrics fetch the same series from the backend.
bool SameFetch(const MetricConfig& a, const MetricConfig& b) {
  return a.query == b.query && a.join.automatic == b.join.automatic &&
         a.join.label == b.join.label && a.join.match == b.join.match &&
         a.join.regex == b.join.regex && a.ttl == b.ttl &&
         a.max_staleness == b.max_staleness &&
         a.aggregations.time == b.aggregations.time &&
         a.aggregations.group == b.aggregations.group &&
         a.estimate.siblings_query == b.estimate.siblings_query;
}

}  // namespace

absl::Status Loader::Load(const YNode& root, Config* config) {
  if (!root.IsDefined() || root.IsNull()) {
    return ErrorAt(YAML::Mark(), "",
                   absl::StrCat("empty configuration; expected apiVersion: ",
                                kConfigApiVersion));
  }
  if (!root.IsMap()) return Error(root, "", "must be a mapping");
  RETURN_IF_ERROR(CheckMap(
      root, "",
      {"apiVersion", "kind", "schedulerName", "backend", "cache", "metrics",
       "builtins", "profiles", "nodeAffinity", "fallback", "herd", "preemption",
       "leaderElection", "http", "extender", "rebalance"}));

  // apiVersion and kind identify the schema; both are required.
  for (const auto& [key, want] :
       {std::pair<const char*, const char*>{"apiVersion", kConfigApiVersion},
        {"kind", kConfigKind}}) {
    YNode v;
    std::string got;
    RETURN_IF_ERROR(GetString(root, "", key, &got, &v));
    if (!v.IsDefined()) {
      return Error(root, key, absl::StrCat("required; expected ", want));
    }
    if (got != want) {
      return Error(v, key,
                   absl::StrCat("must be ", want, ", got ", Quote(got)));
    }
  }

  if (YNode n = Find(root, "backend"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadBackend(n, "backend", &config->backend));
  }
  if (YNode n = Find(root, "cache"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadCache(n, "cache", &config->cache));
  }

  if (YNode profiles = Find(root, "profiles"); profiles.IsDefined()) {
    RETURN_IF_ERROR(LoadProfiles(root, profiles, config));
  } else {
    RETURN_IF_ERROR(LoadProfile(root, "", *config, &config->profiles[0]));
  }
  if (!QueryMetrics(*config).empty() && config->backend.url.empty() &&
      config->backend.type != BackendType::kMetricsServer) {
    YNode at = Find(root, "backend");
    return Error(at.IsDefined() ? at : root, "backend.url",
                 "required when a metric has a query");
  }

  if (YNode n = Find(root, "nodeAffinity"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadNodeAffinity(n, "nodeAffinity", &config->node_affinity));
  }
  if (YNode n = Find(root, "fallback"); n.IsDefined()) {
    RETURN_IF_ERROR(CheckMap(n, "fallback", {"coldCacheDeadline"}));
    YNode d;
    RETURN_IF_ERROR(GetDuration(n, "fallback", "coldCacheDeadline",
                                &config->fallback.cold_cache_deadline, &d));
    if (config->fallback.cold_cache_deadline < absl::ZeroDuration()) {
      return Error(d, "fallback.coldCacheDeadline", "must be >= 0");
    }
  }
  if (YNode n = Find(root, "preemption"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadPreemption(n, "preemption", &config->preemption));
  }
  if (YNode n = Find(root, "leaderElection"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadLeaderElection(n, "leaderElection", &config->leader_election));
  }
  if (YNode n = Find(root, "http"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadListenAddress(n, "http", &config->http.listen_address));
  }
  if (YNode n = Find(root, "extender"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadListenAddress(n, "extender", &config->extender.listen_address));
  }
  if (YNode n = Find(root, "rebalance"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadRebalance(n, "rebalance", config));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadProfiles(const YNode& root, const YNode& profiles,
                                  Config* config) {
  for (const char* key : {"schedulerName", "metrics", "builtins", "herd"}) {
    if (YNode k = Find(root, key); k.IsDefined()) {
      return Error(k, key,
                   "not used together with profiles: move it into a "
                   "profile (the top-level schedulerName, metrics, "
                   "builtins and herd are the one-profile form)");
    }
  }
  if (!profiles.IsSequence() || profiles.size() == 0) {
    return Error(profiles, "profiles", "must be a non-empty list");
  }
  config->profiles.clear();
  // Query metrics by name, as first defined: one series per name.
  std::map<std::string, std::pair<const MetricConfig*, std::string>> queries;
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::string path = absl::StrCat("profiles[", i, "]");
    RETURN_IF_ERROR(CheckMap(profiles[i], path,
                             {"schedulerName", "metrics", "builtins", "herd"}));
    YNode name = Find(profiles[i], "schedulerName");
    if (!name.IsDefined()) {
      return Error(profiles[i], Child(path, "schedulerName"), "required");
    }
    ProfileConfig profile;
    RETURN_IF_ERROR(LoadProfile(profiles[i], path, *config, &profile));
    if (FindProfile(*config, profile.scheduler_name) != nullptr) {
      return Error(name, Child(path, "schedulerName"),
                   absl::StrCat("duplicate scheduler name ",
                                Quote(profile.scheduler_name)));
    }
    config->profiles.push_back(std::move(profile));
  }
  // Each profile's vector is final now: pointers into it stay valid.
  for (size_t i = 0; i < config->profiles.size(); ++i) {
    const std::vector<MetricConfig>& metrics = config->profiles[i].metrics;
    for (size_t j = 0; j < metrics.size(); ++j) {
      const MetricConfig& m = metrics[j];
      if (!m.origin.is_query()) continue;
      std::string path = absl::StrCat("profiles[", i, "].metrics[", j, "]");
      auto [it, added] = queries.try_emplace(m.name, &m, path);
      if (added || SameFetch(*it->second.first, m)) continue;
      return Error(Find(Find(profiles[i], "metrics")[j], "name"),
                   Child(path, "name"),
                   absl::StrCat(Quote(m.name), " is fetched differently at ",
                                it->second.second,
                                ": a name is one series, so its query, "
                                "join, ttl, maxStaleness, aggregations and "
                                "estimate.siblings must be the same "
                                "(weight, direction, "
                                "normalization, missing and filter may "
                                "differ); or give it another name"));
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadPreemption(const YNode& node, const std::string& path,
                                    PreemptionConfig* out) {
  RETURN_IF_ERROR(CheckMap(
      node, path,
      {"enabled", "minCandidateNodesPercentage", "minCandidateNodesAbsolute"}));
  PreemptionConfig& p = *out;
  RETURN_IF_ERROR(GetBool(node, path, "enabled", &p.enabled));
  RETURN_IF_ERROR(GetInt(node, path, "minCandidateNodesPercentage", 0, 100,
                         &p.min_candidate_nodes_percentage));
  RETURN_IF_ERROR(GetInt(node, path, "minCandidateNodesAbsolute", 0,
                         std::numeric_limits<int32_t>::max(),
                         &p.min_candidate_nodes_absolute));
  if (p.min_candidate_nodes_percentage == 0 &&
      p.min_candidate_nodes_absolute == 0) {
    return Error(node, path,
                 "minCandidateNodesPercentage and minCandidateNodesAbsolute "
                 "cannot both be 0");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadNormalization(const YNode& node,
                                       const std::string& path,
                                       NormalizationConfig* out) {
  static constexpr std::initializer_list<
      std::pair<const char*, NormalizationType>>
      kTypes = {{"minmax", NormalizationType::kMinMax},
                {"range", NormalizationType::kRange},
                {"ratio", NormalizationType::kRatio},
                {"target", NormalizationType::kTarget}};
  if (node.IsScalar()) {
    // Shorthand: `normalization: ratio`; range and target need their
    // numbers.
    std::string s = node.Scalar();
    if (s == "range") {
      return Error(node, path,
                   "range needs min and max: {type: range, min: LO, max: "
                   "HI}");
    }
    if (s == "target") {
      return Error(node, path,
                   "target needs target and max: {type: target, target: X, "
                   "max: HI} (min: LO is optional, default 0)");
    }
    if (s != "minmax" && s != "ratio") {
      return Error(node, path,
                   absl::StrCat("must be one of minmax, range, ratio, "
                                "target; got ",
                                Quote(s)));
    }
    out->type =
        s == "ratio" ? NormalizationType::kRatio : NormalizationType::kMinMax;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckMap(node, path, {"type", "min", "max", "target"}));
  YNode t;
  RETURN_IF_ERROR(GetEnum<NormalizationType>(node, path, "type", kTypes,
                                             &out->type, &t));
  if (!t.IsDefined()) return Error(node, Child(path, "type"), "required");
  YNode min_node, max_node, target_node;
  RETURN_IF_ERROR(GetDouble(node, path, "min", &out->min, &min_node));
  RETURN_IF_ERROR(GetDouble(node, path, "max", &out->max, &max_node));
  RETURN_IF_ERROR(GetDouble(node, path, "target", &out->target, &target_node));
  const bool range = out->type == NormalizationType::kRange;
  const bool target = out->type == NormalizationType::kTarget;
  if (!target && target_node.IsDefined()) {
    return Error(target_node, Child(path, "target"),
                 "only valid with type target");
  }
  if (!range && !target) {
    if (min_node.IsDefined()) {
      return Error(min_node, Child(path, "min"),
                   "only valid with type range or target");
    }
    if (max_node.IsDefined()) {
      return Error(max_node, Child(path, "max"),
                   "only valid with type range or target");
    }
    return absl::OkStatus();
  }
  if (range) {
    if (!min_node.IsDefined()) {
      return Error(node, Child(path, "min"), "required with type range");
    }
    if (!max_node.IsDefined()) {
      return Error(node, Child(path, "max"), "required with type range");
    }
    if (!(out->max > out->min)) {
      return Error(max_node, Child(path, "max"),
                   absl::StrCat("must be > min (", min_node.Scalar(), ")"));
    }
    return absl::OkStatus();
  }
  // Target: min (default 0) < target < max.
  if (!target_node.IsDefined()) {
    return Error(node, Child(path, "target"), "required with type target");
  }
  if (!max_node.IsDefined()) {
    return Error(node, Child(path, "max"), "required with type target");
  }
  if (!(out->target > out->min)) {
    return Error(
        target_node, Child(path, "target"),
        absl::StrCat("must be > min (",
                     min_node.IsDefined() ? min_node.Scalar() : "0", ")"));
  }
  if (!(out->max > out->target)) {
    return Error(max_node, Child(path, "max"),
                 absl::StrCat("must be > target (", target_node.Scalar(), ")"));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadJoin(const YNode& node, const std::string& path,
                              JoinConfig* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"label", "match", "regex"}));
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "label", &out->label, &v));
  if (v.IsDefined() && out->label.empty()) {
    return Error(v, Child(path, "label"), "must not be empty");
  }
  RETURN_IF_ERROR(GetEnum<JoinMatch>(
      node, path, "match",
      {{"name", JoinMatch::kName}, {"address", JoinMatch::kAddress}},
      &out->match));
  RETURN_IF_ERROR(GetString(node, path, "regex", &out->regex, &v));
  if (!out->regex.empty()) {
    absl::Status valid = CheckJoinRegex(out->regex);
    if (!valid.ok()) return Error(v, Child(path, "regex"), valid.message());
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadProfile(const YNode& node, const std::string& path,
                                 const Config& config, ProfileConfig* out) {
  YNode v;
  RETURN_IF_ERROR(
      GetString(node, path, "schedulerName", &out->scheduler_name, &v));
  if (v.IsDefined() && !IsDns1123Subdomain(out->scheduler_name)) {
    return Error(v, Child(path, "schedulerName"),
                 "must be a lowercase DNS-1123 subdomain (a-z, 0-9, '-', "
                 "'.')");
  }
  if (YNode metrics = Find(node, "metrics"); metrics.IsDefined()) {
    if (!metrics.IsSequence()) {
      return Error(metrics, Child(path, "metrics"), "must be a list");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < metrics.size(); ++i) {
      std::string at = absl::StrCat(Child(path, "metrics"), "[", i, "]");
      MetricConfig metric;
      RETURN_IF_ERROR(LoadMetric(metrics[i], at, config, &metric));
      if (!names.insert(metric.name).second) {
        return Error(
            Find(metrics[i], "name"), at + ".name",
            absl::StrCat("duplicate metric name ", Quote(metric.name)));
      }
      out->metrics.push_back(std::move(metric));
    }
    for (size_t i = 0; i < out->metrics.size(); ++i) {
      const std::string at = absl::StrCat(Child(path, "metrics"), "[", i, "]");
      RETURN_IF_ERROR(CheckUtilisation(out->metrics, i, metrics[i], at));
    }
  }
  if (YNode n = Find(node, "builtins"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadBuiltins(n, Child(path, "builtins"), &out->builtins));
  }
  if (YNode n = Find(node, "herd"); n.IsDefined()) {
    const std::string herd = Child(path, "herd");
    RETURN_IF_ERROR(CheckMap(n, herd, {"penaltyPerPlacement", "window"}));
    YNode p;
    RETURN_IF_ERROR(GetDouble(n, herd, "penaltyPerPlacement",
                              &out->herd.penalty_per_placement, &p));
    if (out->herd.penalty_per_placement < 0 ||
        out->herd.penalty_per_placement > 100) {
      return Error(p, Child(herd, "penaltyPerPlacement"),
                   "must be in [0, 100]");
    }
    RETURN_IF_ERROR(GetPositiveDuration(n, herd, "window", &out->herd.window));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadUnloaded(const YNode& node, const std::string& path,
                                  UnloadedValue* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"utilisation", "full"}));
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "utilisation", &out->utilisation, &v));
  if (out->utilisation.empty()) {
    return Error(v.IsDefined() ? v : node, Child(path, "utilisation"),
                 "required: the metric whose value is the node's utilisation");
  }
  RETURN_IF_ERROR(GetDouble(node, path, "full", &out->full, &v));
  if (!(out->full > 0) || !std::isfinite(out->full)) {
    return Error(v, Child(path, "full"), "must be a finite number > 0");
  }
  return absl::OkStatus();
}

// Metric i's `key`.utilisation (`name`) names another metric of `metrics`
// that `why_not` finds nothing wrong with ("": nothing).
absl::Status Loader::CheckNamedMetric(
    const std::vector<MetricConfig>& metrics, size_t i, const std::string& name,
    const YNode& node, const std::string& path, const char* key,
    absl::FunctionRef<std::string(const MetricConfig&)> why_not) {
  const YNode at = Find(Find(node, key), "utilisation");
  const std::string field = Child(Child(path, key), "utilisation");
  for (const MetricConfig& m : metrics) {
    if (m.name != name) continue;
    if (&m == &metrics[i]) {
      return Error(at, field, "names this metric; name its utilisation");
    }
    if (std::string why = why_not(m); !why.empty()) {
      return Error(at, field, absl::StrCat(Quote(m.name), " ", why));
    }
    return absl::OkStatus();
  }
  return Error(at, field,
               absl::StrCat("no metric ", Quote(name), " in this list"));
}

// A queueing estimate's utilisation names another metric of `metrics`
// whose estimate is from requests; an unloaded term's, another metric that
// is not unloaded itself.
absl::Status Loader::CheckUtilisation(const std::vector<MetricConfig>& metrics,
                                      size_t i, const YNode& node,
                                      const std::string& path) {
  const MetricConfig& metric = metrics[i];
  if (metric.estimate.basis == UnseenLoadEstimate::Basis::kQueueing) {
    RETURN_IF_ERROR(CheckNamedMetric(
        metrics, i, metric.estimate.utilisation, node, path, "estimate",
        [](const MetricConfig& m) -> std::string {
          return m.estimate.on_resources()
                     ? ""
                     : "has no estimate from a pod's CPU or memory, so no "
                       "unseen load to grow with";
        }));
  }
  if (metric.unloaded.enabled()) {
    RETURN_IF_ERROR(CheckNamedMetric(
        metrics, i, metric.unloaded.utilisation, node, path, "unloaded",
        [](const MetricConfig& m) -> std::string {
          return m.unloaded.enabled()
                     ? "is unloaded itself; name a metric read as sampled"
                     : "";
        }));
  }
  return absl::OkStatus();
}

// `source`, or `query` with what the backend type allows of it.
absl::Status Loader::LoadMetricOrigin(const YNode& node,
                                      const std::string& path,
                                      const Config& config, MetricConfig* out) {
  YNode v;
  if (YNode n = Find(node, "source"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadSource(n, Child(path, "source"), &out->origin));
    // What only a query metric has.
    for (const char* key : {"query", "ttl", "maxStaleness", "join",
                            "aggregations"}) {
      if (YNode q = Find(node, key); q.IsDefined()) {
        return Error(q, Child(path, key),
                     "only for a metric with a query, not with source");
      }
    }
  } else {
    RETURN_IF_ERROR(GetString(node, path, "query", &out->query, &v));
    if (!v.IsDefined()) {
      return Error(node, Child(path, "query"),
                   "required (or a source: nodeAnnotation or nodeLabel)");
    }
    if (absl::StripAsciiWhitespace(out->query).empty()) {
      return Error(v, Child(path, "query"), "must not be empty");
    }
    if (config.backend.type == BackendType::kMetricsServer) {
      if (!absl::c_linear_search(kMetricsServerQueries, out->query)) {
        return Error(v, Child(path, "query"),
                     absl::StrCat("with backend type metricsServer, one of ",
                                  absl::StrJoin(kMetricsServerQueries, ", "),
                                  "; got ", Quote(out->query)));
      }
      if (YNode j = Find(node, "join"); j.IsDefined()) {
        return Error(j, Child(path, "join"),
                     "not used with backend type metricsServer, whose items "
                     "name their node");
      }
    }
  }
  return absl::OkStatus();
}

// `ttl` and `maxStaleness`, each the cache's unless set.
absl::Status Loader::LoadFreshness(const YNode& node, const std::string& path,
                                   const CacheConfig& cache,
                                   MetricConfig* out) {
  out->ttl = cache.ttl;
  out->max_staleness = cache.max_staleness;
  YNode ttl_node, stale_node;
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "ttl", &out->ttl, &ttl_node));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "maxStaleness",
                                      &out->max_staleness, &stale_node));
  if (out->max_staleness < out->ttl) {
    if (stale_node.IsDefined()) {
      return Error(stale_node, Child(path, "maxStaleness"),
                   absl::StrCat("must be >= the metric's ttl (",
                                absl::FormatDuration(out->ttl), ")"));
    }
    return Error(ttl_node, Child(path, "ttl"),
                 absl::StrCat("must be <= the metric's maxStaleness (",
                              absl::FormatDuration(out->max_staleness), ")"));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadMetric(const YNode& node, const std::string& path,
                                const Config& config, MetricConfig* out) {
  // `preset` and `risk` become the keys they stand for (presets.h).
  RETURN_IF_ERROR(
      ExpandMetricShorthands(*this, node, path, config.backend.type));
  RETURN_IF_ERROR(
      CheckMap(node, path,
               {"name", "query", "source", "filter", "estimate", "weight",
                "direction", "normalization", "missing", "maxStaleness", "ttl",
                "join", "aggregations", "preset", "risk", "unloaded"}));
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "name", &out->name, &v));
  if (!v.IsDefined()) return Error(node, Child(path, "name"), "required");
  if (!IsMetricName(out->name)) {
    return Error(v, Child(path, "name"),
                 absl::StrCat("must match [A-Za-z_][A-Za-z0-9_.:-]*, got ",
                              Quote(out->name)));
  }
  for (const BuiltinTermSpec& builtin : kBuiltinTerms) {
    if (out->name == builtin.name) {
      return Error(v, Child(path, "name"),
                   absl::StrCat(Quote(out->name), " is a built-in term name"));
    }
  }
  RETURN_IF_ERROR(LoadMetricOrigin(node, path, config, out));
  if (YNode n = Find(node, "filter"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadThreshold(n, Child(path, "filter"), &out->filter));
  }
  if (YNode n = Find(node, "estimate"); n.IsDefined()) {
    const std::string p = Child(path, "estimate");
    if (!out->origin.is_query()) {
      return Error(n, p,
                   "only a query's values lag behind placements; a node "
                   "attribute takes no estimate");
    }
    RETURN_IF_ERROR(LoadEstimate(n, p, config.backend.type, &out->estimate));
  }
  if (YNode n = Find(node, "unloaded"); n.IsDefined()) {
    const std::string p = Child(path, "unloaded");
    if (!out->origin.is_query()) {
      return Error(n, p,
                   "only a query's samples carry the node's load; a node "
                   "attribute takes no unloaded");
    }
    if (out->estimate.enabled()) {
      return Error(n, p,
                   "not with estimate: the load the samples have not seen "
                   "is the utilisation metric's to estimate");
    }
    RETURN_IF_ERROR(LoadUnloaded(n, p, &out->unloaded));
  }
  RETURN_IF_ERROR(GetDouble(node, path, "weight", &out->weight, &v));
  if (!(out->weight >= 0)) {
    return Error(v, Child(path, "weight"), "must be >= 0");
  }
  YNode direction;
  RETURN_IF_ERROR(GetEnum<Direction>(
      node, path, "direction",
      {{"lower", Direction::kLower}, {"higher", Direction::kHigher}},
      &out->direction, &direction));
  if (YNode n = Find(node, "normalization"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadNormalization(n, Child(path, "normalization"), &out->normalization));
  }
  // Either value would be ignored: an error rather than a silent no-op.
  if (out->normalization.type == NormalizationType::kTarget &&
      direction.IsDefined()) {
    return Error(direction, Child(path, "direction"),
                 "a target normalization scores by distance from its target; "
                 "direction does not apply");
  }
  RETURN_IF_ERROR(GetEnum<MissingPolicy>(node, path, "missing",
                                         {{"neutral", MissingPolicy::kNeutral},
                                          {"worst", MissingPolicy::kWorst},
                                          {"exclude", MissingPolicy::kExclude},
                                          {"skip", MissingPolicy::kSkip}},
                                         &out->missing));
  RETURN_IF_ERROR(LoadFreshness(node, path, config.cache, out));
  const bool sysdig = config.backend.type == BackendType::kSysdig;
  out->join.label = sysdig ? "host.hostName" : "node";
  if (YNode n = Find(node, "join"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadJoin(n, Child(path, "join"), &out->join));
  } else {
    // Without a join the prometheus source finds how the series name nodes.
    out->join.automatic = out->origin.is_query() &&
                          config.backend.type == BackendType::kPrometheus;
  }
  if (YNode n = Find(node, "aggregations"); n.IsDefined()) {
    std::string p = Child(path, "aggregations");
    if (!sysdig) return Error(n, p, "only valid with backend type sysdig");
    RETURN_IF_ERROR(LoadAggregations(n, p, &out->aggregations));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadAggregations(const YNode& node, const std::string& p,
                                      AggregationsConfig* out) {
  RETURN_IF_ERROR(CheckMap(node, p, {"time", "group"}));
  for (const auto& [key, field] :
       {std::pair<const char*, std::string*>{"time", &out->time},
        {"group", &out->group}}) {
    YNode a;
    RETURN_IF_ERROR(GetString(node, p, key, field, &a));
    static const std::set<std::string> kAggregations = {
        "avg", "timeAvg", "sum", "min", "max", "count", "concat", "distinct"};
    if (a.IsDefined() && kAggregations.count(*field) == 0) {
      return Error(a, Child(p, key),
                   absl::StrCat("must be one of avg, timeAvg, sum, min, max, "
                                "count, concat, distinct; got ",
                                Quote(*field)));
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadSource(const YNode& node, const std::string& path,
                                MetricOrigin* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"nodeAnnotation", "nodeLabel"}));
  if (node.size() != 1) {
    return Error(node, path, "needs exactly one of nodeAnnotation, nodeLabel");
  }
  for (const auto& [key, kind] :
       {std::pair<const char*, MetricOrigin::Kind>{
            "nodeAnnotation", MetricOrigin::Kind::kNodeAnnotation},
        {"nodeLabel", MetricOrigin::Kind::kNodeLabel}}) {
    YNode v;
    RETURN_IF_ERROR(GetString(node, path, key, &out->key, &v));
    if (!v.IsDefined()) continue;
    if (!IsQualifiedName(out->key)) {
      return Error(v, Child(path, key),
                   absl::StrCat("must be a valid key ([prefix/]name), got ",
                                Quote(out->key)));
    }
    out->kind = kind;
  }
  if (out->is_query()) {
    return Error(node, path, "needs exactly one of nodeAnnotation, nodeLabel");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadEstimate(const YNode& node, const std::string& path,
                                  BackendType backend,
                                  UnseenLoadEstimate* out) {
  using Basis = UnseenLoadEstimate::Basis;
  RETURN_IF_ERROR(CheckMap(
      node, path,
      {"from", "factor", "warmup", "siblings", "utilisation", "full", "fade"}));
  YNode from;
  RETURN_IF_ERROR(GetEnum<Basis>(node, path, "from",
                                 {{"none", Basis::kNone},
                                  {"cpuRequests", Basis::kCpuRequests},
                                  {"memoryRequests", Basis::kMemoryRequests},
                                  {"cpuLimits", Basis::kCpuLimits},
                                  {"memoryLimits", Basis::kMemoryLimits},
                                  {"perPod", Basis::kPerPod},
                                  {"perPodShare", Basis::kPerPodShare},
                                  {"queueing", Basis::kQueueing}},
                                 &out->basis, &from));
  if (!from.IsDefined()) return Error(node, Child(path, "from"), "required");
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "utilisation", &out->utilisation, &v));
  if (out->basis == Basis::kQueueing) {
    if (out->utilisation.empty()) {
      return Error(v.IsDefined() ? v : node, Child(path, "utilisation"),
                   "required with from queueing: the metric whose value is "
                   "the node's utilisation");
    }
    for (const char* key : {"factor", "warmup", "siblings", "fade"}) {
      if (YNode n = Find(node, key); n.IsDefined()) {
        return Error(n, Child(path, key),
                     "not with from queueing: the metric named by "
                     "utilisation estimates the load");
      }
    }
    RETURN_IF_ERROR(GetDouble(node, path, "full", &out->full, &v));
    if (!(out->full > 0) || !std::isfinite(out->full)) {
      return Error(v, Child(path, "full"), "must be a finite number > 0");
    }
    return absl::OkStatus();
  }
  if (v.IsDefined()) {
    return Error(v, Child(path, "utilisation"), "only with from queueing");
  }
  if (YNode n = Find(node, "full"); n.IsDefined()) {
    return Error(n, Child(path, "full"), "only with from queueing");
  }
  using Fade = UnseenLoadEstimate::Fade;
  RETURN_IF_ERROR(GetEnum<Fade>(node, path, "fade",
                                {{"step", Fade::kStep},
                                 {"linear", Fade::kLinear},
                                 {"measured", Fade::kMeasured}},
                                &out->fade, &v));
  RETURN_IF_ERROR(GetDouble(node, path, "factor", &out->factor, &v));
  if (!std::isfinite(out->factor)) {
    return Error(v, Child(path, "factor"), "must be a finite number");
  }
  absl::Duration warmup = absl::Milliseconds(out->warmup_ms);
  RETURN_IF_ERROR(GetDuration(node, path, "warmup", &warmup, &v));
  if (warmup < absl::ZeroDuration()) {
    return Error(v, Child(path, "warmup"), "must be >= 0");
  }
  out->warmup_ms = absl::ToInt64Milliseconds(warmup);
  if (YNode n = Find(node, "siblings"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadSiblings(n, Child(path, "siblings"), backend, out));
  }
  if (out->fade == Fade::kMeasured && out->siblings_query.empty()) {
    return Error(Find(node, "fade"), Child(path, "fade"),
                 "measured reads the pod's own sample of the siblings "
                 "query: needs siblings");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadSiblings(const YNode& node, const std::string& path,
                                  BackendType backend,
                                  UnseenLoadEstimate* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"query", "warmup"}));
  if (!out->on_resources()) {
    return Error(node, path,
                 "siblings' usage replaces a pod's requests or limits: needs "
                 "from cpuRequests, memoryRequests, cpuLimits or "
                 "memoryLimits");
  }
  if (backend != BackendType::kPrometheus) {
    return Error(node, path,
                 "per-pod usage is queried with PromQL: needs backend type "
                 "prometheus");
  }
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "query", &out->siblings_query, &v));
  if (out->siblings_query.empty()) {
    return Error(v.IsDefined() ? v : node, Child(path, "query"),
                 "required, a query with one series per pod labelled "
                 "namespace and pod");
  }
  absl::Duration warmup;
  RETURN_IF_ERROR(GetDuration(node, path, "warmup", &warmup, &v));
  if (v.IsDefined()) {
    out->siblings_warmup_ms = absl::ToInt64Milliseconds(warmup);
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadBuiltins(const YNode& node, const std::string& path,
                                  BuiltinWeights* out) {
  std::vector<const char*> names;
  for (const BuiltinTermSpec& builtin : kBuiltinTerms) {
    names.push_back(builtin.name);
  }
  RETURN_IF_ERROR(CheckMap(node, path, names));
  for (const BuiltinTermSpec& builtin : kBuiltinTerms) {
    double& weight = (*out)[builtin.term];
    YNode v;
    RETURN_IF_ERROR(GetDouble(node, path, builtin.name, &weight, &v));
    if (weight < 0) return Error(v, Child(path, builtin.name), "must be >= 0");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadLeaderElection(const YNode& node,
                                        const std::string& path,
                                        LeaderElectionConfig* out) {
  RETURN_IF_ERROR(CheckMap(node, path,
                           {"enabled", "leaseName", "leaseNamespace",
                            "leaseDuration", "renewDeadline", "retryPeriod"}));
  RETURN_IF_ERROR(GetBool(node, path, "enabled", &out->enabled));
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "leaseName", &out->lease_name, &v));
  if (v.IsDefined() && !IsDns1123Subdomain(out->lease_name)) {
    return Error(v, Child(path, "leaseName"),
                 "must be a lowercase DNS-1123 subdomain (a-z, 0-9, '-', '.')");
  }
  RETURN_IF_ERROR(
      GetString(node, path, "leaseNamespace", &out->lease_namespace, &v));
  if (v.IsDefined() && !IsDns1123Label(out->lease_namespace)) {
    return Error(v, Child(path, "leaseNamespace"),
                 "must be a lowercase DNS-1123 label (a-z, 0-9, '-')");
  }
  YNode lease, renew, retry;
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "leaseDuration",
                                      &out->lease_duration, &lease));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "renewDeadline",
                                      &out->renew_deadline, &renew));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "retryPeriod",
                                      &out->retry_period, &retry));
  if (out->renew_deadline >= out->lease_duration) {
    return Error(renew.IsDefined() ? renew : (lease.IsDefined() ? lease : node),
                 Child(path, "renewDeadline"),
                 absl::StrCat("must be < leaseDuration (",
                              absl::FormatDuration(out->lease_duration), ")"));
  }
  if (out->retry_period >= out->renew_deadline) {
    return Error(retry.IsDefined() ? retry : (renew.IsDefined() ? renew : node),
                 Child(path, "retryPeriod"),
                 absl::StrCat("must be < renewDeadline (",
                              absl::FormatDuration(out->renew_deadline), ")"));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadListenAddress(const YNode& node,
                                       const std::string& path,
                                       std::string* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"listenAddress"}));
  YNode v;
  RETURN_IF_ERROR(GetString(node, path, "listenAddress", out, &v));
  if (!v.IsDefined()) return absl::OkStatus();
  const std::string& a = *out;
  size_t colon = a.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon + 1 < a.size() &&
      a.size() - colon - 1 <= 5 &&
      absl::SimpleAtoi(absl::string_view(a).substr(colon + 1), &port) &&
      absl::ascii_isdigit(a[colon + 1]) && port >= 0 && port <= 65535) {
    return absl::OkStatus();
  }
  return Error(v, Child(path, "listenAddress"),
               absl::StrCat("must be [host]:port with port in [0, 65535], got ",
                            Quote(a)));
}


absl::StatusOr<Config> LoadConfigString(absl::string_view text,
                                        absl::string_view display_name,
                                        const LoadOptions& options) {
  Loader loader(display_name, options.check_files);
  Config config;
  try {
    std::vector<YNode> docs = LoadAllYaml(text);
    if (docs.size() > 1) {
      return loader.Error(docs[1], "",
                          "expected one YAML document, found several");
    }
    YNode root = docs.empty() ? YNode() : docs[0];
    RETURN_IF_ERROR(loader.Load(root, &config));
  } catch (const YAML::Exception& e) {
    return loader.ErrorAt(e.mark, "",
                          absl::StrCat("invalid YAML: ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(display_name, ": cannot read configuration: ", e.what()));
  }
  return config;
}

absl::StatusOr<Config> LoadConfigFile(const std::string& path,
                                      const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string msg =
        absl::StrCat("cannot open config file ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::InvalidArgumentError(msg);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read config file ", path));
  }
  return LoadConfigString(text.str(), path, options);
}

std::vector<MetricConfig> QueryMetrics(const Config& config) {
  std::vector<MetricConfig> out;
  for (const ProfileConfig& profile : config.profiles) {
    for (const MetricConfig& m : profile.metrics) {
      if (!m.origin.is_query()) continue;
      if (absl::c_any_of(out, [&](const MetricConfig& seen) {
            return seen.name == m.name;
          })) {
        continue;
      }
      out.push_back(m);
    }
  }
  return out;
}

std::vector<std::string> NodeAnnotationKeys(const Config& config) {
  std::vector<std::string> out;
  auto add = [&out](std::string key) {
    if (!absl::c_linear_search(out, key)) out.push_back(std::move(key));
  };
  for (const ProfileConfig& profile : config.profiles) {
    for (const MetricConfig& m : profile.metrics) {
      if (m.origin.kind == MetricOrigin::Kind::kNodeAnnotation) {
        add(m.origin.key);
      }
      if (m.filter.any()) {
        add(MaxFilterAnnotation(m.name));
        add(MinFilterAnnotation(m.name));
      }
    }
  }
  return out;
}

const ProfileConfig* FindProfile(const Config& config,
                                 absl::string_view scheduler_name) {
  for (const ProfileConfig& profile : config.profiles) {
    if (profile.scheduler_name == scheduler_name) return &profile;
  }
  return nullptr;
}

std::vector<std::string> SchedulerNames(const Config& config) {
  std::vector<std::string> out;
  for (const ProfileConfig& profile : config.profiles) {
    out.push_back(profile.scheduler_name);
  }
  return out;
}

std::vector<std::string> ConfigWarnings(const Config& config) {
  std::vector<std::string> out;
  const BackendConfig& b = config.backend;
  if (b.insecure_skip_verify) {
    out.push_back(
        "backend.insecureSkipVerify is true: the metrics backend's TLS "
        "certificate is not verified; anyone on the path can read its token "
        "and forge its answers");
  }
  if (!b.cert_file.empty() && absl::StartsWith(b.url, "http://")) {
    out.push_back(
        "backend.certFile is set but backend.url is plain http://: the "
        "client certificate is never presented; use https://");
  }
  const bool secret = !b.token_file.empty() || !b.basic_auth.username.empty();
  if (secret && absl::StartsWith(b.url, "http://") &&
      !IsLoopbackHost(UrlHost(b.url))) {
    out.push_back(absl::StrCat(
        "backend.url is plain http:// to ", UrlHost(b.url), ": the ",
        b.token_file.empty() ? "basic auth password" : "bearer token",
        " is sent in clear text; use https://"));
  }
  // One query under two names is two series, fetched twice.
  const std::vector<MetricConfig> queries = QueryMetrics(config);
  for (size_t i = 0; i < queries.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (SameFetch(queries[i], queries[j])) {
        out.push_back(absl::StrCat(
            "metrics ", Quote(queries[j].name), " and ", Quote(queries[i].name),
            " fetch the same query: give them one name to fetch it once"));
        break;
      }
    }
  }
  return out;
}

}  // namespace ms
