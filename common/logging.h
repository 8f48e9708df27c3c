// Logging: the format of the project's glog lines on stderr, and the
// structured fields a line about a pod or a node carries.
//
// Code logs with glog's LOG(severity) and with MS_VLOG(n) (below). main()
// picks the format once, with InitLogging(), from --logging-format:
// - text (the default): glog's own lines, unchanged;
// - json: one JSON object per line, in the format Kubernetes components
//   write with --logging-format=json (klog's JSON format):
//     {"ts":1700000000123.456,"caller":"cycle/binder.cc:301",
//      "msg":"default/web-1: bound to n1","v":0,
//      "pod":{"name":"web-1","namespace":"default"},"node":"n1"}
//   ts: milliseconds since the Unix epoch; caller: the source file (its
//   folder and name) and line; msg: the message; v: the verbosity of an
//   info line, absent on an error line. klog's format has no place for a
//   warning: like klog, it is written as an info line ("v":0). Then the
//   line's LogFields, if any. A fatal error's stack trace is still text.
//
// A line about a pod or a node ends with LogFields, built only when the
// format is json:
//   LOG(INFO) << pod.Key() << ": bound to " << node
//             << LogFields().Pod(pod.namespace_, pod.name).Node(node);
// The text format writes nothing for them (the message names the pod and
// the node already); the json format adds them as keys, as kube-scheduler
// writes "pod" (namespace and name) and "node" (a name).
//
// Thread-safe: log from any thread.
#ifndef METRICS_SCHEDULER_COMMON_LOGGING_H_
#define METRICS_SCHEDULER_COMMON_LOGGING_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "glog/logging.h"

// glog's VLOG(n) that also gives the json format the line's verbosity
// ("v":n); with a plain VLOG the line says "v":0.
#define MS_VLOG(n) VLOG(n) << ::ms::log_internal::Verbosity{n}

namespace ms {

enum class LogFormat { kText, kJson };

// Initialises glog (google::InitGoogleLogging) to write every line to
// stderr in `format`. Call once, from main, before anything logs.
void InitLogging(const char* argv0, LogFormat format);

// The structured fields of one log line; stream it last.
class LogFields {
 public:
  // "pod":{"name":NAME,"namespace":NAMESPACE}
  LogFields& Pod(absl::string_view namespace_, absl::string_view name);
  // "node":NAME
  LogFields& Node(absl::string_view name);
  // "err":the status, as klog gives an error its own key.
  LogFields& Err(const absl::Status& status);

  // The fields as JSON members, each starting with a comma; empty when
  // the format is text.
  const std::string& json() const { return json_; }

 private:
  std::string json_;
};
std::ostream& operator<<(std::ostream& os, const LogFields& fields);

// One log line, as the json format writes it (exposed for tests).
struct LogRecord {
  enum class Severity { kInfo, kWarning, kError, kFatal };
  Severity severity = Severity::kInfo;
  absl::Time time;
  absl::string_view file;  // as __FILE__ names it
  int line = 0;
  absl::string_view message;
  int verbosity = 0;         // of an info or warning line
  absl::string_view fields;  // LogFields::json()
};
// The line's JSON object, without the newline.
std::string JsonLogLine(const LogRecord& record);

namespace log_internal {
// Streamed by MS_VLOG: the verbosity of the line being written.
struct Verbosity {
  int level;
};
std::ostream& operator<<(std::ostream& os, Verbosity v);
}  // namespace log_internal

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_LOGGING_H_
