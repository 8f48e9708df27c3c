#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace ms {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  int get() const { return fd_; }
  void Reset(int fd) {
    Close();
    fd_ = fd;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// The pipes' ends: ours read, the child's write.
struct Pipe {
  Fd read, write;
};

absl::Status MakePipe(Pipe& pipe) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("pipe: ", std::strerror(errno)));
  }
  pipe.read.Reset(fds[0]);
  pipe.write.Reset(fds[1]);
  return absl::OkStatus();
}

// Owns the spawn attributes and file actions for one call.
class SpawnSetup {
 public:
  SpawnSetup(int stdout_fd, int stderr_fd) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, stdout_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, stderr_fd, STDERR_FILENO);
    // Sockets other threads open without O_CLOEXEC stay ours.
    posix_spawn_file_actions_addclosefrom_np(&actions_, STDERR_FILENO + 1);

    posix_spawnattr_init(&attr_);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP |
                                         POSIX_SPAWN_SETSIGMASK |
                                         POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr_, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr_, &none);
    // The signals a daemon may ignore or block: the child gets them back.
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
                    SIGUSR2, SIGCHLD, SIGALRM}) {
      sigaddset(&defaults, sig);
    }
    posix_spawnattr_setsigdefault(&attr_, &defaults);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attr() const { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) {
    out.push_back(const_cast<char*>(s.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

// Waits for `pid` to end; its wait status.
int WaitBlocking(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Kills the child's process group and reaps the child.
void KillAndReap(pid_t pid) {
  kill(-pid, SIGKILL);
  WaitBlocking(pid);
}

int MillisecondsUntil(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - SteadyClock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

}  // namespace

std::string ProcessResult::Describe() const {
  if (signal != 0) {
    return absl::StrCat("signal ", signal, " (", strsignal(signal), ")");
  }
  return absl::StrCat("exit code ", exit_code);
}

std::vector<std::string> Environ() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  return env;
}

namespace {

// Starts `argv` with `env`, its stdout and stderr the write ends of `out`
// and `err`.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env,
                            const Pipe& out, const Pipe& err) {
  const std::string& program = argv[0];
  pid_t pid = 0;
  SpawnSetup setup(out.write.get(), err.write.get());
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);
  int rc = posix_spawnp(&pid, program.c_str(), setup.actions(), setup.attr(),
                        c_argv.data(), c_env.data());
  if (rc == 0) return pid;
  std::string msg = absl::StrCat(program, ": ", std::strerror(rc));
  if (rc == ENOENT) return absl::NotFoundError(msg);
  if (rc == EACCES || rc == ENOEXEC || rc == EPERM) {
    return absl::PermissionDeniedError(msg);
  }
  return absl::InternalError(msg);
}

absl::Status TimedOut(const std::string& program, absl::Duration timeout) {
  return absl::DeadlineExceededError(absl::StrCat(
      program, ": did not finish within ", absl::FormatDuration(timeout)));
}

// Reads the child's stdout and stderr into `result` until both are closed;
// kills it on a timeout, a read error or too much on stdout.
absl::Status ReadOutput(pid_t pid, const std::string& program, Pipe& out,
                        Pipe& err, SteadyClock::time_point deadline,
                        const ProcessOptions& options, ProcessResult& result) {
  struct pollfd fds[2] = {{out.read.get(), POLLIN, 0},
                          {err.read.get(), POLLIN, 0}};
  int open = 2;
  char buffer[65536];
  while (open > 0) {
    int wait_ms = MillisecondsUntil(deadline);
    int n = wait_ms > 0 ? poll(fds, 2, wait_ms) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      KillAndReap(pid);
      return absl::InternalError(
          absl::StrCat(program, ": poll: ", std::strerror(e)));
    }
    if (n == 0) {
      KillAndReap(pid);
      return TimedOut(program, options.timeout);
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t r = read(fds[i].fd, buffer, sizeof buffer);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0) {
        fds[i].fd = -1;  // poll skips negative descriptors
        --open;
        continue;
      }
      if (i == 0) {
        result.stdout_text.append(buffer, static_cast<size_t>(r));
        if (result.stdout_text.size() > options.max_stdout) {
          KillAndReap(pid);
          return absl::ResourceExhaustedError(
              absl::StrCat(program, ": more than ", options.max_stdout,
                           " bytes on stdout"));
        }
      } else {
        result.stderr_text.append(buffer, static_cast<size_t>(r));
        // Trimmed now and then rather than on every read.
        if (result.stderr_text.size() > 2 * options.max_stderr + 65536) {
          result.stderr_text.erase(
              0, result.stderr_text.size() - options.max_stderr);
          result.stderr_truncated = true;
        }
      }
    }
  }
  if (result.stderr_text.size() > options.max_stderr) {
    result.stderr_text.erase(0,
                             result.stderr_text.size() - options.max_stderr);
    result.stderr_truncated = true;
  }
  return absl::OkStatus();
}

// Waits for the child to exit, killing it at the deadline; its wait status.
absl::StatusOr<int> Reap(pid_t pid, const std::string& program,
                         SteadyClock::time_point deadline,
                         absl::Duration timeout) {
  int status = 0;
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0 && errno != EINTR) {
      int e = errno;
      return absl::InternalError(
          absl::StrCat(program, ": waitpid: ", std::strerror(e)));
    }
    if (SteadyClock::now() >= deadline) {
      KillAndReap(pid);
      return TimedOut(program, timeout);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2,
                                                std::chrono::milliseconds(10));
  }
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  const std::string& program = argv[0];
  const SteadyClock::time_point deadline =
      SteadyClock::now() + absl::ToChronoNanoseconds(options.timeout);
  Pipe out, err;
  if (absl::Status s = MakePipe(out); !s.ok()) return s;
  if (absl::Status s = MakePipe(err); !s.ok()) return s;
  absl::StatusOr<pid_t> pid = Spawn(argv, env, out, err);
  if (!pid.ok()) return pid.status();
  // Only the child may hold the write ends now: EOF comes when it (and
  // whatever it started) closes them.
  out.write.Close();
  err.write.Close();

  ProcessResult result;
  if (absl::Status s =
          ReadOutput(*pid, program, out, err, deadline, options, result);
      !s.ok()) {
    return s;
  }
  // Both pipes are closed; the program may still be running (a helper it
  // started closed them, or it closed them itself).
  absl::StatusOr<int> status = Reap(*pid, program, deadline, options.timeout);
  if (!status.ok()) return status.status();
  if (WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  } else if (WIFSIGNALED(*status)) {
    result.signal = WTERMSIG(*status);
  }
  return result;
}

}  // namespace ms
