// The command line: usage, --help and --version, the flags' checks, and
// the subcommands (validate-config, explain). The daemon itself is main.cc's
// Run.
//
// Exit codes: 0 clean shutdown (or a valid configuration); 1 a runtime
// failure (leadership lost, the apiserver unusable at start); 2 bad usage
// (an unknown flag or a bad value, whatever the subcommand) or
// configuration.
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_CLI_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_CLI_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "config/config.h"

namespace ms {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The program's usage text (--help) and the run command's usage line.
extern const char kUsage[];
extern const char kRunUsage[];

// The usage line of `command` ("" or unknown: the run command's).
const char* UsageOf(absl::string_view command);

// --version, -version: prints the version on stdout; whether asked.
bool PrintVersionIfAsked(int argc, char** argv);

// --help, -h: prints the usage text and this binary's flags, written with
// dashes, on stdout; whether asked. (Abseil's own --help exits 1 and lists
// every library's flags.)
bool PrintHelpIfAsked(int argc, char** argv);

// Flags are written with dashes, as kube-scheduler's are
// (--leader-elect); Abseil names them with underscores. Rewrites the name
// part of every --flag in place.
void DashesToUnderscores(int argc, char** argv);

// glog owns --v (gflags); Abseil's parser would reject it. Takes -v=N,
// --v=N, -v N and --v N out of argv and gives them to glog; exits 2 on a
// bad value.
std::vector<char*> TakeVerbosity(int argc, char** argv);

// What CheckFlags found.
struct FlagCheck {
  std::string error;    // "" when every flag is good
  std::string command;  // the first positional argument ("" for none)
};

// Checks the flags of `args` (args[0] is the program; names already with
// underscores) by Abseil's rules, so that a bad one is a usage error (exit
// 2) rather than Abseil's exit 1; see cli.cc.
FlagCheck CheckFlags(const std::vector<char*>& args);

// How a configuration is loaded: with its files checked (--check-files).
LoadOptions FileChecks();

// `validate-config FILE` and `explain NS/NAME|FILE`, with the arguments
// after the command; each returns the exit code.
int ValidateConfig(const std::vector<char*>& args);
int ExplainCommand(const std::vector<char*>& args);

// `probe`: whether the configured queries name the cluster's nodes
// (probe.h). 0 every query metric at or above --min-coverage, 1 one below
// it or the cluster or backend unreadable, 2 bad usage or configuration.
int ProbeCommand(const std::vector<char*>& args);

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_CLI_H_
