#include "metrics/metrics_server_source.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/http.h"
#include "metrics/http_errors.h"
#include "metrics/metrics_server_decode.h"

namespace ms::metrics {
namespace {

// The KubeClient's status for a failed list, in MetricsSource's contract.
absl::Status ListError(const absl::Status& status, size_t max_response_bytes) {
  const std::string what =
      absl::StrCat("listing ", kNodeMetricsPath, ": ", status.message());
  if (IsResponseTooLarge(status)) {
    return RequestError(absl::StrCat("listing ", kNodeMetricsPath), status,
                        max_response_bytes);
  }
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
      return absl::UnavailableError(what);
    case absl::StatusCode::kDeadlineExceeded:
      return absl::DeadlineExceededError(what);
    case absl::StatusCode::kNotFound:
      return absl::FailedPreconditionError(absl::StrCat(
          what, " (the apiserver does not serve metrics.k8s.io/v1beta1: is "
                "metrics-server installed?)"));
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return absl::PermissionDeniedError(absl::StrCat(
          what, " (the scheduler's ClusterRole needs get and list on "
                "nodes.metrics.k8s.io)"));
    case absl::StatusCode::kInvalidArgument:
      return absl::InvalidArgumentError(what);
    default:
      return absl::FailedPreconditionError(what);
  }
}

// The value `query` reads of `usage` on `node`, if any.
std::optional<double> Value(const std::string& query, const NodeUsage& usage,
                            const NodeAddresses& node) {
  auto ratio = [](const std::optional<double>& used,
                  double allocatable) -> std::optional<double> {
    if (!used.has_value() || !(allocatable > 0)) return std::nullopt;
    return *used / allocatable;
  };
  if (query == "cpu") return usage.cpu_cores;
  if (query == "memory") return usage.memory_bytes;
  if (query == "cpuUtilization") {
    return ratio(usage.cpu_cores, node.allocatable_cpu);
  }
  if (query == "memoryUtilization") {
    return ratio(usage.memory_bytes, node.allocatable_memory);
  }
  return std::nullopt;  // the configuration refuses any other query
}

}  // namespace

MetricsServerSource::MetricsServerSource(const BackendConfig& backend,
                                         ApiGet get)
    : timeout_(backend.timeout),
      max_response_bytes_(static_cast<size_t>(backend.max_response_bytes)),
      get_(std::move(get)) {}

absl::StatusOr<FetchResult> MetricsServerSource::Fetch(
    const MetricConfig& metric, const NodeSet& nodes, absl::Duration timeout) {
  const MetricConfig* one[] = {&metric};
  absl::StatusOr<FetchResult> out = absl::UnknownError("not fetched");
  FetchAll(one, nodes, timeout,
           [&](size_t, absl::StatusOr<FetchResult> answer) {
             out = std::move(answer);
           });
  return out;
}

void MetricsServerSource::FetchAll(
    absl::Span<const MetricConfig* const> metrics, const NodeSet& nodes,
    absl::Duration timeout, FetchDone done) {
  ++requests_sent_;
  absl::StatusOr<std::vector<NodeUsage>> items = [&]()
      -> absl::StatusOr<std::vector<NodeUsage>> {
    absl::StatusOr<std::string> body = get_(
        kNodeMetricsPath, std::min(timeout, timeout_), max_response_bytes_);
    if (!body.ok()) return ListError(body.status(), max_response_bytes_);
    absl::StatusOr<std::vector<NodeUsage>> decoded =
        DecodeNodeMetricsList(*body);
    if (!decoded.ok()) {
      return ListError(decoded.status(), max_response_bytes_);
    }
    return decoded;
  }();
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricConfig* metric = metrics[i];
    if (!items.ok()) {
      done(i, absl::Status(items.status().code(),
                           absl::StrCat("metric ", metric->name, ": ",
                                        items.status().message())));
      continue;
    }
    FetchResult result;
    for (const NodeUsage& usage : *items) {
      ++result.series;
      const NodeAddresses* node = nodes.Find(usage.name);
      if (node == nullptr) {
        ++result.unmatched;
        if (result.unmatched_examples.size() < FetchResult::kMaxExamples) {
          result.unmatched_examples.push_back(usage.name);
        }
        continue;
      }
      std::optional<double> value = Value(metric->query, usage, *node);
      if (!value.has_value()) continue;
      if (!result.by_node
               .try_emplace(node->name,
                            MetricSample{.value = *value,
                                         .time_ms = usage.time_ms})
               .second) {
        ++result.duplicates;
      }
    }
    done(i, std::move(result));
  }
}

}  // namespace ms::metrics
