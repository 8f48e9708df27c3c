#include "metrics/sysdig_source.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "common/url.h"
#include "metrics/http_errors.h"
#include "metrics/join.h"
#include "metrics/sysdig_decode.h"

namespace ms::metrics {

absl::StatusOr<std::unique_ptr<SysdigSource>> SysdigSource::Create(
    const BackendConfig& backend) {
  if (backend.url.empty()) {
    return absl::InvalidArgumentError("backend.url: required");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BackendClient> client,
                   BackendClient::Create(backend));
  return std::unique_ptr<SysdigSource>(
      new SysdigSource(backend, std::move(client)));
}

SysdigSource::SysdigSource(const BackendConfig& backend,
                           std::unique_ptr<BackendClient> client)
    : data_url_(JoinUrl(backend.url, "/api/data/")),
      timeout_(backend.timeout),
      max_response_bytes_(static_cast<size_t>(backend.max_response_bytes)),
      sysdig_(backend.sysdig),
      client_(std::move(client)) {}

absl::StatusOr<FetchResult> SysdigSource::Fetch(const MetricConfig& metric,
                                                const NodeSet& nodes,
                                                absl::Duration timeout) {
  ASSIGN_OR_RETURN(Joiner joiner,
                   Joiner::Create(metric.join, {.short_names = true}));
  const int page_size = static_cast<int>(std::clamp<size_t>(
      2 * nodes.size(), kMinPageSize, kMaxPageSize));
  const absl::Time deadline = absl::Now() + timeout;
  const std::string head = absl::StrCat(
      R"({"metrics":[{"id":)", JsonQuote(metric.join.label), R"(},{"id":)",
      JsonQuote(metric.query), R"(,"aggregations":{"time":)",
      JsonQuote(metric.aggregations.time), R"(,"group":)",
      JsonQuote(metric.aggregations.group), R"(}}],"dataSourceType":)",
      JsonQuote(sysdig_.data_source_type),
      R"(,"last":)", absl::ToInt64Seconds(sysdig_.last),
      R"(,"sampling":)", absl::ToInt64Seconds(sysdig_.sampling));

  FetchResult out;
  for (int from = 0;; from += page_size) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "metric ", metric.name, ": paging did not finish within ",
          absl::FormatDuration(timeout)));
    }
    HttpRequest request;
    request.method = "POST";
    request.url = data_url_;
    request.timeout = std::min(left, timeout_);
    request.max_response_bytes = max_response_bytes_;
    request.body = absl::StrCat(head, R"(,"paging":{"from":)", from,
                                R"(,"to":)", from + page_size - 1, "}}");
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json");
    requests_sent_.fetch_add(1);
    absl::StatusOr<HttpResponse> response = client_->Do(std::move(request));
    if (!response.ok()) {
      return RequestError(absl::StrCat("metric ", metric.name),
                          response.status(), max_response_bytes_);
    }
    if (response->status < 200 || response->status >= 300) {
      return absl::Status(
          CodeForBackendStatus(response->status),
          absl::StrCat("metric ", metric.name, ": query failed (HTTP ",
                       response->status,
                       "): ", SysdigErrorMessage(response->body)));
    }
    ASSIGN_OR_RETURN(
        int rows,
        DecodeSysdigRows(metric.name, response->body,
                         [&](const SysdigRow& row) {
          ++out.series;
          const std::string* node =
              row.has_host ? joiner.Match(row.host, nodes) : nullptr;
          if (node == nullptr) {
            ++out.unmatched;
            if (out.unmatched_examples.size() < FetchResult::kMaxExamples) {
              out.unmatched_examples.push_back(
                  row.has_host ? std::string(row.host) : "(no host name)");
            }
            return;
          }
          if (!row.has_value) return;
          if (!out.by_node.emplace(*node, MetricSample{row.value, row.time_ms})
                   .second) {
            ++out.duplicates;
          }
        }));
    // A full page may be followed by more; a short one (or a server that
    // ignored paging and sent more) is the last.
    if (rows != page_size) break;
  }
  return out;
}

}  // namespace ms::metrics
