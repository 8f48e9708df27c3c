// The daemon's command-line flags, defined in flags.cc (whose flags are the
// ones --help lists) and read by cli.cc, setup.cc and main.cc.
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_FLAGS_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/logging.h"

namespace ms {

// --logging-format's values: text or json.
bool AbslParseFlag(absl::string_view text, LogFormat* format,
                   std::string* error);
std::string AbslUnparseFlag(LogFormat format);

}  // namespace ms

ABSL_DECLARE_FLAG(std::string, config);
ABSL_DECLARE_FLAG(std::string, kubeconfig);
ABSL_DECLARE_FLAG(std::string, context);
ABSL_DECLARE_FLAG(std::string, master);
ABSL_DECLARE_FLAG(bool, master_keeps_credentials);
ABSL_DECLARE_FLAG(bool, leader_elect);
ABSL_DECLARE_FLAG(std::string, lease_name);
ABSL_DECLARE_FLAG(std::string, lease_namespace);
ABSL_DECLARE_FLAG(std::string, http_address);
ABSL_DECLARE_FLAG(int, secure_port);
ABSL_DECLARE_FLAG(std::string, bind_address);
ABSL_DECLARE_FLAG(std::string, tls_cert_file);
ABSL_DECLARE_FLAG(std::string, tls_private_key_file);
ABSL_DECLARE_FLAG(std::string, client_ca_file);
ABSL_DECLARE_FLAG(bool, extender_secure);
ABSL_DECLARE_FLAG(int64_t, extender_max_node_names);
ABSL_DECLARE_FLAG(std::string, identity);
ABSL_DECLARE_FLAG(int, bind_workers);
ABSL_DECLARE_FLAG(int, max_bindings_in_flight);
ABSL_DECLARE_FLAG(int64_t, max_apiserver_response_bytes);
ABSL_DECLARE_FLAG(int64_t, max_watch_event_bytes);
ABSL_DECLARE_FLAG(absl::Duration, volume_binding_timeout);
ABSL_DECLARE_FLAG(bool, check_files);
ABSL_DECLARE_FLAG(absl::Duration, liveness_stall_timeout);
ABSL_DECLARE_FLAG(absl::Duration, shutdown_timeout);
ABSL_DECLARE_FLAG(bool, shadow);
ABSL_DECLARE_FLAG(std::string, shadow_of);
ABSL_DECLARE_FLAG(bool, rebalance);
ABSL_DECLARE_FLAG(std::string, kube_version);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(double, min_coverage);
ABSL_DECLARE_FLAG(ms::LogFormat, logging_format);

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_FLAGS_H_
