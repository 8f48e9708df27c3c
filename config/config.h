// The scheduler's configuration: one YAML file, parsed and validated once.
//
// Who calls it: scheduler/main loads the file at start; metrics/ and
// scoring/ read the resulting struct and may trust it (every invariant listed
// below holds for a Config returned by LoadConfigFile/LoadConfigString).
// Thread-compatible: a loaded Config is a plain value.
//
// The file, with every key at its default unless marked "required":
//
//   apiVersion: metrics-scheduler/v1alpha1      # required, exactly this
//   kind: MetricsSchedulerConfiguration         # required, exactly this
//   schedulerName: metrics-scheduler  # these four keys (schedulerName,
//                                     # metrics, builtins, herd) are the
//                                     # one-profile form of `profiles`
//   profiles:                         # default: the one profile above
//     - schedulerName: NAME           # required, unique
//       metrics: [...]                # as below
//       builtins: {...}
//       herd: {...}
//   backend:
//     type: prometheus                # prometheus | sysdig | metricsServer
//     url: ""                         # required when a metric has a query
//                                     # (metricsServer: only type, timeout)
//     timeout: 2s
//     tokenFile: ""                   # bearer token, re-read on every use
//     caFile: ""
//     certFile: ""                    # client certificate; with keyFile
//     keyFile: ""
//     insecureSkipVerify: false
//     headers: {X-Scope-OrgID: tenant-a, X-Other: {valueFile: /path}}
//     proxyURL: ""                    # none; the environment is ignored
//     basicAuth: {username: "", passwordFile: ""}  # prometheus only
//     sysdig: {last: 60s, sampling: 60s, dataSourceType: host}  # sysdig only
//   cache: {ttl: 15s, maxStaleness: 2m, refreshTimeout: 5s}
//   metrics:                          # default: none (fallback scoring only)
//     - name: http_latency            # required, unique
//       query: 'histogram_quantile(...)'   # required, unless `source`;
//                                     # metricsServer: cpu, memory,
//                                     # cpuUtilization or memoryUtilization
//       source: {nodeAnnotation: KEY} # or {nodeLabel: KEY}: read from the
//                                     # Node, not the backend; no query
//       filter: {max: X, min: Y}      # default: none; either or both
//         scopes:                     # bounds by pod class and node pool:
//           - {pods: {...}, nodes: {...}, max: X, min: Y}  # the first
//                                     # that selects both replaces max
//                                     # and min
//       weight: 1                     # >= 0; 0: queried, scores nothing
//       direction: lower              # lower | higher (which is better);
//                                     # not with target
//       normalization: {type: minmax} # minmax | ratio | range (min, max)
//                                     # | target (target, max; min: 0)
//       missing: neutral              # neutral | worst | exclude | skip
//       maxStaleness: <cache.maxStaleness>   # query metrics only
//       ttl: <cache.ttl>                     # query metrics only
//       join: {label: node, match: name, regex: ""}  # query metrics only,
//                                     # not metricsServer (nodes by name);
//                                     # prometheus default: detected per
//                                     # fetch (JoinConfig::automatic)
//       aggregations: {time: timeAvg, group: avg}  # sysdig only
//       preset: kube-prometheus/cpu   # or {name: NAME, PARAM: ...}: a
//                                     # tested query with its name, join
//                                     # and normalization; keys written
//                                     # beside it win (config/presets.h)
//       risk: {k: 1, window: 15m, step: 1m}  # prometheus: the query's
//                                     # mean + k standard deviations
//   builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: 1,
//              interPodAffinity: 2, podTopologySpread: 2, nodeAffinity: 2,
//              taintToleration: 3, imageLocality: 1, volumeBinding: 1,
//              siblingSpread: 0}
//   nodeAffinity:                     # kube-scheduler's NodeAffinityArgs
//     addedAffinity:                  # applies to every pod; default: none
//       requiredDuringSchedulingIgnoredDuringExecution:
//         nodeSelectorTerms: [{matchExpressions: [...], matchFields: [...]}]
//       preferredDuringSchedulingIgnoredDuringExecution:
//         - {weight: 1, preference: {matchExpressions: [...]}}  # 1-100
//   fallback: {coldCacheDeadline: 500ms}
//   herd: {penaltyPerPlacement: 10, window: 30s}
//   preemption:                       # kube-scheduler's DefaultPreemption
//     enabled: true
//     minCandidateNodesPercentage: 10  # 0-100
//     minCandidateNodesAbsolute: 100   # >= 0; not both 0
//   leaderElection:
//     enabled: true
//     leaseName: metrics-scheduler
//     leaseNamespace: metrics-scheduler
//     leaseDuration: 15s
//     renewDeadline: 10s
//     retryPeriod: 2s
//   http: {listenAddress: ":10260"}
//   extender: {listenAddress: ""}     # e.g. ":10262": serve kube-scheduler's
//                                     # extender protocol; "": off
//   rebalance:                        # RebalanceConfig; docs/rebalance.md
//     mode: dryRun                    # off | dryRun | evict; off with no
//                                     # rebalance section
//     interval: 30s
//     hot:                            # required unless mode is off
//       - {metric: cpu, high: 0.85, aboveMean: 0.2, samples: 3, low: 0.7,
//          settle: <estimate.warmup>}
//     pods: {schedulerNames: [], namespaces: [], excludeNamespaces:
//            [kube-system], matchLabels: {}, matchExpressions: [],
//            maxPriority: 1000000000, minAge: 5m, localStorage: false}
//     limits: {perNode: 1, perNamespace: 5, perWorkload: 1, total: 5,
//              coolDown: 10m}
//
// Rules, all checked at load time:
// - Unknown keys and duplicate keys are errors (a typo never passes
//   silently); so is a value of the wrong YAML type.
// - An explicit null (`timeout:` with nothing after it) means "default".
// - Durations are Go-style: a sequence of number+unit, units ns, us, ms, s,
//   m, h (`500ms`, `15s`, `2m`, `1h30m`, `1.5s`); bare `0` is zero.
//   absl::FormatDuration prints them back in the same form.
// - Booleans are `true` or `false` only.
// - `normalization` may also be written as a bare string: `normalization:
//   ratio`.
// - `profiles` and the top-level schedulerName, metrics, builtins or herd
//   are not used together. A query metric's name means one series for the
//   whole process: profiles that use a name fetch it alike (query, join,
//   ttl, maxStaleness, aggregations) and share one fetch; each scores it
//   its own way (weight, direction, normalization, missing, filter).
//
// Errors are absl::InvalidArgumentError with the message
//   "<file>:<line>:<column>: <field path>: <what is wrong>"
// for example `config.yaml:7:13: metrics[1].weight: must be >= 0`. Line and
// column are 1-based and point at the offending value (or, for a missing
// required key, at the mapping that lacks it). Only the first error is
// reported. No exception escapes config/.
#ifndef METRICS_SCHEDULER_CONFIG_CONFIG_H_
#define METRICS_SCHEDULER_CONFIG_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "config/duration.h"  // ParseDuration, for the durations below
#include "model/metrics.h"
#include "model/pod.h"
#include "model/policy.h"
#include "model/threshold_scope.h"

