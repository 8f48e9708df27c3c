#include "config/config.h"

#include <cerrno>
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
#include "config/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

// The authority of an http(s) URL: what lies between "://" and the path.
absl::string_view UrlAuthority(absl::string_view url) {
  size_t start = url.find("://");
  if (start == absl::string_view::npos) return "";
  url.remove_prefix(start + 3);
  return url.substr(0, url.find_first_of("/?#"));
}

// The host of an http(s) URL, without brackets or port.
std::string UrlHost(absl::string_view url) {
  absl::string_view authority = UrlAuthority(url);
  authority = authority.substr(authority.rfind('@') + 1);  // npos + 1 == 0
  if (absl::StartsWith(authority, "[")) {
    return std::string(authority.substr(1, authority.find(']') - 1));
  }
  return std::string(authority.substr(0, authority.find(':')));
}

bool IsLoopbackHost(absl::string_view host) {
  return host == "localhost" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

bool IsDns1123Label(absl::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDns1123Subdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    absl::string_view part = s.substr(start, dot == absl::string_view::npos
                                                 ? absl::string_view::npos
                                                 : dot - start);
    if (!IsDns1123Label(part)) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

// A label or annotation key: an optional DNS-1123 subdomain prefix and
// '/', then a name of 1-63 characters, alphanumeric at both ends and
// alphanumeric, '-', '_' or '.' between.
bool IsQualifiedName(absl::string_view s) {
  size_t slash = s.find('/');
  absl::string_view name = s;
  if (slash != absl::string_view::npos) {
    if (!IsDns1123Subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return absl::ascii_isalnum(name.front()) && absl::ascii_isalnum(name.back());
}

bool IsMetricName(absl::string_view s) {
  if (s.empty()) return false;
  if (!(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

// Whether two query metrics fetch the same series from the backend.
bool SameFetch(const MetricConfig& a, const MetricConfig& b) {
  return a.query == b.query && a.join.label == b.join.label &&
         a.join.match == b.join.match && a.join.regex == b.join.regex &&
         a.ttl == b.ttl && a.max_staleness == b.max_staleness &&
         a.aggregations.time == b.aggregations.time &&
         a.aggregations.group == b.aggregations.group;
}

// Reads one YAML document into a Config. Every yaml-cpp call that may throw
// is made inside LoadConfigString's try block.
//
// Beware: YAML::Node has reference semantics, and assigning to a node that
// is already bound (`a = b`) overwrites the document node `a` points to.
// Node handles are therefore only ever constructed or rebound with reset().
class Loader : public YamlReader {
 public:
  Loader(absl::string_view file, const LoadOptions& options)
      : YamlReader(file, options.check_files) {}

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
  absl::Status LoadThreshold(const YNode& node, const std::string& path,
                             MetricThreshold* out);
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
  // `{listenAddress: "[host]:port"}` (http, extender).
  absl::Status LoadListenAddress(const YNode& node, const std::string& path,
                                 std::string* out);
};

absl::Status Loader::Load(const YNode& root, Config* config) {
  if (!root.IsDefined() || root.IsNull()) {
    return ErrorAt(YAML::Mark(), "",
                   absl::StrCat("empty configuration; expected apiVersion: ",
                                kConfigApiVersion));
  }
  if (!root.IsMap()) return Error(root, "", "must be a mapping");
  RETURN_IF_ERROR(
      CheckMap(root, "",
               {"apiVersion", "kind", "schedulerName", "backend", "cache",
                "metrics", "builtins", "profiles", "nodeAffinity", "fallback",
                "herd", "preemption", "leaderElection", "http", "extender"}));

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
                                "join, ttl, maxStaleness and aggregations "
                                "must be the same (weight, direction, "
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

absl::Status Loader::LoadBackend(const YNode& node, const std::string& path,
                                 BackendConfig* out) {
  RETURN_IF_ERROR(
      CheckMap(node, path,
               {"type", "url", "timeout", "tokenFile", "caFile", "certFile",
                "keyFile", "insecureSkipVerify", "maxResponseBytes", "headers",
                "proxyURL", "basicAuth", "sysdig"}));
  RETURN_IF_ERROR(
      GetEnum<BackendType>(node, path, "type",
                           {{"prometheus", BackendType::kPrometheus},
                            {"sysdig", BackendType::kSysdig},
                            {"metricsServer", BackendType::kMetricsServer}},
                           &out->type));
  if (out->type == BackendType::kMetricsServer) {
    // The list goes through the apiserver connection: its address and
    // credentials are the scheduler's own.
    for (const char* key :
         {"url", "tokenFile", "caFile", "certFile", "keyFile",
          "insecureSkipVerify", "headers", "proxyURL", "basicAuth",
          "sysdig"}) {
      if (YNode k = Find(node, key); k.IsDefined()) {
        return Error(k, Child(path, key),
                     "not used by type metricsServer, which reads through "
                     "the scheduler's own apiserver connection");
      }
    }
  }
  YNode url_node;
  RETURN_IF_ERROR(GetString(node, path, "url", &out->url, &url_node));
  if (url_node.IsDefined() && !out->url.empty() &&
      !(absl::StartsWith(out->url, "http://") ||
        absl::StartsWith(out->url, "https://"))) {
    return Error(url_node, Child(path, "url"),
                 absl::StrCat("must start with http:// or https://, got ",
                              Quote(out->url)));
  }
  if (absl::StrContains(UrlAuthority(out->url), '@')) {
    // Not quoted back: it holds a password.
    return Error(url_node, Child(path, "url"),
                 "must not hold credentials (user:password@): put the user "
                 "in backend.basicAuth.username and the password in the "
                 "file backend.basicAuth.passwordFile names");
  }
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "timeout", &out->timeout));
  YNode token_node;
  RETURN_IF_ERROR(
      GetString(node, path, "tokenFile", &out->token_file, &token_node));
  RETURN_IF_ERROR(CheckFile(token_node, Child(path, "tokenFile"),
                            out->token_file, /*secret=*/true));
  YNode ca_node;
  RETURN_IF_ERROR(GetString(node, path, "caFile", &out->ca_file, &ca_node));
  RETURN_IF_ERROR(CheckFile(ca_node, Child(path, "caFile"), out->ca_file,
                            /*secret=*/false));
  YNode cert_node, key_node;
  RETURN_IF_ERROR(
      GetString(node, path, "certFile", &out->cert_file, &cert_node));
  RETURN_IF_ERROR(CheckFile(cert_node, Child(path, "certFile"),
                            out->cert_file, /*secret=*/true));
  RETURN_IF_ERROR(GetString(node, path, "keyFile", &out->key_file, &key_node));
  RETURN_IF_ERROR(CheckFile(key_node, Child(path, "keyFile"), out->key_file,
                            /*secret=*/true));
  if (out->cert_file.empty() != out->key_file.empty()) {
    return out->cert_file.empty()
               ? Error(key_node, Child(path, "certFile"),
                       "required when keyFile is set")
               : Error(cert_node, Child(path, "keyFile"),
                       "required when certFile is set");
  }
  RETURN_IF_ERROR(
      GetBool(node, path, "insecureSkipVerify", &out->insecure_skip_verify));
  RETURN_IF_ERROR(GetByteSize(node, path, "maxResponseBytes",
                              &out->max_response_bytes));
  if (YNode n = Find(node, "headers"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadHeaders(n, Child(path, "headers"), &out->headers));
  }
  YNode proxy_node;
  RETURN_IF_ERROR(
      GetString(node, path, "proxyURL", &out->proxy_url, &proxy_node));
  if (!out->proxy_url.empty() &&
      !(absl::StartsWith(out->proxy_url, "http://") ||
        absl::StartsWith(out->proxy_url, "https://") ||
        absl::StartsWith(out->proxy_url, "socks5://"))) {
    return Error(proxy_node, Child(path, "proxyURL"),
                 absl::StrCat("must start with http://, https:// or "
                              "socks5://, got ",
                              Quote(out->proxy_url)));
  }

  if (YNode n = Find(node, "basicAuth"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadBasicAuth(n, Child(path, "basicAuth"), out));
  }
  if (YNode n = Find(node, "sysdig"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadSysdig(n, Child(path, "sysdig"), out));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadBasicAuth(const YNode& node, const std::string& p,
                                   BackendConfig* out) {
  if (out->type != BackendType::kPrometheus) {
    return Error(node, p, "only valid with type prometheus");
  }
  RETURN_IF_ERROR(CheckMap(node, p, {"username", "passwordFile"}));
  RETURN_IF_ERROR(GetString(node, p, "username", &out->basic_auth.username));
  YNode password_node;
  RETURN_IF_ERROR(GetString(node, p, "passwordFile",
                            &out->basic_auth.password_file, &password_node));
  RETURN_IF_ERROR(CheckFile(password_node, Child(p, "passwordFile"),
                            out->basic_auth.password_file,
                            /*secret=*/true));
  if (!out->basic_auth.username.empty() &&
      out->basic_auth.password_file.empty()) {
    return Error(node, Child(p, "passwordFile"),
                 "required when username is set");
  }
  if (out->basic_auth.username.empty() &&
      !out->basic_auth.password_file.empty()) {
    return Error(node, Child(p, "username"),
                 "required when passwordFile is set");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadSysdig(const YNode& node, const std::string& p,
                                BackendConfig* out) {
  if (out->type != BackendType::kSysdig) {
    return Error(node, p, "only valid with type sysdig");
  }
  RETURN_IF_ERROR(CheckMap(node, p, {"last", "sampling", "dataSourceType"}));
  for (const auto& [key, field] :
       {std::pair<const char*, absl::Duration*>{"last", &out->sysdig.last},
        {"sampling", &out->sysdig.sampling}}) {
    YNode v;
    RETURN_IF_ERROR(GetPositiveDuration(node, p, key, field, &v));
    if (v.IsDefined() &&
        *field != absl::Seconds(absl::ToInt64Seconds(*field))) {
      return Error(v, Child(p, key), "must be a whole number of seconds");
    }
  }
  YNode v;
  RETURN_IF_ERROR(
      GetString(node, p, "dataSourceType", &out->sysdig.data_source_type, &v));
  if (v.IsDefined() && out->sysdig.data_source_type.empty()) {
    return Error(v, Child(p, "dataSourceType"), "must not be empty");
  }
  return absl::OkStatus();
}

// An HTTP header name: an RFC 9110 token.
bool IsHeaderName(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || absl::StrContains("!#$%&'*+-.^_`|~", c))) {
      return false;
    }
  }
  return true;
}

absl::Status Loader::LoadHeaders(const YNode& node, const std::string& path,
                                 std::vector<HeaderConfig>* out) {
  if (!node.IsMap()) return Error(node, path, "must be a mapping");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YNode key = it->first;
    const YNode value = it->second;
    if (!key.IsScalar()) return Error(key, path, "keys must be strings");
    HeaderConfig header{.name = key.Scalar()};
    const std::string p = Child(path, header.name);
    if (!IsHeaderName(header.name)) {
      return Error(key, p, "must be an HTTP header name");
    }
    for (const char* reserved :
         {"Authorization", "Content-Type", "Content-Length", "Host"}) {
      if (absl::EqualsIgnoreCase(header.name, reserved)) {
        return Error(key, p,
                     absl::StrCat(reserved, " is set by the scheduler",
                                  std::string_view(reserved) == "Authorization"
                                      ? " (use tokenFile or basicAuth)"
                                      : ""));
      }
    }
    for (const HeaderConfig& h : *out) {
      if (absl::EqualsIgnoreCase(h.name, header.name)) {
        return Error(key, p, "duplicate header (names ignore case)");
      }
    }
    if (value.IsMap()) {
      RETURN_IF_ERROR(CheckMap(value, p, {"valueFile"}));
      YNode file;
      RETURN_IF_ERROR(
          GetString(value, p, "valueFile", &header.value_file, &file));
      if (header.value_file.empty()) {
        return Error(file.IsDefined() ? file : value, Child(p, "valueFile"),
                     "required");
      }
      RETURN_IF_ERROR(CheckFile(file, Child(p, "valueFile"),
                                header.value_file, /*secret=*/true));
    } else {
      RETURN_IF_ERROR(Scalar(value, p, &header.value));
      if (header.value.empty()) {
        return Error(value, p, "must not be empty");
      }
    }
    if (absl::StrContains(header.value, '\r') ||
        absl::StrContains(header.value, '\n')) {
      return Error(value, p, "must not hold a line break");
    }
    out->push_back(std::move(header));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadCache(const YNode& node, const std::string& path,
                               CacheConfig* out) {
  RETURN_IF_ERROR(
      CheckMap(node, path, {"ttl", "maxStaleness", "refreshTimeout"}));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "ttl", &out->ttl));
  YNode v;
  RETURN_IF_ERROR(
      GetPositiveDuration(node, path, "maxStaleness", &out->max_staleness, &v));
  if (out->max_staleness < out->ttl) {
    return Error(v.IsDefined() ? v : node, Child(path, "maxStaleness"),
                 absl::StrCat("must be >= cache.ttl (", absl::FormatDuration(out->ttl),
                              ")"));
  }
  RETURN_IF_ERROR(
      GetPositiveDuration(node, path, "refreshTimeout", &out->refresh_timeout));
  return absl::OkStatus();
}

absl::Status Loader::LoadNormalization(const YNode& node,
                                       const std::string& path,
                                       NormalizationConfig* out) {
  static constexpr std::initializer_list<std::pair<const char*,
                                                   NormalizationType>>
      kTypes = {{"minmax", NormalizationType::kMinMax},
                {"range", NormalizationType::kRange},
                {"ratio", NormalizationType::kRatio}};
  if (node.IsScalar()) {
    // Shorthand: `normalization: ratio`.
    std::string s = node.Scalar();
    for (const auto& [name, value] : kTypes) {
      if (s == name) out->type = value;
    }
    if (s != "minmax" && s != "ratio") {
      if (s == "range") {
        return Error(node, path,
                     "range needs min and max: {type: range, min: LO, max: "
                     "HI}");
      }
      return Error(node, path,
                   absl::StrCat("must be one of minmax, range, ratio; got ",
                                Quote(s)));
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckMap(node, path, {"type", "min", "max"}));
  YNode t;
  RETURN_IF_ERROR(GetEnum<NormalizationType>(node, path, "type", kTypes,
                                             &out->type, &t));
  if (!t.IsDefined()) return Error(node, Child(path, "type"), "required");
  YNode min_node, max_node;
  RETURN_IF_ERROR(GetDouble(node, path, "min", &out->min, &min_node));
  RETURN_IF_ERROR(GetDouble(node, path, "max", &out->max, &max_node));
  if (out->type != NormalizationType::kRange) {
    if (min_node.IsDefined()) {
      return Error(min_node, Child(path, "min"), "only valid with type range");
    }
    if (max_node.IsDefined()) {
      return Error(max_node, Child(path, "max"), "only valid with type range");
    }
    return absl::OkStatus();
  }
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
  RETURN_IF_ERROR(CheckMap(node, path,
                           {"name", "query", "source", "filter", "weight",
                            "direction", "normalization", "missing",
                            "maxStaleness", "ttl", "join", "aggregations"}));
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
  RETURN_IF_ERROR(GetDouble(node, path, "weight", &out->weight, &v));
  if (!(out->weight > 0)) {
    return Error(v, Child(path, "weight"), "must be > 0");
  }
  RETURN_IF_ERROR(GetEnum<Direction>(
      node, path, "direction",
      {{"lower", Direction::kLower}, {"higher", Direction::kHigher}},
      &out->direction));
  if (YNode n = Find(node, "normalization"); n.IsDefined()) {
    RETURN_IF_ERROR(
        LoadNormalization(n, Child(path, "normalization"), &out->normalization));
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

absl::Status Loader::LoadThreshold(const YNode& node, const std::string& path,
                                   MetricThreshold* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"max", "min"}));
  YNode max_node, min_node;
  double max = 0, min = 0;
  RETURN_IF_ERROR(GetDouble(node, path, "max", &max, &max_node));
  RETURN_IF_ERROR(GetDouble(node, path, "min", &min, &min_node));
  if (!max_node.IsDefined() && !min_node.IsDefined()) {
    return Error(node, path, "needs max, min or both");
  }
  if (max_node.IsDefined()) out->max = max;
  if (min_node.IsDefined()) out->min = min;
  if (out->max && out->min && *out->min > *out->max) {
    return Error(min_node, Child(path, "min"),
                 absl::StrCat("must be <= max (", *out->max, ")"));
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

absl::Status Loader::LoadNodeAffinity(const YNode& node,
                                      const std::string& path,
                                      NodeAffinityConfig* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"addedAffinity"}));
  YNode added = Find(node, "addedAffinity");
  if (!added.IsDefined()) return absl::OkStatus();
  const std::string added_path = Child(path, "addedAffinity");
  constexpr char kRequired[] = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr char kPreferred[] =
      "preferredDuringSchedulingIgnoredDuringExecution";
  RETURN_IF_ERROR(CheckMap(added, added_path, {kRequired, kPreferred}));
  if (YNode required = Find(added, kRequired); required.IsDefined()) {
    const std::string p = Child(added_path, kRequired);
    RETURN_IF_ERROR(CheckMap(required, p, {"nodeSelectorTerms"}));
    YNode terms = Find(required, "nodeSelectorTerms");
    const std::string tp = Child(p, "nodeSelectorTerms");
    if (!terms.IsDefined() || !terms.IsSequence() || terms.size() == 0) {
      return Error(terms.IsDefined() ? terms : required, tp,
                   "must be a list of at least one term");
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      NodeSelectorTerm term;
      RETURN_IF_ERROR(LoadTerm(terms[i], absl::StrCat(tp, "[", i, "]"), &term));
      out->added_required.push_back(std::move(term));
    }
  }
  if (YNode preferred = Find(added, kPreferred); preferred.IsDefined()) {
    const std::string p = Child(added_path, kPreferred);
    if (!preferred.IsSequence()) return Error(preferred, p, "must be a list");
    for (size_t i = 0; i < preferred.size(); ++i) {
      const std::string ip = absl::StrCat(p, "[", i, "]");
      RETURN_IF_ERROR(CheckMap(preferred[i], ip, {"weight", "preference"}));
      double weight = 0;
      YNode w;
      RETURN_IF_ERROR(GetDouble(preferred[i], ip, "weight", &weight, &w));
      if (!w.IsDefined()) return Error(preferred[i], Child(ip, "weight"), "required");
      if (weight != std::floor(weight) || weight < 1 || weight > 100) {
        return Error(w, Child(ip, "weight"), "must be an integer in [1, 100]");
      }
      YNode pref = Find(preferred[i], "preference");
      if (!pref.IsDefined()) {
        return Error(preferred[i], Child(ip, "preference"), "required");
      }
      PreferredNodeTerm term{.weight = static_cast<int32_t>(weight)};
      RETURN_IF_ERROR(LoadTerm(pref, Child(ip, "preference"), &term.preference));
      out->added_preferred.push_back(std::move(term));
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadTerm(const YNode& node, const std::string& path,
                              NodeSelectorTerm* out) {
  RETURN_IF_ERROR(CheckMap(node, path, {"matchExpressions", "matchFields"}));
  if (YNode n = Find(node, "matchExpressions"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadRequirements(n, Child(path, "matchExpressions"),
                                     /*fields=*/false, &out->match_expressions));
  }
  if (YNode n = Find(node, "matchFields"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadRequirements(n, Child(path, "matchFields"),
                                     /*fields=*/true, &out->match_fields));
  }
  if (out->match_expressions.empty() && out->match_fields.empty()) {
    return Error(node, path,
                 "needs matchExpressions or matchFields (an empty term "
                 "matches no node)");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadRequirements(
    const YNode& node, const std::string& path, bool fields,
    std::vector<NodeSelectorRequirement>* out) {
  if (!node.IsSequence()) return Error(node, path, "must be a list");
  for (size_t i = 0; i < node.size(); ++i) {
    const YNode& item = node[i];
    const std::string ip = absl::StrCat(path, "[", i, "]");
    RETURN_IF_ERROR(CheckMap(item, ip, {"key", "operator", "values"}));
    NodeSelectorRequirement r;
    YNode key;
    RETURN_IF_ERROR(GetString(item, ip, "key", &r.key, &key));
    if (!key.IsDefined() || r.key.empty()) {
      return Error(key.IsDefined() ? key : item, Child(ip, "key"), "required");
    }
    if (fields && r.key != "metadata.name") {
      return Error(key, Child(ip, "key"),
                   "must be metadata.name, the only field a node selector "
                   "may match");
    }
    YNode op;
    RETURN_IF_ERROR(GetEnum<SelectorOperator>(
        item, ip, "operator",
        {{"In", SelectorOperator::kIn},
         {"NotIn", SelectorOperator::kNotIn},
         {"Exists", SelectorOperator::kExists},
         {"DoesNotExist", SelectorOperator::kDoesNotExist},
         {"Gt", SelectorOperator::kGt},
         {"Lt", SelectorOperator::kLt}},
        &r.op, &op));
    if (!op.IsDefined()) return Error(item, Child(ip, "operator"), "required");
    YNode values = Find(item, "values");
    const std::string vp = Child(ip, "values");
    if (values.IsDefined()) {
      if (!values.IsSequence()) return Error(values, vp, "must be a list");
      for (size_t j = 0; j < values.size(); ++j) {
        std::string v;
        RETURN_IF_ERROR(Scalar(values[j], absl::StrCat(vp, "[", j, "]"), &v));
        r.values.push_back(std::move(v));
      }
    }
    const YNode& at = values.IsDefined() ? values : item;
    switch (r.op) {
      case SelectorOperator::kIn:
      case SelectorOperator::kNotIn:
        if (r.values.empty()) return Error(at, vp, "must not be empty for In and NotIn");
        if (fields && r.values.size() != 1) {
          return Error(at, vp, "must hold exactly one node name");
        }
        break;
      case SelectorOperator::kExists:
      case SelectorOperator::kDoesNotExist:
        if (fields) {
          return Error(op, Child(ip, "operator"),
                       "must be In or NotIn for matchFields");
        }
        if (!r.values.empty()) {
          return Error(at, vp, "must be empty for Exists and DoesNotExist");
        }
        break;
      case SelectorOperator::kGt:
      case SelectorOperator::kLt: {
        if (fields) {
          return Error(op, Child(ip, "operator"),
                       "must be In or NotIn for matchFields");
        }
        int64_t unused;
        if (r.values.size() != 1 || !absl::SimpleAtoi(r.values[0], &unused)) {
          return Error(at, vp, "must hold exactly one integer for Gt and Lt");
        }
        break;
      }
    }
    out->push_back(std::move(r));
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

}  // namespace

absl::StatusOr<Config> LoadConfigString(absl::string_view text,
                                        absl::string_view display_name,
                                        const LoadOptions& options) {
  Loader loader(display_name, options);
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
  for (const ProfileConfig& profile : config.profiles) {
    for (const MetricConfig& m : profile.metrics) {
      if (m.origin.kind == MetricOrigin::Kind::kNodeAnnotation &&
          !absl::c_linear_search(out, m.origin.key)) {
        out.push_back(m.origin.key);
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
