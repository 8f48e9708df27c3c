// metrics-feed: a real Prometheus fed with synthetic per-node metrics, for
// `make demo` (scripts/demo.sh).
//
//   metrics-feed PROFILE
//
// Starts Debian's Prometheus on a free loopback port (PrometheusServer,
// tests/testing/prometheus.h), prints
//
//   metrics-feed ready url=http://127.0.0.1:PORT
//
// and then, every second, re-reads PROFILE and remote-writes one sample per
// node of each of
//
//   demo_http_latency_seconds{node}   HTTP response time
//   demo_io_latency_seconds{node}     IO latency
//   demo_error_ratio{node}            share of requests that fail
//
// PROFILE has one line per node, "NODE HTTP_SECONDS IO_SECONDS ERROR_RATIO";
// '#' starts a comment. A line "prometheus down" stops Prometheus (an
// outage, as the scheduler sees it); "prometheus up" starts it again.
// SIGTERM or SIGINT stops Prometheus, deletes its data and exits 0. Errors
// go to stderr; exit 1 when Prometheus cannot start.

#include <signal.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tests/testing/prometheus.h"

namespace {

using ms::testing::PrometheusServer;
using ms::testing::RemoteSeries;

struct Profile {
  std::vector<RemoteSeries> series;
  bool prometheus_up = true;
};

// Lines that do not parse are reported and skipped.
Profile ReadProfile(const std::string& path) {
  Profile p;
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    absl::string_view text = line;
    text = text.substr(0, text.find('#'));
    std::vector<std::string> f =
        absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
    if (f.empty()) continue;
    if (f.size() == 2 && f[0] == "prometheus") {
      p.prometheus_up = f[1] != "down";
      continue;
    }
    double http = 0, io = 0, err = 0;
    if (f.size() != 4 || !absl::SimpleAtod(f[1], &http) ||
        !absl::SimpleAtod(f[2], &io) || !absl::SimpleAtod(f[3], &err)) {
      std::cerr << path << ":" << number
                << ": want NODE HTTP_SECONDS IO_SECONDS ERROR_RATIO\n";
      continue;
    }
    p.series.push_back({"demo_http_latency_seconds", {{"node", f[0]}}, http});
    p.series.push_back({"demo_io_latency_seconds", {{"node", f[0]}}, io});
    p.series.push_back({"demo_error_ratio", {{"node", f[0]}}, err});
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: metrics-feed PROFILE\n";
    return 2;
  }
  const std::string profile_path = argv[1];
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<PrometheusServer>> prom =
      PrometheusServer::Start();
  if (!prom.ok()) {
    std::cerr << "metrics-feed: " << prom.status() << "\n";
    return 1;
  }
  std::cout << "metrics-feed ready url=" << (*prom)->url() << std::endl;

  while (true) {
    Profile profile = ReadProfile(profile_path);
    if (!profile.prometheus_up && (*prom)->running()) {
      absl::Status s = (*prom)->Stop();
      std::cerr << "metrics-feed: Prometheus stopped"
                << (s.ok() ? "" : ": " + s.ToString()) << "\n";
    } else if (profile.prometheus_up && !(*prom)->running()) {
      absl::Status s = (*prom)->Restart();
      std::cerr << "metrics-feed: Prometheus restarted"
                << (s.ok() ? "" : ": " + s.ToString()) << "\n";
    }
    if ((*prom)->running() && !profile.series.empty()) {
      absl::Status s = (*prom)->Write(profile.series);
      if (!s.ok()) std::cerr << "metrics-feed: write: " << s << "\n";
    }
    timespec tick{.tv_sec = 1, .tv_nsec = 0};
    if (sigtimedwait(&signals, nullptr, &tick) > 0) break;
  }
  (*prom)->Stop().IgnoreError();
  return 0;
}
