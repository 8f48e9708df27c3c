// InitLogging(json) in a process of its own: every glog line on stderr is
// one JSON object, with the verbosity MS_VLOG gives it and the fields of
// its LogFields, and nothing else is written, on stderr or to log files.

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ms {
namespace {

// One parsed line: its keys and, for each, the raw JSON of its value.
std::map<std::string, std::string> ParseLine(const std::string& line) {
  std::map<std::string, std::string> out;
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(line);
  simdjson::ondemand::document doc;
  EXPECT_EQ(parser.iterate(padded).get(doc), simdjson::SUCCESS) << line;
  simdjson::ondemand::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not an object: " << line;
    return out;
  }
  for (auto field : object) {
    std::string_view key;
    EXPECT_EQ(field.unescaped_key().get(key), simdjson::SUCCESS) << line;
    simdjson::ondemand::value value = field.value();
    simdjson::ondemand::json_type type = simdjson::ondemand::json_type::null;
    EXPECT_EQ(value.type().get(type), simdjson::SUCCESS) << line;
    std::string_view raw;
    if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object inner;
      EXPECT_EQ(value.get_object().get(inner), simdjson::SUCCESS) << line;
      EXPECT_EQ(inner.raw_json().get(raw), simdjson::SUCCESS) << line;
    } else {
      raw = value.raw_json_token();
    }
    absl::string_view token(raw.data(), raw.size());
    out[std::string(key)] =
        std::string(absl::StripTrailingAsciiWhitespace(token));
  }
  return out;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

TEST(JsonLoggingTest, EveryLineIsOneObjectWithItsFields) {
  const std::string dir = ::testing::TempDir() + "/json-logging-" +
                          std::to_string(getpid());
  ASSERT_EQ(system(("mkdir -p " + dir + "/logs").c_str()), 0);
  const std::string captured = dir + "/stderr";

  // stderr into a file, for the time of the lines below.
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  const int fd = open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  dup2(fd, STDERR_FILENO);
  close(fd);

  FLAGS_log_dir = dir + "/logs";  // where glog would write log files
  FLAGS_v = 1;
  InitLogging("json_logging_test", LogFormat::kJson);
  const int first = __LINE__ + 1;
  LOG(INFO) << "plain \"quoted\"\nsecond line";
  MS_VLOG(1) << "ns/web-1 -> n1" << LogFields().Pod("ns", "web-1").Node("n1");
  MS_VLOG(2) << "above -v: not written";
  LOG(WARNING) << "warned" << LogFields().Err(absl::UnavailableError("down"));
  LOG(ERROR) << "failed \xff";
  // A line glog drops (below --minloglevel) leaves its fields and
  // verbosity to no other line.
  FLAGS_minloglevel = google::GLOG_WARNING;
  MS_VLOG(1) << "dropped" << LogFields().Node("stale");
  FLAGS_minloglevel = google::GLOG_INFO;
  LOG(INFO) << "after";

  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);

  std::ifstream in(captured);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines =
      absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << text.str();
  std::vector<std::map<std::string, std::string>> parsed;
  for (const std::string& line : lines) parsed.push_back(ParseLine(line));

  auto caller = [](int line) {
    return absl::StrCat("\"common/json_logging_test.cc:", line, "\"");
  };
  using Fields = std::map<std::string, std::string>;
  auto without_ts = [](Fields f) {
    EXPECT_EQ(f.count("ts"), 1u);
    f.erase("ts");
    return f;
  };
  EXPECT_EQ(without_ts(parsed[0]),
            (Fields{{"caller", caller(first)},
                    {"msg", R"("plain \"quoted\"\nsecond line")"},
                    {"v", "0"}}));
  EXPECT_EQ(without_ts(parsed[1]),
            (Fields{{"caller", caller(first + 1)},
                    {"msg", R"("ns/web-1 -> n1")"},
                    {"v", "1"},
                    {"pod", R"({"name":"web-1","namespace":"ns"})"},
                    {"node", R"("n1")"}}));
  EXPECT_EQ(without_ts(parsed[2]),
            (Fields{{"caller", caller(first + 3)},
                    {"msg", R"("warned")"},
                    {"v", "0"},
                    {"err", R"("UNAVAILABLE: down")"}}));
  EXPECT_EQ(without_ts(parsed[3]), (Fields{{"caller", caller(first + 4)},
                                           {"msg", R"("failed \ufffd")"}}));
  EXPECT_EQ(without_ts(parsed[4]), (Fields{{"caller", caller(first + 10)},
                                           {"msg", R"("after")"},
                                           {"v", "0"}}));
  // ts: milliseconds since the epoch, now.
  double ts = 0;
  ASSERT_TRUE(absl::SimpleAtod(parsed[0]["ts"], &ts)) << parsed[0]["ts"];
  EXPECT_NEAR(ts / 1000, absl::ToUnixSeconds(absl::Now()), 600);
  // No log files.
  EXPECT_EQ(Files(dir + "/logs"), std::vector<std::string>{});
}

}  // namespace
}  // namespace ms
