#include "common/logging.h"

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

constexpr int64_t kMicros = 1700000000123456;  // 2023-11-14T22:13:20.123456Z

TEST(JsonLogLineTest, InfoLine) {
  EXPECT_EQ(
      JsonLogLine({.severity = LogRecord::Severity::kInfo,
                   .time = absl::FromUnixMicros(kMicros),
                   .file = "/src/metrics-scheduler/scheduler/cycle/binder.cc",
                   .line = 301,
                   .message = "ns/web-1: bound to n1",
                   .verbosity = 2,
                   .fields = R"(,"pod":{"name":"web-1","namespace":"ns"})"}),
      R"({"ts":1700000000123.456,"caller":"cycle/binder.cc:301",)"
      R"("msg":"ns/web-1: bound to n1","v":2,)"
      R"("pod":{"name":"web-1","namespace":"ns"}})");
}

// klog has no place for a warning: an info line at verbosity 0. An error
// line has no "v".
TEST(JsonLogLineTest, WarningAndErrorLines) {
  LogRecord record{.time = absl::FromUnixMicros(kMicros),
                   .file = "main.cc",
                   .line = 7,
                   .message = "m"};
  record.severity = LogRecord::Severity::kWarning;
  EXPECT_EQ(JsonLogLine(record),
            R"({"ts":1700000000123.456,"caller":"main.cc:7","msg":"m","v":0})");
  record.severity = LogRecord::Severity::kError;
  EXPECT_EQ(JsonLogLine(record),
            R"({"ts":1700000000123.456,"caller":"main.cc:7","msg":"m"})");
  record.severity = LogRecord::Severity::kFatal;
  EXPECT_EQ(JsonLogLine(record),
            R"({"ts":1700000000123.456,"caller":"main.cc:7","msg":"m"})");
}

TEST(JsonLogLineTest, MessageIsEscaped) {
  EXPECT_EQ(JsonLogLine({.time = absl::FromUnixMicros(1700000000000001),
                         .file = "a/b.cc",
                         .line = 1,
                         .message = "say \"hi\"\nnext\x01 \xff"}),
            R"({"ts":1700000000000.001,"caller":"a/b.cc:1",)"
            R"("msg":"say \"hi\"\nnext\u0001 \ufffd","v":0})");
}

// Without InitLogging(json), fields cost nothing and print nothing: the
// text format is glog's, unchanged.
TEST(LogFieldsTest, EmptyUnlessTheFormatIsJson) {
  LogFields fields;
  fields.Pod("ns", "p").Node("n1").Err(absl::UnavailableError("down"));
  EXPECT_EQ(fields.json(), "");
}

}  // namespace
}  // namespace ms
