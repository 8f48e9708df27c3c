#include "tests/testing/kube_scheduler_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ms::testing {

absl::StatusOr<std::unique_ptr<KubeSchedulerProcess>>
KubeSchedulerProcess::Start(const Testenv& env, const std::string& config_tail) {
  const char* bin = std::getenv("TESTENV_BIN");
  if (bin == nullptr) {
    return absl::FailedPreconditionError("TESTENV_BIN is not set");
  }
  static std::atomic<int> counter{0};
  const std::string dir = absl::StrCat(::testing::TempDir(), "/kube-scheduler-",
                                       getpid(), "-", counter++);
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/config.yaml";
  std::ofstream(config) << absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\n",
      "kind: KubeSchedulerConfiguration\n",
      "clientConnection: {kubeconfig: \"", env.dir(), "/admin.kubeconfig\"}\n",
      "leaderElection: {leaderElect: false}\n", config_tail);
  std::vector<std::string> args = {
      bin, "kube-scheduler", "--config=" + config, "--secure-port=0", "-v=4"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = dir + "/kube-scheduler.log";
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return std::unique_ptr<KubeSchedulerProcess>(
      new KubeSchedulerProcess(pid, dir));
}

KubeSchedulerProcess::KubeSchedulerProcess(pid_t pid, std::string dir)
    : pid_(pid), dir_(std::move(dir)) {}

KubeSchedulerProcess::~KubeSchedulerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::filesystem::remove_all(dir_);
}

bool KubeSchedulerProcess::Running() {
  if (pid_ <= 0) return false;
  int status;
  if (waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
  return pid_ > 0;
}

std::string KubeSchedulerProcess::Log() const {
  std::ifstream in(dir_ + "/kube-scheduler.log");
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  constexpr size_t kTail = 8000;
  return text.size() > kTail ? text.substr(text.size() - kTail) : text;
}

}  // namespace ms::testing