namespace ms {

inline constexpr char kConfigApiVersion[] = "metrics-scheduler/v1alpha1";
inline constexpr char kConfigKind[] = "MetricsSchedulerConfiguration";

enum class BackendType {
  kPrometheus,
  kSysdig,
  // The resource metrics API (metrics.k8s.io/v1beta1 nodes) through the
  // apiserver: only `timeout` applies; queries are kMetricsServerQueries.
  kMetricsServer,
};

// What a metricsServer metric's query may be: usage in cores and bytes, and
// usage over the Node's allocatable (metrics/metrics_server_source.h).
inline constexpr const char* kMetricsServerQueries[] = {
    "cpu", "memory", "cpuUtilization", "memoryUtilization"};

struct BasicAuthConfig {
  std::string username;       // default ""; basic auth is off when empty
  std::string password_file;  // default ""; required when username is set
};

// Sysdig data API request parameters (backend.type: sysdig only).
struct SysdigConfig {
  absl::Duration last = absl::Seconds(60);      // whole seconds, > 0
  absl::Duration sampling = absl::Seconds(60);  // whole seconds, > 0
  std::string data_source_type = "host";        // not empty
};

// An extra request header for the backend (multi-tenant Mimir, Cortex and
// Thanos read the tenant from X-Scope-OrgID): a fixed value, or the
// content of a file, re-read when it changes.
struct HeaderConfig {
  std::string name;        // an HTTP token; not Authorization,
                           // Content-Type, Content-Length or Host
  std::string value;       // when value_file is empty; not empty
  std::string value_file;  // the value, surrounding white space removed
};

struct BackendConfig {
  BackendType type = BackendType::kPrometheus;
  // Base URL, http:// or https://. Default ""; required when any metric
  // has a query, unless the type is metricsServer.
  std::string url;
  absl::Duration timeout = absl::Seconds(2);  // per query, > 0
  std::string token_file;                     // default "": no bearer token
  std::string ca_file;                        // default "": system CAs
  // A client certificate and its key (PEM), both or neither; re-read when
  // they change, for TLS client authentication.
  std::string cert_file;
  std::string key_file;
  bool insecure_skip_verify = false;
  std::vector<HeaderConfig> headers;  // default: none
  // Default "": no proxy, whatever the http_proxy, https_proxy and
  // no_proxy environment variables say. http://, https:// or socks5://.
  std::string proxy_url;
  // An answer larger than this is refused and the metric falls back (every
  // type; for metricsServer, the list of node metrics): bytes, or a
  // quantity such as 64Mi. > 0.
  int64_t max_response_bytes = int64_t{64} << 20;
  BasicAuthConfig basic_auth;  // prometheus only
  SysdigConfig sysdig;         // sysdig only
};

struct CacheConfig {
  absl::Duration ttl = absl::Seconds(15);  // refresh period, > 0
  // A sample older than this is stale; >= ttl.
  absl::Duration max_staleness = absl::Minutes(2);
  absl::Duration refresh_timeout = absl::Seconds(5);  // > 0
};

// How the series of a query name nodes.
enum class JoinMatch {
  kName,     // the label holds the node name (sysdig: or its short form)
  kAddress,  // the label holds an address (`10.0.0.7:9100`); the port is
             // ignored, the host matched against the Node's addresses
};

struct JoinConfig {
  // Whether the join is detected on each fetch: set for a prometheus
  // metric without a `join` key (metrics/join_detect.h picks, of label
  // `node` by name, `instance` by address and the host-name labels, the one
  // that names the most nodes). label, match and regex then hold the first
  // candidate (`node` by name) and are not used by the source. Never set
  // for sysdig (default: host.hostName) or metricsServer.
  bool automatic = false;
  // Default "node" for prometheus, "host.hostName" for sysdig.
  std::string label;
  JoinMatch match = JoinMatch::kName;
  // Default "": the whole label value. Otherwise an RE2 regex that
  // must match the whole label value; its first capture group (or the whole
  // match when it has none) is what is matched against the node.
  std::string regex;
};

// Sysdig aggregations (sysdig only). Each one of avg, timeAvg, sum, min,
// max, count, concat, distinct.
struct AggregationsConfig {
  std::string time = "timeAvg";
  std::string group = "avg";
};

// `filter`: bounds on a metric's fresh values. A node whose fresh value is
// above `max` or below `min` is filtered out ("node(s) had <metric> above
// <max>"); a missing or stale value is not (its `missing` policy applies to
// scoring only). Not applied in fallback mode. Finite; min <= max. At
// least one of max, min and scopes.
//
// `scopes` (model/threshold_scope.h), in order: the first whose `pods`
// selects the pod and whose `nodes` selects the node gives both bounds
// instead of max and min. Each scope has nodes, pods or both (nodes a label
// selector, pods a label selector with minPriority and maxPriority), and
// max, min or both, min <= max; minPriority <= maxPriority; at most
// kMaxThresholdScopes. A Node's annotations max.filter.metrics-scheduler.io/
// <metric> and min.filter.metrics-scheduler.io/<metric> override either
// bound on that node, for a metric with a filter.
struct MetricThreshold {
  std::optional<double> max;
  std::optional<double> min;
  std::vector<ThresholdScope> scopes;  // default: none

