#include "bench/harness/process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ms::bench {


std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string LoadAverage() {
  std::string text = ReadAll("/proc/loadavg");
  std::vector<std::string> parts = absl::StrSplit(text, ' ');
  if (parts.size() < 3) return "?";
  return absl::StrCat(parts[0], " ", parts[1], " ", parts[2]);
}

double CpuSeconds(pid_t pid) {
  // The process's CPU-time clock: every thread's time on a CPU, to the
  // nanosecond, where /proc's utime and stime count clock ticks (10 ms).
  clockid_t clock;
  timespec ts;
  if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &ts) == 0) {
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
  }
  std::string stat = ReadAll(absl::StrCat("/proc/", pid, "/stat"));
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> f =
      absl::StrSplit(stat.substr(paren + 2), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): utime is field 14, stime 15.
  double utime = 0, stime = 0;
  if (f.size() < 13 || !absl::SimpleAtod(f[11], &utime) ||
      !absl::SimpleAtod(f[12], &stime)) {
    return 0;
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double StatusMb(pid_t pid, const std::string& field) {
  std::istringstream in(ReadAll(absl::StrCat("/proc/", pid, "/status")));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    double kb = 0;
    std::string value(
        absl::StripAsciiWhitespace(line.substr(field.size() + 1)));
    if (absl::SimpleAtod(value.substr(0, value.find(' ')), &kb)) {
      return kb / 1024.0;
    }
  }
  return 0;
}

pid_t Spawn(const std::vector<std::string>& args, const std::string& log,
            const std::vector<std::string>& env) {
  // Built before the fork: the child only calls what is safe after one.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

void Terminate(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  int status;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

namespace {

// The live InterruptCleanups' functions, in the order they were registered.
absl::Mutex interrupt_mu(absl::kConstInit);
std::vector<const std::function<void()>*>* interrupt_cleanups
    ABSL_GUARDED_BY(interrupt_mu) = nullptr;
// The signal handler writes the signal's number here; the cleanup thread
// reads it.
int interrupt_pipe[2] = {-1, -1};

extern "C" void OnInterruptSignal(int sig) {
  const char c = static_cast<char>(sig);
  (void)!write(interrupt_pipe[1], &c, 1);
}

// Runs the live cleanups, the latest first, and leaves the lock held so
// that nothing registers or unregisters before the process exits.
void RunCleanups() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  interrupt_mu.Lock();
  if (interrupt_cleanups == nullptr) return;
  for (auto it = interrupt_cleanups->rbegin(); it != interrupt_cleanups->rend();
       ++it) {
    (**it)();
  }
}

void RunCleanupsOnInterrupt() {
  char sig = 0;
  while (read(interrupt_pipe[0], &sig, 1) < 0 && errno == EINTR) {
  }
  std::cerr << program_invocation_short_name << ": interrupted; cleaning up"
            << std::endl;
  RunCleanups();
  _exit(128 + sig);
}

// Once: the pipe, the thread and the handlers.
void InstallInterruptHandling() ABSL_EXCLUSIVE_LOCKS_REQUIRED(interrupt_mu) {
  if (interrupt_cleanups != nullptr) return;
  interrupt_cleanups = new std::vector<const std::function<void()>*>();
  if (pipe2(interrupt_pipe, O_CLOEXEC) != 0) {
    std::cerr << program_invocation_short_name << ": pipe2 failed" << std::endl;
    std::exit(1);
  }
  std::thread(RunCleanupsOnInterrupt).detach();
  struct sigaction action = {};
  action.sa_handler = OnInterruptSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

void Die(const std::string& message) {
  std::cerr << program_invocation_short_name << ": " << message << std::endl;
  RunCleanups();
  std::exit(1);
}

InterruptCleanup::InterruptCleanup(std::function<void()> cleanup)
    : cleanup_(std::move(cleanup)) {
  absl::MutexLock lock(&interrupt_mu);
  InstallInterruptHandling();
  interrupt_cleanups->push_back(&cleanup_);
}

InterruptCleanup::~InterruptCleanup() {
  absl::MutexLock lock(&interrupt_mu);
  std::erase(*interrupt_cleanups, &cleanup_);
}

void AwaitLogLine(pid_t pid, const std::string& what, const std::string& log,
                  const std::string& ready, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (ReadAll(log).find(ready) == std::string::npos) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      Die(what + " exited before it was ready:\n" + ReadAll(log));
    }
    if (absl::Now() > deadline) Die(what + " not ready:\n" + ReadAll(log));
    absl::SleepFor(absl::Milliseconds(100));
  }
}

int RunCommand(const std::string& command) {
  int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

pid_t ReadPid(const std::string& path) {
  int pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadAll(path)), &pid)) {
    Die("cannot read a pid from " + path);
  }
  return pid;
}

}  // namespace ms::bench
