#include "common/logging.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/json.h"

namespace ms {
namespace {

std::atomic<bool> json_format{false};

bool Json() { return json_format.load(std::memory_order_relaxed); }

// What the statement writing a line gave beyond its text (MS_VLOG's
// verbosity, LogFields), on this thread. Reset as each line starts (glog
// calls StartLine then), so a line glog drops (below --minloglevel) leaves
// nothing to the next.
struct LineState {
  int verbosity = 0;
  std::string fields;
};

LineState& ThisLine() {
  thread_local LineState state;
  return state;
}

// glog's custom prefix, called as each line starts, on the thread writing
// it. The json format writes no prefix.
void StartLine(std::ostream&, const google::LogMessageInfo&, void*) {
  LineState& state = ThisLine();
  state.verbosity = 0;
  state.fields.clear();
}

LogRecord::Severity SeverityOf(google::LogSeverity severity) {
  switch (severity) {
    case google::GLOG_INFO: return LogRecord::Severity::kInfo;
    case google::GLOG_WARNING: return LogRecord::Severity::kWarning;
    case google::GLOG_ERROR: return LogRecord::Severity::kError;
    default: return LogRecord::Severity::kFatal;
  }
}

void WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to say so
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Writes each line to stderr as JSON. glog calls send() on the thread that
// wrote the line, one line at a time.
class JsonSink final : public google::LogSink {
 public:
  using google::LogSink::send;
  void send(google::LogSeverity severity, const char* full_filename,
            const char* /*base_filename*/, int line,
            const google::LogMessageTime& time, const char* message,
            size_t message_len) override {
    LineState& state = ThisLine();
    std::string out = JsonLogLine(
        {.severity = SeverityOf(severity),
         .time = absl::FromUnixSeconds(time.timestamp()) +
                 absl::Microseconds(time.usec()),
         .file = full_filename,
         .line = line,
         .message = absl::string_view(message, message_len),
         .verbosity = state.verbosity,
         .fields = state.fields});
    out.push_back('\n');
    state.verbosity = 0;
    state.fields.clear();
    WriteAll(STDERR_FILENO, out);
  }
};

// "cycle/binder.cc" of "/src/scheduler/cycle/binder.cc": the file and
// its folder, as klog's caller names a Go file and its package.
absl::string_view ShortPath(absl::string_view file) {
  size_t last = file.rfind('/');
  if (last == absl::string_view::npos || last == 0) return file;
  size_t folder = file.rfind('/', last - 1);
  return folder == absl::string_view::npos ? file : file.substr(folder + 1);
}

}  // namespace

void InitLogging(const char* argv0, LogFormat format) {
  if (format == LogFormat::kText) {
    FLAGS_logtostderr = true;
    google::InitGoogleLogging(argv0);
    return;
  }
  // No text anywhere: neither on stderr nor in log files ("" turns a
  // severity's file off); the sink writes every line.
  FLAGS_logtostderr = false;
  FLAGS_alsologtostderr = false;
  FLAGS_stderrthreshold = google::NUM_SEVERITIES;
  google::InitGoogleLogging(argv0, &StartLine, nullptr);
  for (int s = 0; s < google::NUM_SEVERITIES; ++s) {
    google::SetLogDestination(s, "");
  }
  static JsonSink* const sink = new JsonSink;  // for the process's life
  google::AddLogSink(sink);
  json_format.store(true);
}

LogFields& LogFields::Pod(absl::string_view namespace_,
                          absl::string_view name) {
  if (!Json()) return *this;
  json_ += ",\"pod\":{\"name\":";
  AppendJsonQuoted(json_, name);
  json_ += ",\"namespace\":";
  AppendJsonQuoted(json_, namespace_);
  json_ += "}";
  return *this;
}

LogFields& LogFields::Node(absl::string_view name) {
  if (!Json()) return *this;
  json_ += ",\"node\":";
  AppendJsonQuoted(json_, name);
  return *this;
}

LogFields& LogFields::Err(const absl::Status& status) {
  if (!Json()) return *this;
  json_ += ",\"err\":";
  AppendJsonQuoted(json_, status.ToString());
  return *this;
}

std::ostream& operator<<(std::ostream& os, const LogFields& fields) {
  if (!fields.json().empty()) ThisLine().fields += fields.json();
  return os;
}

std::string JsonLogLine(const LogRecord& record) {
  const int64_t micros = absl::ToUnixMicros(record.time);
  std::string out =
      absl::StrCat("{\"ts\":", micros / 1000, ".",
                   absl::Dec(micros % 1000, absl::kZeroPad3), ",\"caller\":");
  AppendJsonQuoted(out, absl::StrCat(ShortPath(record.file), ":", record.line));
  out += ",\"msg\":";
  AppendJsonQuoted(out, record.message);
  if (record.severity == LogRecord::Severity::kInfo ||
      record.severity == LogRecord::Severity::kWarning) {
    absl::StrAppend(&out, ",\"v\":", record.verbosity);
  }
  absl::StrAppend(&out, record.fields, "}");
  return out;
}

namespace log_internal {

std::ostream& operator<<(std::ostream& os, Verbosity v) {
  if (Json()) ThisLine().verbosity = v.level;
  return os;
}

}  // namespace log_internal
}  // namespace ms