  // Whether the metric filters at all (the loader's "at least one").
  bool any() const { return max || min || !scopes.empty(); }
};

struct MetricConfig {
  // Required, unique, [A-Za-z_][A-Za-z0-9_.:-]*, and not the name of a
  // built-in term (kBuiltinTerms, model/policy.h).
  std::string name;
  // `source`: a query (the default), or a Node annotation or label whose
  // value is a decimal or a Kubernetes quantity (ParseAttributeValue); its
  // key is a valid label key. A node attribute needs no backend, is never
  // stale, and takes no query, ttl, maxStaleness, join or aggregations.
  MetricOrigin origin;
  std::string query;  // required and not empty for a query; else empty
  MetricThreshold filter;
  // `estimate`: what a pod adds before a sample shows it. Queries only;
  // factor finite, warmup >= 0.
  UnseenLoadEstimate estimate;
  // `unloaded`: the sample x (1 - u), u another metric's value as sampled.
  // Queries only; not with an estimate; utilisation names another metric
  // of the list, not unloaded itself; full finite, > 0.
  UnloadedValue unloaded;
  double weight = 1;  // finite, >= 0; 0 scores nothing (a filter's, or
                      // another metric's `unloaded` utilisation)
  Direction direction = Direction::kLower;
  NormalizationConfig normalization;
  MissingPolicy missing = MissingPolicy::kNeutral;
  // Resolved: the metric's own `maxStaleness`, else cache.maxStaleness.
  absl::Duration max_staleness = absl::Minutes(2);
  // Resolved: the metric's own `ttl`, else cache.ttl. max_staleness >= ttl.
  absl::Duration ttl = absl::Seconds(15);
  JoinConfig join;
  AggregationsConfig aggregations;  // sysdig only
};

// NodeAffinity's addedAffinity (kube-scheduler's NodeAffinityArgs): node
// affinity every pod gets on top of its own. Each requirement is valid as
// the apiserver validates a pod's (operators In, NotIn, Exists,
// DoesNotExist, Gt, Lt with the values each needs; matchFields only
// metadata.name with In or NotIn and one value); weights in [1, 100].
struct NodeAffinityConfig {
  std::vector<NodeSelectorTerm> added_required;  // ORed; empty: none
  std::vector<PreferredNodeTerm> added_preferred;
};

struct FallbackConfig {
  // How long a scheduling cycle waits for a cold metrics cache before it
  // scores with the built-in terms only. >= 0.
  absl::Duration cold_cache_deadline = absl::Milliseconds(500);
};

struct HerdConfig {
  // Score points the recentPlacements term loses per pod placed on the node
  // since its metrics were sampled. In [0, 100].
  double penalty_per_placement = 10;
  // Placements older than this no longer count. > 0.
  absl::Duration window = absl::Seconds(30);
};

// A pod no node fits may evict pods of lower priority (scoring/preemption.h).
struct PreemptionConfig {
  bool enabled = true;
  // Nodes to find candidates on: this share of those preemption could
  // help, at least the absolute number.
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

// `rebalance` (docs/rebalance.md): moving pods off nodes that stay hot,
// only to where a decision places them better. Off by default; dryRun
// says what it would move (Events, metrics) and evicts nothing.
enum class RebalanceMode { kOff, kDryRun, kEvict };

// When a node is hot on one metric, and how far its pods' removal must
// bring it. The metric is a query metric whose term, in the first profile
// that has it, is better lower and estimates each pod from its requests
// or per pod (what a pod takes away when it leaves).
struct HotBound {
  std::string metric;  // required
  // Hot: `samples` consecutive fresh samples above `high`, or above the
  // mean of the nodes' fresh values plus `above_mean`. At least one of
  // the two; finite; above_mean >= 0.
  std::optional<double> high;
  std::optional<double> above_mean;
  int32_t samples = 3;  // in [1, 100]
  // Victims are chosen so that what they take away brings the node to
  // `low` or under, and each one's new node stays at `low` or under with
  // it. Required, finite, <= high.
  double low = 0;
  // After pods left a node, its samples taken sooner than this still show
  // them and do not count. Default: the metric's estimate warmup. >= 0.
  std::optional<absl::Duration> settle;
};

// Which pods may move: every condition holds. Besides these, a pod moves
// only when a controller recreates it (never a DaemonSet's, a mirror or a
// bare pod), and its replacement is placed by this scheduler.
struct RebalancePods {
  // Default: every profile's. Each is a profile's schedulerName.
  std::vector<std::string> scheduler_names;
  std::vector<std::string> namespaces;  // default: every namespace
  std::vector<std::string> exclude_namespaces = {"kube-system"};
  std::optional<LabelSelector> labels;  // default: any labels
  // spec.priority at most this (default: every user-defined priority;
  // system-node-critical and system-cluster-critical are above it).
  int32_t max_priority = 1000000000;
  absl::Duration min_age = absl::Minutes(5);  // since status.startTime; >= 0
  // Pods with an emptyDir or hostPath volume lose its data when moved.
  bool local_storage = false;
};

// At most this many evictions in one interval (each >= 1), and a
// workload that lost a pod waits `cool_down` before it loses another.
struct RebalanceLimits {
  int32_t per_node = 1;
  int32_t per_namespace = 5;
  int32_t per_workload = 1;
  int32_t total = 5;
  absl::Duration cool_down = absl::Minutes(10);  // >= 0
};

struct RebalanceConfig {
  RebalanceMode mode = RebalanceMode::kOff;
  absl::Duration interval = absl::Seconds(30);  // > 0
  std::vector<HotBound> hot;  // at least one unless mode is off
  RebalancePods pods;
  RebalanceLimits limits;
};

struct LeaderElectionConfig {
  bool enabled = true;
  std::string lease_name = "metrics-scheduler";       // DNS-1123 subdomain
  std::string lease_namespace = "metrics-scheduler";  // DNS-1123 label
  // lease_duration > renew_deadline > retry_period > 0.
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

struct HttpConfig {
  // "[host]:port" of the plain HTTP endpoint: /healthz, /livez, /readyz
  // and /metrics (which moves to --secure-port when that is on); port in
  // [0, 65535].
  std::string listen_address = ":10260";
};

// kube-scheduler's extender protocol (scheduler/serve/extender_server.h).
struct ExtenderConfig {
  // "[host]:port" for POST /filter and /prioritize; "" (default): not
  // served.
  std::string listen_address;
};

// One scheduler name and how it places pods (kube-scheduler's profiles).
struct ProfileConfig {
  std::string scheduler_name = "metrics-scheduler";  // DNS-1123 subdomain
  std::vector<MetricConfig> metrics;                 // default: none
  BuiltinWeights builtins;                           // model/policy.h
  HerdConfig herd;
};

struct Config {
  BackendConfig backend;
  CacheConfig cache;
  // At least one, scheduler names unique. Pods of profiles[i]'s
  // schedulerName are placed by its policy; the first is also what extender
  // calls, shadow mode and explain (for a pod of another scheduler) use.
  std::vector<ProfileConfig> profiles = {ProfileConfig{}};
  NodeAffinityConfig node_affinity;
  FallbackConfig fallback;
  PreemptionConfig preemption;
  LeaderElectionConfig leader_election;
  HttpConfig http;
  ExtenderConfig extender;
  RebalanceConfig rebalance;
};

// The metrics fetched from the backend (those with a query) of every
// profile, each name once, in configuration order: what the metrics cache
// is given. Its snapshot names them (MetricValues::name) as terms do.
std::vector<MetricConfig> QueryMetrics(const Config& config);

// The annotation keys node-attribute metrics read and those that set a
// node's bounds on a metric with a filter (MaxFilterAnnotation,
// MinFilterAnnotation), each once: what the node informer keeps of a
// Node's annotations.
std::vector<std::string> NodeAnnotationKeys(const Config& config);

// The profile whose schedulerName is `scheduler_name`; null when none is.
const ProfileConfig* FindProfile(const Config& config,
                                 absl::string_view scheduler_name);

// The scheduler names of the profiles, in configuration order.
std::vector<std::string> SchedulerNames(const Config& config);

struct LoadOptions {
  // Also check the files the configuration names, as the process that loads
  // it would open them (relative paths from the working directory):
  // backend.tokenFile, basicAuth.passwordFile, certFile, keyFile and each
  // header's valueFile must be readable and hold more than white space,
  // backend.caFile must be readable. The
  // error points at the field, e.g.
  //   config.yaml:5:14: backend.tokenFile: cannot read /t: No such file or
  //   directory
  // scheduler/main checks them (validate-config, start-up, explain); a
  // configuration written for another machine (manifests/) is loaded
  // without.
  bool check_files = false;
};

// Parses and validates `text`; `display_name` names it in error messages.
// InvalidArgument for any syntax or validation error (and, with
// options.check_files, for a file that cannot be used).
absl::StatusOr<Config> LoadConfigString(absl::string_view text,
                                        absl::string_view display_name,
                                        const LoadOptions& options = {});

// Reads `path` and calls LoadConfigString with `path` as display name.
// NotFound when the file does not exist, PermissionDenied when it cannot be
// read for lack of permission, InvalidArgument as LoadConfigString.
absl::StatusOr<Config> LoadConfigFile(const std::string& path,
                                      const LoadOptions& options = {});

// What is legal but unwise in `config`, one sentence each, for the log at
// start and for validate-config: TLS verification off, a bearer token or
// basic auth password sent over plain http:// to a host that is not
// loopback, or one query fetched twice under two names. Empty when there is
// nothing to say.
std::vector<std::string> ConfigWarnings(const Config& config);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_CONFIG_H_
