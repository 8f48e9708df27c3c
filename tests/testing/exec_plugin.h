// Exec credential plugins for tests (kube/exec_credential.h): small shell
// scripts that print an ExecCredential, and the JSON they print.
//
//   std::string plugin = dir + "/plugin";
//   WriteScript(plugin, CountRuns(dir + "/runs") +
//                           PrintCredential(TokenCredential("t-$n")));
//
// Scripts run /bin/sh; they are written whole and closed before anything
// runs them. Thread-compatible.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_EXEC_PLUGIN_H_
#define METRICS_SCHEDULER_TESTS_TESTING_EXEC_PLUGIN_H_

#include <string>

namespace ms::testing {

// Writes an executable (0755) /bin/sh script: "#!/bin/sh\n" then `body`.
void WriteScript(const std::string& path, const std::string& body);

// An ExecCredential holding `token`, with `expiry` (RFC 3339) unless "".
// Shell expansions in the arguments ("$n") are kept for PrintCredential.
std::string TokenCredential(
    const std::string& token, const std::string& expiry = "",
    const std::string& api_version = "client.authentication.k8s.io/v1");

// Script lines printing `json` on stdout through a here-document, the
// shell's expansions ($n, $(cat FILE)) done: '$', '`' and '\' followed by
// one of them or by a newline are the shell's.
std::string PrintCredential(const std::string& json);

// Script lines counting the script's runs in `counter_file`: $n is this
// run's number, 1 for the first.
std::string CountRuns(const std::string& counter_file);

// How many times a CountRuns script ran (0 before the first).
int RunsCounted(const std::string& counter_file);

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_EXEC_PLUGIN_H_
