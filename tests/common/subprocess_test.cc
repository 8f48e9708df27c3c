#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

absl::StatusOr<ProcessResult> Sh(const std::string& script,
                                 const std::vector<std::string>& env = {},
                                 ProcessOptions options = {}) {
  return RunProcess({"/bin/sh", "-c", script}, env, options);
}

TEST(RunProcessTest, ExitCodeOutputsAndExactlyTheEnvironmentGiven) {
  absl::StatusOr<ProcessResult> r =
      Sh("echo \"out $A ${HOME-unset}\"; echo err >&2; exit 7", {"A=1"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->Exited(7));
  EXPECT_EQ(r->Describe(), "exit code 7");
  EXPECT_EQ(r->stdout_text, "out 1 unset\n");
  EXPECT_EQ(r->stderr_text, "err\n");
  EXPECT_FALSE(r->stderr_truncated);
}

TEST(RunProcessTest, StdinIsEmptyAndNoOtherDescriptorIsInherited) {
  // Opened without O_CLOEXEC, as a library's socket might be.
  int leaked = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 3);
  absl::StatusOr<ProcessResult> cat = RunProcess({"cat"}, Environ(), {});
  absl::StatusOr<ProcessResult> fds =
      RunProcess({"ls", "/proc/self/fd"}, Environ(), {});
  close(leaked);
  ASSERT_TRUE(cat.ok()) << cat.status();
  EXPECT_TRUE(cat->Exited(0));
  EXPECT_EQ(cat->stdout_text, "");
  ASSERT_TRUE(fds.ok()) << fds.status();
  // ls's own: stdin, stdout, stderr, and the folder it reads.
  EXPECT_EQ(fds->stdout_text, "0\n1\n2\n3\n");
}

TEST(RunProcessTest, TheChildDoesNotInheritBlockedSignals) {
  // The scheduler blocks SIGTERM in its threads (it waits for it in one).
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  absl::StatusOr<ProcessResult> r = Sh("kill -TERM $$; echo survived");
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->signal, SIGTERM) << r->stdout_text;
  EXPECT_EQ(r->Describe(), "signal 15 (Terminated)");
}

TEST(RunProcessTest, BothPipesAreDrainedAndStderrIsBounded) {
  // 256 KiB on each: more than a pipe holds, so a reader of one pipe at a
  // time would deadlock with the child.
  absl::StatusOr<ProcessResult> r =
      Sh("head -c 262144 /dev/zero | tr '\\0' e >&2; "
         "head -c 262144 /dev/zero | tr '\\0' o; echo end >&2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->Exited(0));
  EXPECT_EQ(r->stdout_text, std::string(262144, 'o'));
  EXPECT_EQ(r->stderr_text, std::string(4092, 'e') + "end\n");
  EXPECT_TRUE(r->stderr_truncated);
}

TEST(RunProcessTest, Failures) {
  absl::StatusOr<ProcessResult> r =
      RunProcess({"metrics-scheduler-test-no-such-program"}, Environ(), {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "metrics-scheduler-test-no-such-program: No such file or "
            "directory");

  r = RunProcess({"/dev/null"}, Environ(), {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);

  r = Sh("head -c 100000 /dev/zero", Environ(), {.max_stdout = 1000});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "/bin/sh: more than 1000 bytes on stdout");

  r = Sh("sleep 60", Environ(), {.timeout = absl::Milliseconds(100)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(), "/bin/sh: did not finish within 100ms");

  // It closes its outputs and carries on: the timeout still holds.
  r = Sh("exec >/dev/null 2>&1; sleep 60", Environ(),
         {.timeout = absl::Milliseconds(100)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);

  EXPECT_EQ(RunProcess({}, Environ(), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ms
