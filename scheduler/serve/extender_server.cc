#include "scheduler/serve/extender_server.h"

#include <httplib.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "kube/extender_wire.h"
#include "model/pod.h"
#include "scheduler/serve/status_server.h"

namespace ms {
namespace {

constexpr char kNodeCacheCapable[] =
    "metrics-scheduler's extender needs nodeCacheCapable: true in "
    "kube-scheduler's extenders configuration";

// What the metric filters' scopes read of the call's pod.
Pod ArgsPod(const kube::ExtenderArgs& args) {
  Pod pod;
  pod.namespace_ = args.pod_namespace;
  pod.name = args.pod_name;
  pod.labels = args.pod_labels;
  pod.priority = args.pod_priority;
  return pod;
}

}  // namespace

ExtenderServer::ExtenderServer(ClusterState& state,
                               const ScoringConfig& scoring,
                               const metrics::MetricsCache* cache,
                               Registry& registry, size_t max_node_names)
    : state_(state),
      scoring_(scoring),
      cache_(cache),
      max_node_names_(max_node_names),
      requests_(registry.AddCounter(
          "metrics_scheduler_extender_requests_total",
          "kube-scheduler's extender calls, by verb (filter, prioritize) and "
          "result: metrics (judged by metrics), fallback (no usable metric: "
          "no opinion), refused (a malformed call, whole Nodes, or more "
          "node names than --extender-max-node-names).",
          {"verb", "result"})),
      seconds_(registry.AddHistogram(
          "metrics_scheduler_extender_duration_seconds",
          "Time to answer one extender call, by verb.",
          ExponentialBuckets(0.0001, 2, 16), {"verb"})) {
  for (const char* verb : {"filter", "prioritize"}) {
    seconds_.With({verb});
    for (const char* result : {"metrics", "fallback", "refused"}) {
      requests_.With({verb, result});
    }
  }
}

ExtenderServer::~ExtenderServer() { Stop(); }

std::string ExtenderServer::TooManyNodeNames(size_t count, size_t limit) {
  return absl::StrCat("too many node names in one call: ", count,
                      ", the most is ", limit,
                      " (--extender-max-node-names)");
}

std::string ExtenderServer::Filter(const std::string& body, int* status) {
  const absl::Time start = absl::Now();
  *status = 200;
  absl::StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(body);
  std::string out;
  if (args.ok() && args->node_names.size() > max_node_names_) {
    // An HTTP error, which kube-scheduler reports by its status; the
    // body says why to anyone reading it.
    requests_.With({"filter", "refused"}).Inc();
    *status = 400;
    const std::string error =
        TooManyNodeNames(args->node_names.size(), max_node_names_);
    LOG(WARNING) << "extender filter call refused: " << error;
    out = kube::EncodeFilterResult({}, {}, error);
  } else if (!args.ok() || args->with_nodes) {
    requests_.With({"filter", "refused"}).Inc();
    const std::string error =
        args.ok() ? kNodeCacheCapable : std::string(args.status().message());
    LOG(WARNING) << "extender filter call refused: " << error;
    out = kube::EncodeFilterResult({}, {}, error);
  } else {
    const Pod pod = ArgsPod(*args);
    MetricVerdict verdict =
        state_.JudgeNodes(args->node_names, scoring_,
                          cache_ ? cache_->Snapshot() : nullptr, &pod);
    std::vector<std::string> passed;
    std::vector<std::pair<std::string, std::string>> failed;
    for (size_t i = 0; i < args->node_names.size(); ++i) {
      if (verdict.failures[i].empty()) {
        passed.push_back(args->node_names[i]);
      } else {
        failed.emplace_back(args->node_names[i], verdict.failures[i]);
      }
    }
    requests_.With({"filter", verdict.fallback ? "fallback" : "metrics"}).Inc();
    MS_VLOG(2) << "extender filter " << args->pod_namespace << "/"
               << args->pod_name << ": " << passed.size() << " of "
               << args->node_names.size() << " nodes pass"
               << (verdict.fallback ? " (no usable metric)" : "")
               << LogFields().Pod(args->pod_namespace, args->pod_name);
    out = kube::EncodeFilterResult(passed, failed);
  }
  seconds_.With({"filter"}).Observe(
      absl::ToDoubleSeconds(absl::Now() - start));
  return out;
}

std::string ExtenderServer::Prioritize(const std::string& body, int* status) {
  const absl::Time start = absl::Now();
  absl::StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(body);
  std::string out;
  if (!args.ok() || args->with_nodes ||
      args->node_names.size() > max_node_names_) {
    // HostPriorityList has no error field: an HTTP error makes
    // kube-scheduler skip (ignorable) or fail the call.
    requests_.With({"prioritize", "refused"}).Inc();
    *status = 400;
    out = !args.ok() ? std::string(args.status().message())
          : args->with_nodes
              ? kNodeCacheCapable
              : TooManyNodeNames(args->node_names.size(), max_node_names_);
    LOG(WARNING) << "extender prioritize call refused: " << out;
  } else {
    *status = 200;
    const Pod pod = ArgsPod(*args);
    MetricVerdict verdict =
        state_.JudgeNodes(args->node_names, scoring_,
                          cache_ ? cache_->Snapshot() : nullptr, &pod);
    std::vector<std::pair<std::string, int64_t>> scores;
    scores.reserve(args->node_names.size());
    for (size_t i = 0; i < args->node_names.size(); ++i) {
      scores.emplace_back(args->node_names[i],
                          ExtenderScore(verdict.scores[i]));
    }
    requests_.With({"prioritize", verdict.fallback ? "fallback" : "metrics"})
        .Inc();
    out = kube::EncodeHostPriorities(scores);
  }
  seconds_.With({"prioritize"}).Observe(
      absl::ToDoubleSeconds(absl::Now() - start));
  return out;
}

absl::StatusOr<int> ExtenderServer::Start(const std::string& address,
                                          const ConnectionLimits& limits) {
  absl::StatusOr<std::unique_ptr<httplib::Server>> server =
      NewGuardedServer(limits);
  if (!server.ok()) return server.status();
  return Serve(*std::move(server), address);
}

absl::StatusOr<int> ExtenderServer::StartSecure(
    const std::string& address, const TlsServing& tls, DelegatedAuth& auth,
    const ConnectionLimits& limits) {
  absl::StatusOr<std::unique_ptr<httplib::Server>> server =
      NewGuardedServer(limits, &tls);
  if (!server.ok()) return server.status();
  RequireDelegatedAuth(**server, auth, "extender");
  return Serve(*std::move(server), address);
}

absl::StatusOr<int> ExtenderServer::Serve(
    std::unique_ptr<httplib::Server> server, const std::string& address) {
  server_ = std::move(server);
  server_->set_payload_max_length(kMaxRequestBytes);
  server_->Post("/filter",
                [this](const httplib::Request& req, httplib::Response& res) {
                  int status = 200;
                  res.set_content(Filter(req.body, &status), "application/json");
                  res.status = status;
                });
  server_->Post("/prioritize",
                [this](const httplib::Request& req, httplib::Response& res) {
                  int status = 200;
                  std::string body = Prioritize(req.body, &status);
                  res.set_content(std::move(body), status == 200
                                                       ? "application/json"
                                                       : "text/plain");
                  res.status = status;
                });
  absl::StatusOr<int> bound = Listen(*server_, address);
  if (!bound.ok()) return bound.status();
  thread_ = Accept(*server_);
  return bound;
}

void ExtenderServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ms
