#include "tests/testing/command.h"

#include <vector>

#include "absl/strings/str_split.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"

namespace ms::testing {

CommandResult RunCommandLine(const std::string& command_line,
                             absl::Duration timeout) {
  std::vector<std::string> argv =
      absl::StrSplit(command_line, ' ', absl::SkipEmpty());
  CommandResult result;
  absl::StatusOr<ProcessResult> r =
      RunProcess(argv, Environ(),
                 {.timeout = timeout,
                  .max_stdout = size_t{64} << 20,
                  .max_stderr = size_t{64} << 10});
  if (!r.ok()) {
    ADD_FAILURE() << command_line << ": " << r.status();
    return result;
  }
  result.exit_code = r->signal == 0 ? r->exit_code : -1;
  result.out = std::move(r->stdout_text);
  result.err = std::move(r->stderr_text);
  return result;
}

}  // namespace ms::testing
