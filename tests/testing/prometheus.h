// PrometheusServer: Debian's Prometheus on a loopback port, fed by remote
// write, for tests and benchmarks that need a real query engine.
//
// Start() runs /usr/bin/prometheus on 127.0.0.1 on a free port with a
// fresh data directory, a configuration with no scrape targets (unless
// Options::scrape_jobs names some), and the remote-write receiver and admin API enabled; it returns once the server
// answers /-/ready. Tests then write exact per-node values with Write() and
// point a client at url(). Stop() ends the process (SIGTERM) to simulate an
// outage; Restart() brings it back on the same port with the same data.
// The destructor stops it and deletes the data directory.
//
//   ASSERT_OK_AND_ASSIGN(auto prom, PrometheusServer::Start());
//   ASSERT_OK(prom->Write({{"node_cpu", {{"node", "n1"}}, 0.25},
//                          {"node_cpu", {{"node", "n2"}}, 0.75}}));
//   // query prom->url() + "/api/v1/query?query=node_cpu"
//
// Samples are visible to instant queries for the lookback delta
// (Options::lookback_delta) after their timestamp. Per series, timestamps
// must increase: a sample older than the series' latest is rejected (Write
// returns its error).
//
// Thread-safe except for Stop()/Restart(), which must not race with each
// other.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_PROMETHEUS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_PROMETHEUS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/http.h"

namespace ms::testing {

// One sample of one series, as remote write sends it.
struct RemoteSeries {
  std::string name;  // the metric name (label __name__)
  // Other labels, in any order (sorted when encoded); no __name__.
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;  // NaN and +-Inf are written as such
  // The sample's timestamp; InfinitePast means "now" at Write().
  absl::Time time = absl::InfinitePast();
};

class PrometheusServer {
 public:
  struct Options {
    std::string binary = "/usr/bin/prometheus";
    // How long after its timestamp a sample is returned by instant queries
    // (--query.lookback-delta).
    absl::Duration lookback_delta = absl::Minutes(5);
    // How long Start()/Restart() wait for /-/ready.
    absl::Duration start_timeout = absl::Seconds(30);
    // Prometheus's --web.config.file (TLS and authentication of its own
    // HTTP server); empty: plain HTTP, open to all.
    std::string web_config;
    // How this helper's own requests (readiness, Write, Query) pass that
    // web configuration: over https:// with this TLS (a client certificate
    // when it asks for one), and with this basic auth ("user:password").
    bool https = false;
    TlsOptions client_tls;
    std::string basic_auth;
    // Targets Prometheus scrapes, every scrape_interval; none by default:
    // tests write their samples.
    struct ScrapeJob {
      std::string job;                   // the job label
      std::vector<std::string> targets;  // "host:port"
      // Labels added to every series of the job, e.g. {namespace, x}.
      std::vector<std::pair<std::string, std::string>> labels;
      std::string scheme = "http";  // or "https"
      std::string metrics_path = "/metrics";
      // A file holding the bearer token every scrape sends
      // (authorization.credentials_file); "": none.
      std::string bearer_token_file;
      // https: accept any server certificate (tls_config).
      bool insecure_skip_verify = false;
      // Keep the scraped series' own `job` and `instance` labels (a
      // target exporting many machines' series, as a federation does).
      bool honor_labels = false;
    };
    std::vector<ScrapeJob> scrape_jobs;
    absl::Duration scrape_interval = absl::Seconds(1);
    // Kill Prometheus when the thread that started it exits (and so when
    // this process dies, even by SIGKILL): for a long-running harness that
    // must leave nothing behind. Start() and Restart() must then be called
    // from a thread that lives as long as the server.
    bool die_with_parent = false;
  };

  // InternalError (with the end of Prometheus's log) when it does not
  // become ready; NotFound when the binary is missing.
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start(
      Options options);
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start() {
    return Start(Options());
  }
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  // Sends SIGTERM and waits for the process to exit (SIGKILL after 15 s).
  // Clients see connections refused from then on. No-op when stopped.
  absl::Status Stop();
  // Stops the server if it runs, then starts it again on the same port with
  // the same data (waiting for the port to be released).
  absl::Status Restart();
  bool running() const { return pid_ > 0; }

  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:PORT" (https:// with TLS)
  const std::string& dir() const { return dir_; }  // config, data and log

  // Remote-writes the samples (one request). InternalError carrying the
  // server's message when it refuses them (e.g. out of order).
  absl::Status Write(const std::vector<RemoteSeries>& series);

  // Runs an instant query; returns the raw JSON answer whatever its status.
  absl::StatusOr<std::string> Query(absl::string_view promql);

  // How many requests Prometheus has answered on the route `handler`
  // (e.g. "/api/v1/query"), by its own /metrics; the helper's own requests
  // included.
  absl::StatusOr<double> RequestsServed(absl::string_view handler);

  // Deletes the series matching `selector` (admin API), e.g. `{node="n1"}`.
  absl::Status DeleteSeries(absl::string_view selector);

  // The end of Prometheus's log, for failure messages.
  std::string LogTail(size_t bytes = 2000) const;

 private:
  PrometheusServer(Options options, std::string dir, int port);
  // Starts the process on port_ and waits until it is ready. When it exits
  // first (its port not yet released), tries again if `retry_on_exit`.
  absl::Status Launch(bool retry_on_exit);
  // Sends one of the helper's own requests, with its basic auth.
  absl::StatusOr<HttpResponse> Send(HttpRequest request);

  const Options options_;
  const std::string dir_;
  int port_;
  pid_t pid_ = -1;
  HttpClient http_;
};

// The remote-write 1.0 body before compression: a prometheus.WriteRequest.
std::string EncodeWriteRequest(const std::vector<RemoteSeries>& series,
                               absl::Time now);
// `data` as a valid snappy block made of literal chunks only.
std::string SnappyLiterals(absl::string_view data);

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_PROMETHEUS_H_
