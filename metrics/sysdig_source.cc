#include "metrics/sysdig_source.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "metrics/http_errors.h"
#include "metrics/join.h"
#include "common/url.h"

namespace ms::metrics {
namespace {

namespace od = simdjson::ondemand;

absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// A time as the data API writes it: epoch seconds. Microseconds and
// milliseconds (some API versions) are recognised by their size.
int64_t TimeMs(double t) {
  if (t > 1e14) return std::llround(t / 1000);
  if (t > 1e11) return std::llround(t);
  return std::llround(t * 1000);
}

// One row of a grouped answer; views valid during the callback only.
struct Row {
  bool has_host = false;
  absl::string_view host;
  bool has_value = false;  // false: the backend has no value (null)
  double value = 0;
  int64_t time_ms = 0;
};

// Decodes a 2xx answer, calling `on_row` for each row. Returns the number of
// rows. Unavailable when the body is not the data API's JSON.
absl::StatusOr<int> DecodeRows(absl::string_view metric_name,
                               absl::string_view body,
                               absl::FunctionRef<void(const Row&)> on_row) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  int rows = 0;
  try {
    od::document doc = parser.iterate(padded);
    int64_t end_ms = 0;
    bool saw_data = false;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "end") {
        end_ms = TimeMs(double(f.value()));
      } else if (key == "data") {
        saw_data = true;
        od::value data = f.value();
        if (data.is_null()) continue;
        for (od::value item : data.get_array()) {
          Row row;
          row.time_ms = end_ms;
          for (od::field rf : item.get_object()) {
            std::string_view rkey = rf.unescaped_key();
            if (rkey == "t") {
              row.time_ms = TimeMs(double(rf.value()));
            } else if (rkey == "d") {
              int index = 0;
              for (od::value element : rf.value().get_array()) {
                if (index == 0 && !element.is_null()) {
                  row.has_host = true;
                  row.host = AbslView(element.get_string());
                } else if (index == 1) {
                  od::json_type type = element.type();
                  if (type == od::json_type::number) {
                    row.value = double(element);
                    row.has_value = true;
                  } else if (type == od::json_type::string) {
                    row.has_value = absl::SimpleAtod(
                        AbslView(element.get_string()), &row.value);
                  }
                }
                ++index;
              }
            }
          }
          ++rows;
          on_row(row);
        }
      }
    }
    if (!saw_data) {
      return absl::UnavailableError(
          absl::StrCat("metric ", metric_name,
                       ": response has no \"data\": ", BodySnippet(body)));
    }
  } catch (const simdjson::simdjson_error& e) {
    return absl::UnavailableError(absl::StrCat("metric ", metric_name,
                                               ": malformed response (",
                                               e.what(), "): ",
                                               BodySnippet(body)));
  }
  return rows;
}

// The message of an error answer: the `errors[*].message` (and reason), or
// the top-level `message`, or the start of the body.
std::string ErrorMessage(absl::string_view body) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body.data(), body.size());
  std::string out;
  try {
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "message" && out.empty()) {
        out = std::string(std::string_view(f.value()));
      } else if (key == "errors") {
        std::string joined;
        for (od::value e : f.value().get_array()) {
          std::string message, reason;
          for (od::field ef : e.get_object()) {
            std::string_view ekey = ef.unescaped_key();
            if (ekey == "message") message = std::string_view(ef.value());
            if (ekey == "reason") reason = std::string_view(ef.value());
          }
          if (!joined.empty()) joined += "; ";
          joined += message;
          if (!reason.empty()) absl::StrAppend(&joined, " (", reason, ")");
        }
        if (!joined.empty()) out = std::move(joined);
      }
    }
  } catch (const simdjson::simdjson_error&) {
    out.clear();
  }
  return out.empty() ? BodySnippet(body) : out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SysdigSource>> SysdigSource::Create(
    const BackendConfig& backend) {
  if (backend.url.empty()) {
    return absl::InvalidArgumentError("backend.url: required");
  }
  std::unique_ptr<TokenFile> token;
  if (!backend.token_file.empty()) {
    ASSIGN_OR_RETURN(token, TokenFile::Open(backend.token_file));
  }
  return std::unique_ptr<SysdigSource>(
      new SysdigSource(backend, std::move(token)));
}

SysdigSource::SysdigSource(const BackendConfig& backend,
                           std::unique_ptr<TokenFile> token)
    : data_url_(JoinUrl(backend.url, "/api/data/")),
      timeout_(backend.timeout),
      sysdig_(backend.sysdig),
      token_(std::move(token)),
      http_(TlsOptions{.ca_file = backend.ca_file,
                       .insecure_skip_verify = backend.insecure_skip_verify}) {}

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
    request.body = absl::StrCat(head, R"(,"paging":{"from":)", from,
                                R"(,"to":)", from + page_size - 1, "}}");
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json");
    if (token_ != nullptr) {
      request.headers.emplace_back("Authorization",
                                   absl::StrCat("Bearer ", token_->Get()));
    }
    requests_sent_.fetch_add(1);
    absl::StatusOr<HttpResponse> response = http_.Do(request);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat("metric ", metric.name, ": ",
                                       response.status().message()));
    }
    if (response->status < 200 || response->status >= 300) {
      return absl::Status(
          CodeForHttpStatus(response->status),
          absl::StrCat("metric ", metric.name, ": query failed (HTTP ",
                       response->status,
                       "): ", ErrorMessage(response->body)));
    }
    ASSIGN_OR_RETURN(
        int rows,
        DecodeRows(metric.name, response->body, [&](const Row& row) {
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
