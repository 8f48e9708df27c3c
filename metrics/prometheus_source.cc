#include "metrics/prometheus_source.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/url.h"
#include "metrics/http_errors.h"
#include "metrics/join.h"
#include "metrics/join_detect.h"
#include "metrics/prometheus_decode.h"

namespace ms::metrics {

absl::StatusOr<std::unique_ptr<PrometheusSource>> PrometheusSource::Create(
    const BackendConfig& backend) {
  if (backend.url.empty()) {
    return absl::InvalidArgumentError("backend.url: required");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BackendClient> client,
                   BackendClient::Create(backend));
  return std::unique_ptr<PrometheusSource>(
      new PrometheusSource(backend, std::move(client)));
}

PrometheusSource::PrometheusSource(const BackendConfig& backend,
                                   std::unique_ptr<BackendClient> client)
    : query_url_(JoinUrl(backend.url, "/api/v1/query")),
      timeout_(backend.timeout),
      max_response_bytes_(static_cast<size_t>(backend.max_response_bytes)),
      client_(std::move(client)) {}

absl::StatusOr<HttpResponse> PrometheusSource::Query(const MetricConfig& metric,
                                                     const std::string& query,
                                                     absl::Duration timeout) {
  const absl::Duration limit = std::min(timeout, timeout_);
  // The server gives up at the same limit, so a slow query costs it no more
  // than it costs us.
  std::string params = absl::StrCat("query=", UrlEncode(query),
                                    "&timeout=", absl::ToDoubleSeconds(limit));
  HttpRequest request;
  request.timeout = limit;
  request.max_response_bytes = max_response_bytes_;
  if (params.size() > kMaxGetQueryBytes) {
    request.method = "POST";
    request.url = query_url_;
    request.body = std::move(params);
    request.headers.emplace_back("Content-Type",
                                 "application/x-www-form-urlencoded");
  } else {
    request.url = absl::StrCat(query_url_, "?", params);
  }
  request.headers.emplace_back("Accept", "application/json");

  requests_sent_.fetch_add(1);
  absl::StatusOr<HttpResponse> response = client_->Do(std::move(request));
  if (!response.ok()) {
    return RequestError(absl::StrCat("metric ", metric.name),
                        response.status(), max_response_bytes_);
  }
  return response;
}

absl::StatusOr<FetchResult> PrometheusSource::Fetch(const MetricConfig& metric,
                                                    const NodeSet& nodes,
                                                    absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response, Query(metric, metric.query, timeout));
  if (metric.join.automatic) return DetectJoin(metric, nodes, response);
  return Join(metric, nodes, response);
}

absl::StatusOr<FetchResult> PrometheusSource::Join(
    const MetricConfig& metric, const NodeSet& nodes,
    const HttpResponse& response) {
  ASSIGN_OR_RETURN(Joiner joiner, Joiner::Create(metric.join, {}));
  FetchResult out;
  PromDecodeOptions options{.metric_name = metric.name,
                            .join_label = metric.join.label,
                            .labels_text = true};
  ASSIGN_OR_RETURN(
      PromQueryInfo info,
      DecodeInstantQuery(
          response.status, response.body, options,
          [&](const PromSeries& series) {
            const std::string* node =
                series.has_label ? joiner.Match(series.label_value, nodes)
                                 : nullptr;
            if (node == nullptr) {
              ++out.unmatched;
              if (out.unmatched_examples.size() < FetchResult::kMaxExamples) {
                out.unmatched_examples.emplace_back(series.labels_text);
              }
              return;
            }
            if (!out.by_node.emplace(*node, series.sample).second) {
              ++out.duplicates;
            }
          }));
  out.series = info.series;
  out.warnings = std::move(info.warnings);
  return out;
}

absl::StatusOr<FetchResult> PrometheusSource::DetectJoin(
    const MetricConfig& metric, const NodeSet& nodes,
    const HttpResponse& response) {
  ASSIGN_OR_RETURN(JoinDetector detector, JoinDetector::Create(nodes));
  PromDecodeOptions options{.metric_name = metric.name,
                            .labels_text = true,
                            .candidate_labels = JoinCandidateLabels()};
  ASSIGN_OR_RETURN(PromQueryInfo info,
                   DecodeInstantQuery(response.status, response.body, options,
                                      [&](const PromSeries& series) {
                                        detector.Add(series);
                                      }));
  FetchResult out = std::move(detector).Finish();
  out.series = info.series;
  out.warnings = std::move(info.warnings);
  return out;
}

absl::StatusOr<PodFetchResult> PrometheusSource::FetchPods(
    const MetricConfig& metric, absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Query(metric, metric.estimate.siblings_query, timeout));
  PodFetchResult out;
  PromDecodeOptions options{.metric_name = metric.name,
                            .join_label = "pod",
                            .namespace_label = "namespace"};
  ASSIGN_OR_RETURN(
      PromQueryInfo info,
      DecodeInstantQuery(
          response.status, response.body, options,
          [&](const PromSeries& series) {
            if (!series.has_label || !series.has_namespace) {
              ++out.unlabelled;
              return;
            }
            std::string key =
                absl::StrCat(series.namespace_value, "/", series.label_value);
            if (!out.by_pod.emplace(std::move(key), series.sample).second) {
              ++out.duplicates;
            }
          }));
  out.series = info.series;
  out.warnings = std::move(info.warnings);
  return out;
}

}  // namespace ms::metrics
