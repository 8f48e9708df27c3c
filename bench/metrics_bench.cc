// Metrics benchmarks: decoding a Prometheus answer, and a whole cache
// refresh against a real Prometheus.
//
//   build/bench/metrics_bench
//
// BM_DecodeVector/N: DecodeInstantQuery over an N-series vector answer
// (labels as node-exporter series carry them), counting the series.
// BM_DecodeAndJoin/N: the same plus the join of each series to a node by
// its `node` label, as PrometheusSource::Fetch does after the request.
// BM_RefreshPrometheus/M/N: MetricsCache::RefreshAll of M metrics at N
// nodes against Debian's Prometheus, started here on a loopback port and
// filled by remote write; the counter http_requests is the number of HTTP
// requests per refresh (one per metric, whatever N).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "metrics/cache.h"
#include "metrics/join.h"
#include "metrics/prometheus_decode.h"
#include "metrics/prometheus_source.h"
#include "tests/testing/prometheus.h"

namespace ms::metrics {
namespace {

std::string NodeName(int i) { return absl::StrCat("node-", i); }

std::string VectorBody(int series) {
  std::string body =
      R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < series; ++i) {
    if (i > 0) body += ",";
    absl::StrAppend(&body, R"({"metric":{"instance":"10.0.)", i / 250, ".",
                    i % 250, R"(:9100","job":"node-exporter","node":")",
                    NodeName(i), R"("},"value":[1700000000.123,")",
                    0.001 * i, R"("]})");
  }
  body += "]}}";
  return body;
}

std::vector<NodeAddresses> Nodes(int n) {
  std::vector<NodeAddresses> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    out.push_back({NodeName(i), {absl::StrCat("10.0.", i / 250, ".", i % 250)}});
  }
  return out;
}

void BM_DecodeVector(benchmark::State& state) {
  const std::string body = VectorBody(static_cast<int>(state.range(0)));
  PromDecodeOptions options{.metric_name = "cpu", .join_label = "node"};
  for (auto _ : state) {
    int64_t seen = 0;
    absl::StatusOr<PromQueryInfo> info = DecodeInstantQuery(
        200, body, options, [&](const PromSeries&) { ++seen; });
    if (!info.ok() || seen != state.range(0)) {
      state.SkipWithError("decode failed");
      return;
    }
    benchmark::DoNotOptimize(seen);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_DecodeVector)->Arg(500)->Arg(5000);

void BM_DecodeAndJoin(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string body = VectorBody(n);
  const NodeSet nodes(Nodes(n));
  JoinConfig join{.label = "node"};
  absl::StatusOr<Joiner> joiner = Joiner::Create(join, {});
  PromDecodeOptions options{.metric_name = "cpu", .join_label = "node",
                            .labels_text = true};
  for (auto _ : state) {
    FetchResult out;
    absl::StatusOr<PromQueryInfo> info =
        DecodeInstantQuery(200, body, options, [&](const PromSeries& s) {
          const std::string* node = joiner->Match(s.label_value, nodes);
          if (node != nullptr) out.by_node.emplace(*node, s.sample);
        });
    if (!info.ok() || static_cast<int>(out.by_node.size()) != n) {
      state.SkipWithError("decode or join failed");
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_DecodeAndJoin)->Arg(5000);

// One Prometheus for the process, filled on first use; stopped (and its
// data deleted) at exit.
testing::PrometheusServer* Prometheus(int metrics, int nodes) {
  static std::unique_ptr<testing::PrometheusServer> started = [] {
    absl::StatusOr<std::unique_ptr<testing::PrometheusServer>> s =
        testing::PrometheusServer::Start();
    return s.ok() ? std::move(*s) : nullptr;
  }();
  static int written_metrics = 0, written_nodes = 0;
  testing::PrometheusServer* prom = started.get();
  if (prom == nullptr) return nullptr;
  if (metrics > written_metrics || nodes > written_nodes) {
    const absl::Time now = absl::Now();
    for (int m = 0; m < metrics; ++m) {
      std::vector<testing::RemoteSeries> series;
      for (int i = 0; i < nodes; ++i) {
        series.push_back({absl::StrCat("bench_metric_", m),
                          {{"node", NodeName(i)}, {"job", "bench"}},
                          0.5 + i * 0.001,
                          now});
      }
      if (!prom->Write(series).ok()) return nullptr;
    }
    written_metrics = metrics;
    written_nodes = nodes;
  }
  return prom;
}

void BM_RefreshPrometheus(benchmark::State& state) {
  const int metrics = static_cast<int>(state.range(0));
  const int nodes = static_cast<int>(state.range(1));
  testing::PrometheusServer* prom = Prometheus(metrics, nodes);
  if (prom == nullptr) {
    state.SkipWithError("prometheus did not start or refused the samples");
    return;
  }
  BackendConfig backend;
  backend.url = prom->url();
  backend.timeout = absl::Seconds(10);
  std::unique_ptr<PrometheusSource> source =
      std::move(PrometheusSource::Create(backend)).value();
  std::vector<MetricConfig> configs;
  for (int m = 0; m < metrics; ++m) {
    MetricConfig c;
    c.name = absl::StrCat("m", m);
    c.query = absl::StrCat("bench_metric_", m, "{job=\"bench\"}");
    c.join.label = "node";
    c.max_staleness = absl::Hours(1);
    configs.push_back(std::move(c));
  }
  MetricsCache cache(source.get(), configs,
                     {.refresh_timeout = absl::Seconds(10)});
  cache.SetNodes(Nodes(nodes));
  cache.RefreshAll();  // warm up connections and Prometheus's caches
  const int64_t before = source->requests_sent();
  for (auto _ : state) cache.RefreshAll();
  for (const MetricStats& s : cache.Stats()) {
    if (!s.last_status.ok() || s.nodes_with_data != nodes) {
      state.SkipWithError(absl::StrCat(s.name, ": ", s.last_status.ToString(),
                                       ", nodes with data ", s.nodes_with_data)
                              .c_str());
      return;
    }
  }
  state.counters["http_requests"] = benchmark::Counter(
      static_cast<double>(source->requests_sent() - before) /
      static_cast<double>(state.iterations()));
  state.counters["nodes"] = nodes;
  state.counters["metrics"] = metrics;
}
BENCHMARK(BM_RefreshPrometheus)
    ->Args({4, 500})
    ->Args({4, 5000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace ms::metrics
