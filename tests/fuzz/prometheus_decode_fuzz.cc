// Fuzzes the Prometheus instant-query decoder (metrics/prometheus_decode.h)
// with whole response bodies. The first byte picks the HTTP status and
// options so error bodies are reached too; the rest is the body.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "metrics/prometheus_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr long kStatuses[] = {200, 200, 200, 400, 422, 503, 500, 404};
  const long status = kStatuses[data[0] & 7];  // NOLINT(runtime/int)
  // Bit 4 decodes as a per-pod query (pod and namespace) that also asks
  // for join detection's candidates.
  static constexpr absl::string_view kCandidates[] = {"node", "instance",
                                                      "host"};
  const bool more = (data[0] & 16) != 0;
  ms::metrics::PromDecodeOptions options{
      .metric_name = "fuzz",
      .join_label = more ? "pod" : "node",
      .namespace_label = more ? "namespace" : "",
      .labels_text = (data[0] & 8) != 0,
      .candidate_labels = more
                              ? absl::Span<const absl::string_view>(kCandidates)
                              : absl::Span<const absl::string_view>()};
  absl::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t total = 0;
  (void)ms::metrics::DecodeInstantQuery(
      status, body, options, [&](const ms::metrics::PromSeries& s) {
        // Touch every view, so a dangling one is caught by ASan.
        for (char c : s.label_value) total += static_cast<unsigned char>(c);
        for (char c : s.labels_text) total += static_cast<unsigned char>(c);
        for (char c : s.namespace_value) total += static_cast<unsigned char>(c);
        for (absl::string_view v : s.candidate_values) total += v.size();
        if (std::isnan(s.sample.value)) ++total;
      });
  (void)ms::metrics::ParsePromValue(body);
  return total == 0xFFFFFFFF ? 1 : 0;
}
