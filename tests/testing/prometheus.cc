#include "tests/testing/prometheus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/token_file.h"
#include "common/url.h"
#include "tests/testing/loopback.h"

namespace ms::testing {
namespace {

// --- protobuf, by hand -----------------------------------------------------

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A length-delimited field (wire type 2).
void PutBytes(std::string& out, int field, absl::string_view bytes) {
  PutVarint(out, static_cast<uint64_t>(field) << 3 | 2);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

// prometheus.Label{1: name, 2: value}
std::string EncodeLabel(absl::string_view name, absl::string_view value) {
  std::string out;
  PutBytes(out, 1, name);
  PutBytes(out, 2, value);
  return out;
}

// prometheus.Sample{1: double value, 2: int64 timestamp (ms)}
std::string EncodeSample(double value, int64_t timestamp_ms) {
  std::string out;
  out += static_cast<char>(1 << 3 | 1);  // fixed64
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i) out += static_cast<char>(bits >> (8 * i));
  out += static_cast<char>(2 << 3 | 0);  // varint
  PutVarint(out, static_cast<uint64_t>(timestamp_ms));
  return out;
}

// --- the process -------------------------------------------------------



std::string PromDuration(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
}

}  // namespace

std::string EncodeWriteRequest(const std::vector<RemoteSeries>& series,
                               absl::Time now) {
  std::string out;
  for (const RemoteSeries& s : series) {
    std::vector<std::pair<std::string, std::string>> labels = s.labels;
    labels.emplace_back("__name__", s.name);
    std::sort(labels.begin(), labels.end());
    std::string ts;
    for (const auto& [name, value] : labels) {
      PutBytes(ts, 1, EncodeLabel(name, value));
    }
    absl::Time t = s.time == absl::InfinitePast() ? now : s.time;
    PutBytes(ts, 2, EncodeSample(s.value, absl::ToUnixMillis(t)));
    PutBytes(out, 1, ts);  // WriteRequest{1: repeated TimeSeries}
  }
  return out;
}

std::string SnappyLiterals(absl::string_view data) {
  constexpr size_t kChunk = 65536;
  std::string out;
  PutVarint(out, data.size());
  while (!data.empty()) {
    size_t n = std::min(kChunk, data.size());
    size_t m = n - 1;
    if (m < 60) {
      out += static_cast<char>(m << 2);
    } else if (m < 256) {
      out += static_cast<char>(60 << 2);
      out += static_cast<char>(m);
    } else {
      out += static_cast<char>(61 << 2);
      out += static_cast<char>(m & 0xff);
      out += static_cast<char>(m >> 8);
    }
    out.append(data.data(), n);
    data.remove_prefix(n);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<PrometheusServer>> PrometheusServer::Start(
    Options options) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat(options.binary, " not found: install Debian's prometheus"));
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/ms-prometheus-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  {
    std::ofstream config(pattern + "/prometheus.yml");
    if (options.scrape_jobs.empty()) {
      config << "# No scrape targets: tests write their samples.\n"
                "global:\n  scrape_interval: 1m\nscrape_configs: []\n";
    } else {
      // A YAML double-quoted string (job names, addresses, label values).
      auto quoted = [](absl::string_view s) {
        std::string out = "\"";
        for (char c : s) {
          if (c == '"' || c == '\\') out += '\\';
          out += c;
        }
        return out + "\"";
      };
      const std::string interval = absl::StrCat(
          absl::ToInt64Milliseconds(options.scrape_interval), "ms");
      config << "global:\n  scrape_interval: " << interval
             << "\n  scrape_timeout: " << interval << "\nscrape_configs:\n";
      for (const Options::ScrapeJob& job : options.scrape_jobs) {
        config << "  - job_name: " << quoted(job.job)
               << "\n    scheme: " << quoted(job.scheme)
               << "\n    metrics_path: " << quoted(job.metrics_path) << "\n";
        if (!job.bearer_token_file.empty()) {
          config << "    authorization: {credentials_file: "
                 << quoted(job.bearer_token_file) << "}\n";
        }
        if (job.insecure_skip_verify) {
          config << "    tls_config: {insecure_skip_verify: true}\n";
        }
        if (job.honor_labels) config << "    honor_labels: true\n";
        config << "    static_configs:\n      - targets: [";
        for (size_t i = 0; i < job.targets.size(); ++i) {
          config << (i ? ", " : "") << quoted(job.targets[i]);
        }
        config << "]\n        labels: {";
        for (size_t i = 0; i < job.labels.size(); ++i) {
          config << (i ? ", " : "") << quoted(job.labels[i].first) << ": "
                 << quoted(job.labels[i].second);
        }
        config << "}\n";
      }
    }
  }
  if (!options.web_config.empty()) {
    std::ofstream(pattern + "/web.yml") << options.web_config;
  }
  // The port is free when chosen but may be taken before Prometheus binds
  // it: try a few.
  std::unique_ptr<PrometheusServer> server(
      new PrometheusServer(options, pattern, -1));
  absl::Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    server->port_ = FreeLoopbackPort();
    if (server->port_ < 0) return absl::InternalError("no free loopback port");
    last = server->Launch(/*retry_on_exit=*/false);
    if (last.ok()) return server;
  }
  return last;
}

PrometheusServer::PrometheusServer(Options options, std::string dir, int port)
    : options_(std::move(options)),
      dir_(std::move(dir)),
      port_(port),
      http_(options_.client_tls) {}

