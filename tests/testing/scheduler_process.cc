#include "tests/testing/scheduler_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/token_file.h"
#include "gtest/gtest.h"
#include "tests/testing/loopback.h"

namespace ms::testing {


absl::StatusOr<std::unique_ptr<SchedulerProcess>> SchedulerProcess::Start(
    const Options& options) {
  static std::atomic<int> counter{0};
  const char* bin_dir = std::getenv("MS_BINARY_DIR");
  if (bin_dir == nullptr) {
    return absl::FailedPreconditionError("MS_BINARY_DIR is not set");
  }
  std::string dir = absl::StrCat(::testing::TempDir(), "/scheduler-",
                                 getpid(), "-", counter++);
  std::string mkdir = "mkdir -p " + dir;
  if (std::system(mkdir.c_str()) != 0) {
    return absl::InternalError("cannot create " + dir);
  }
  std::string config = dir + "/config.yaml";
  std::ofstream(config) << options.config_yaml;
  std::string log = dir + "/scheduler.log";
  int port = FreeLoopbackPort();
  int secure_port = 0;
  for (int i = 0; options.secure_port && i < 10 &&
                  (secure_port <= 0 || secure_port == port);
       ++i) {
    secure_port = FreeLoopbackPort();
  }
  if (port <= 0 || (options.secure_port && secure_port <= 0)) {
    return absl::InternalError("no free loopback port");
  }

  std::vector<std::string> args = {
      std::string(bin_dir) + "/metrics-scheduler",
      "--config=" + config,
      absl::StrCat("--http-address=127.0.0.1:", port),
      "--identity=" + options.identity,
      "-v=1"};
  if (!options.kubeconfig.empty()) {
    args.push_back("--kubeconfig=" + options.kubeconfig);
  }
  if (options.secure_port) {
    args.push_back(absl::StrCat("--secure-port=", secure_port));
    args.push_back("--bind-address=127.0.0.1");
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [n, v] : options.env) overridden = overridden || n == name;
    if (!overridden) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : options.env) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  std::unique_ptr<SchedulerProcess> process(new SchedulerProcess(
      pid, port, secure_port, options.metrics_token, log, options.identity));
  // Serving once /healthz answers on every port it was given.
  auto healthy = [&](HttpClient& client, const std::string& url) {
    HttpRequest r{.url = url + "/healthz", .timeout = absl::Seconds(1)};
    absl::StatusOr<HttpResponse> answer = client.Do(r);
    return answer.ok() && answer->status == 200;
  };
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    if (healthy(process->http_, absl::StrCat("http://127.0.0.1:", port)) &&
        (secure_port == 0 ||
         healthy(process->https_,
                 absl::StrCat("https://127.0.0.1:", secure_port)))) {
      return process;
    }
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      process->pid_ = -1;
      return absl::InternalError(
          absl::StrCat("metrics-scheduler exited at start:\n", process->Log()));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::InternalError(absl::StrCat(
      "metrics-scheduler did not serve /healthz:\n", process->Log()));
}

SchedulerProcess::SchedulerProcess(pid_t pid, int port, int secure_port,
                                   std::string metrics_token, std::string log,
                                   std::string identity)
    : pid_(pid),
      port_(port),
      secure_port_(secure_port),
      metrics_token_(std::move(metrics_token)),
      log_(std::move(log)),
      identity_(std::move(identity)) {}

SchedulerProcess::~SchedulerProcess() { Kill(); }

int SchedulerProcess::Stop(absl::Duration grace) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  absl::Time deadline = absl::Now() + grace;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (absl::Now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

bool SchedulerProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  pid_ = -1;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return false;
}

std::optional<int> SchedulerProcess::WaitForExit(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  return exit_code_;
}

void SchedulerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool SchedulerProcess::Ready() {
  HttpRequest r{.url = absl::StrCat("http://127.0.0.1:", port_, "/readyz"),
                .timeout = absl::Seconds(2)};
  absl::StatusOr<HttpResponse> answer = http_.Do(r);
  return answer.ok() && answer->status == 200;
}

absl::StatusOr<std::string> SchedulerProcess::Scrape() {
  HttpRequest r{.url = absl::StrCat("http://127.0.0.1:", port_, "/metrics"),
                .timeout = absl::Seconds(2)};
  if (secure_port_ != 0) {
    r.url = absl::StrCat("https://127.0.0.1:", secure_port_, "/metrics");
    r.headers.emplace_back("Authorization", "Bearer " + metrics_token_);
  }
  absl::StatusOr<HttpResponse> answer =
      secure_port_ != 0 ? https_.Do(r) : http_.Do(r);
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("/metrics answered ", answer->status));
  }
  return std::move(answer->body);
}

double SchedulerProcess::Metric(const std::string& sample) {
  absl::StatusOr<std::string> text = Scrape();
  if (!text.ok()) return 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (line.size() > sample.size() && line.substr(0, sample.size()) == sample &&
        line[sample.size()] == ' ') {
      double v = 0;
      if (absl::SimpleAtod(line.substr(sample.size() + 1), &v)) return v;
    }
  }
  return 0;
}

std::string SchedulerProcess::Log() const {
  absl::StatusOr<std::string> text = ReadFile(log_);
  return text.ok() ? *text : "";
}

SchedulerProcess* SchedulerProcesses::Start(
    const SchedulerProcess::Options& options) {
  absl::StatusOr<std::unique_ptr<SchedulerProcess>> s =
      SchedulerProcess::Start(options);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  processes_.push_back(std::move(*s));
  return processes_.back().get();
}

void SchedulerProcesses::StopAll(bool print_logs) {
  if (print_logs) {
    for (const auto& s : processes_) {
      std::string log = s->Log();
      if (log.size() > 200000) log = log.substr(log.size() - 200000);
      std::cerr << "---- log of " << s->identity() << " ----\n" << log << "\n";
    }
  }
  for (const auto& s : processes_) s->Stop();
}

}  // namespace ms::testing
