// RunProcess: runs a program to its end and collects what it printed.
//
// For the credential plugins of kubeconfigs (kube/exec_credential.h):
// programs named by configuration, run without a shell, whose stdout is
// the answer and whose stderr explains a failure.
//
//   absl::StatusOr<ProcessResult> r =
//       RunProcess({"gke-gcloud-auth-plugin"}, Environ(), {});
//   if (r.ok() && r->Exited(0)) Use(r->stdout_text);
//
// The program: `argv[0]` is looked up in $PATH unless it holds a '/'. The
// child gets exactly `env` as its environment, /dev/null as stdin, pipes as
// stdout and stderr (read as they fill, so the child never blocks on a full
// pipe), none of our other file descriptors, an empty signal mask and
// default signal dispositions (whatever the calling thread blocks or the
// process ignores), and a process group of its own: on timeout the whole
// group is killed, the helpers the program started too.
//
// Failure contract: NotFound when the program does not exist (or is not on
// $PATH), PermissionDenied when it may not be executed, DeadlineExceeded
// when it outlived `timeout` (it has been killed), ResourceExhausted when
// its stdout passed `max_stdout` bytes (killed too), Internal when the
// system refused to start or watch it. A program that ran to its end is OK,
// whatever its exit code: the caller reads ProcessResult. Every message
// names argv[0].
//
// Thread-safe: calls are independent. It waits for its own child only
// (waitpid on its pid), so other children of the process are left alone.
#ifndef METRICS_SCHEDULER_COMMON_SUBPROCESS_H_
#define METRICS_SCHEDULER_COMMON_SUBPROCESS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ms {

struct ProcessOptions {
  // The longest the program may run, from its start to its exit.
  absl::Duration timeout = absl::Minutes(1);
  // More than this on stdout fails the run (ResourceExhausted).
  size_t max_stdout = size_t{1} << 20;
  // Only the last this many bytes of stderr are kept.
  size_t max_stderr = 4096;
};

struct ProcessResult {
  int exit_code = -1;  // 0-255 when it exited; -1 when a signal ended it
  int signal = 0;      // the signal that ended it; 0 when it exited
  std::string stdout_text;
  std::string stderr_text;  // its last ProcessOptions::max_stderr bytes
  bool stderr_truncated = false;  // more was written than stderr_text holds

  bool Exited(int code) const { return signal == 0 && exit_code == code; }
  // "exit code 3" or "signal 9 (Killed)".
  std::string Describe() const;
};

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         const ProcessOptions& options);

// This process's environment, as NAME=VALUE strings.
std::vector<std::string> Environ();

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_SUBPROCESS_H_