absl::StatusOr<HttpResponse> PrometheusServer::Send(HttpRequest request) {
  if (!options_.basic_auth.empty()) {
    request.headers.emplace_back(
        "Authorization",
        absl::StrCat("Basic ", absl::Base64Escape(options_.basic_auth)));
  }
  return http_.Do(request);
}

PrometheusServer::~PrometheusServer() {
  Stop().IgnoreError();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string PrometheusServer::url() const {
  return absl::StrCat(options_.https ? "https" : "http", "://127.0.0.1:",
                      port_);
}

std::string PrometheusServer::LogTail(size_t bytes) const {
  absl::StatusOr<std::string> log = ReadFile(dir_ + "/prometheus.log");
  if (!log.ok()) return "";
  return log->size() > bytes ? log->substr(log->size() - bytes) : *log;
}

absl::Status PrometheusServer::Launch(bool retry_on_exit) {
  std::vector<std::string> args = {
      options_.binary,
      absl::StrCat("--config.file=", dir_, "/prometheus.yml"),
      absl::StrCat("--storage.tsdb.path=", dir_, "/data"),
      absl::StrCat("--web.listen-address=127.0.0.1:", port_),
      "--web.enable-remote-write-receiver",
      "--web.enable-admin-api",
      absl::StrCat("--query.lookback-delta=",
                   PromDuration(options_.lookback_delta)),
  };
  if (!options_.web_config.empty()) {
    args.push_back(absl::StrCat("--web.config.file=", dir_, "/web.yml"));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string log_path = dir_ + "/prometheus.log";

  const absl::Time deadline = absl::Now() + options_.start_timeout;
  while (true) {
    int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log_fd < 0) {
      return absl::InternalError(absl::StrCat(log_path, ": ", std::strerror(errno)));
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(log_fd);
      return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
    }
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      if (options_.die_with_parent) prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(log_fd);
    pid_ = pid;

    // Ready, exited, or out of time.
    while (true) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;  // exited: maybe the port is not released yet
      }
      HttpRequest request;
      request.url = absl::StrCat(url(), "/-/ready");
      request.timeout = absl::Seconds(1);
      absl::StatusOr<HttpResponse> r = Send(request);
      if (r.ok() && r->status == 200) return absl::OkStatus();
      if (absl::Now() > deadline) {
        Stop().IgnoreError();
        return absl::InternalError(
            absl::StrCat("prometheus did not become ready within ",
                         absl::FormatDuration(options_.start_timeout),
                         "; log:\n", LogTail()));
      }
      absl::SleepFor(absl::Milliseconds(20));  // polling a child process
    }
    if (!retry_on_exit || absl::Now() > deadline) {
      return absl::InternalError(absl::StrCat(
          "prometheus exited during start; log:\n", LogTail()));
    }
    absl::SleepFor(absl::Milliseconds(200));  // before trying the port again
  }
}

absl::Status PrometheusServer::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  int status;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));  // polling a child process
  }
  pid_ = -1;
  return absl::OkStatus();
}

absl::Status PrometheusServer::Restart() {
  if (absl::Status s = Stop(); !s.ok()) return s;
  return Launch(/*retry_on_exit=*/true);
}

absl::Status PrometheusServer::Write(const std::vector<RemoteSeries>& series) {
  HttpRequest request;
  request.method = "POST";
  request.url = absl::StrCat(url(), "/api/v1/write");
  request.body = SnappyLiterals(EncodeWriteRequest(series, absl::Now()));
  request.headers = {{"Content-Encoding", "snappy"},
                     {"Content-Type", "application/x-protobuf"},
                     {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
  request.timeout = absl::Seconds(30);
  absl::StatusOr<HttpResponse> r = Send(request);
  if (!r.ok()) return r.status();
  if (r->status / 100 != 2) {
    return absl::InternalError(absl::StrCat("remote write: HTTP ", r->status,
                                            ": ", r->body));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrometheusServer::Query(absl::string_view promql) {
  HttpRequest request;
  request.url =
      absl::StrCat(url(), "/api/v1/query?query=", UrlEncode(promql));
  request.timeout = absl::Seconds(30);
  absl::StatusOr<HttpResponse> r = Send(request);
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

absl::StatusOr<double> PrometheusServer::RequestsServed(
    absl::string_view handler) {
  HttpRequest request;
  request.url = absl::StrCat(url(), "/metrics");
  request.timeout = absl::Seconds(30);
  absl::StatusOr<HttpResponse> r = Send(request);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return absl::InternalError(absl::StrCat("/metrics: HTTP ", r->status));
  }
  // prometheus_http_requests_total{code="200",handler="/api/v1/query"} 12
  const std::string label = absl::StrCat("handler=\"", handler, "\"");
  double total = 0;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (!absl::StartsWith(line, "prometheus_http_requests_total{") ||
        !absl::StrContains(line, label)) {
      continue;
    }
    double v = 0;
    if (!absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) {
      return absl::InternalError(absl::StrCat("/metrics: cannot read ", line));
    }
    total += v;
  }
  return total;
}

absl::Status PrometheusServer::DeleteSeries(absl::string_view selector) {
  HttpRequest request;
  request.method = "POST";
  request.url = absl::StrCat(url(), "/api/v1/admin/tsdb/delete_series?match[]=",
                             UrlEncode(selector));
  request.timeout = absl::Seconds(30);
  absl::StatusOr<HttpResponse> r = Send(request);
  if (!r.ok()) return r.status();
  if (r->status / 100 != 2) {
    return absl::InternalError(absl::StrCat("delete_series: HTTP ", r->status,
                                            ": ", r->body));
  }
  return absl::OkStatus();
}

}  // namespace ms::testing
