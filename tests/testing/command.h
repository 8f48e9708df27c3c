// RunCommandLine: a command of the tests' own (a testenv subcommand,
// promtool), written as one line of words separated by spaces: no shell,
// no quoting. Runs it with RunProcess (common/subprocess.h) and fails the
// test when it cannot be started.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_COMMAND_H_
#define METRICS_SCHEDULER_TESTS_TESTING_COMMAND_H_

#include <string>

#include "absl/time/time.h"

namespace ms::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when it did not run to its end
  std::string out;     // stdout
  std::string err;     // stderr (its last 64 KiB)
};

CommandResult RunCommandLine(const std::string& command_line,
                             absl::Duration timeout = absl::Minutes(5));

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_COMMAND_H_
