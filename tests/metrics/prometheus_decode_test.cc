#include "metrics/prometheus_decode.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Got {
  std::string label;  // "<none>" when absent
  double value;
  int64_t time_ms;
  std::string labels_text;
};

absl::StatusOr<PromQueryInfo> Decode(long status, const std::string& body,
                                     std::vector<Got>* got) {
  PromDecodeOptions options{.metric_name = "cpu",
                            .join_label = "node",
                            .labels_text = true};
  return DecodeInstantQuery(status, body, options, [&](const PromSeries& s) {
    got->push_back({s.has_label ? std::string(s.label_value) : "<none>",
                    s.sample.value, s.sample.time_ms,
                    std::string(s.labels_text)});
  });
}

TEST(DecodeInstantQueryTest, VectorWithSpecialValuesAndWarnings) {
  const std::string body = R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"cpu","node":"n1"},"value":[1700000000.123,"0.12"]},
    {"metric":{"node":"n2","job":"x"},"value":[1700000000,"NaN"]},
    {"metric":{"node":"n3"},"value":[1700000000,"+Inf"]},
    {"metric":{"node":"n4"},"value":[1700000000,"-Inf"]},
    {"metric":{"node":"n\"5"},"value":[1700000000,"1e+06"]},
    {"metric":{"instance":"a:1"},"value":[1700000000,"-2"]}]},
    "warnings":["PromQL info: metric might not be a counter"]})";
  std::vector<Got> got;
  absl::StatusOr<PromQueryInfo> info = Decode(200, body, &got);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->series, 6);
  EXPECT_THAT(info->warnings,
              ElementsAre("PromQL info: metric might not be a counter"));
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].label, "n1");
  EXPECT_EQ(got[0].value, 0.12);
  EXPECT_EQ(got[0].time_ms, 1700000000123);
  EXPECT_EQ(got[0].labels_text, R"({__name__="cpu", node="n1"})");
  EXPECT_EQ(got[1].label, "n2");
  EXPECT_TRUE(std::isnan(got[1].value));
  EXPECT_EQ(got[2].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(got[3].value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(got[4].label, "n\"5");
  EXPECT_EQ(got[4].value, 1e6);
  EXPECT_EQ(got[5].label, "<none>");
  EXPECT_EQ(got[5].labels_text, R"({instance="a:1"})");
}

// Join detection's path: each candidate label's value, in the order asked,
// "" where a series lacks it (escapes undone); without candidates, none.
TEST(DecodeInstantQueryTest, CandidateLabelsInTheOrderAsked) {
  const std::string body =
      R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"instance":"10.0.0.7:9100","host":"h\"1","job":"x"},"value":[1700000000,"1"]},
    {"metric":{"job":"x"},"value":[1700000000,"2"]}]}})";
  const std::vector<absl::string_view> labels = {"host", "nodename",
                                                 "instance"};
  std::vector<std::vector<std::string>> got;
  PromDecodeOptions options{.metric_name = "cpu", .candidate_labels = labels};
  absl::StatusOr<PromQueryInfo> info =
      DecodeInstantQuery(200, body, options, [&](const PromSeries& s) {
        EXPECT_FALSE(s.has_label);  // no join_label asked for
        got.emplace_back(s.candidate_values.begin(), s.candidate_values.end());
      });
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(got, ElementsAre(ElementsAre("h\"1", "", "10.0.0.7:9100"),
                               ElementsAre("", "", "")));

  options = {.metric_name = "cpu", .join_label = "instance"};
  info = DecodeInstantQuery(200, body, options, [&](const PromSeries& s) {
    EXPECT_TRUE(s.candidate_values.empty());
  });
  ASSERT_TRUE(info.ok()) << info.status();
}

TEST(DecodeInstantQueryTest, EmptyVector) {
  std::vector<Got> got;
  absl::StatusOr<PromQueryInfo> info = Decode(
      200, R"({"status":"success","data":{"resultType":"vector","result":[]}})",
      &got);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->series, 0);
  EXPECT_TRUE(got.empty());
}

struct ErrorCase {
  std::string name;
  long http_status;
  std::string body;
  absl::StatusCode code;
  std::string message_part;
};

TEST(DecodeInstantQueryTest, Errors) {
  const std::vector<ErrorCase> cases = {
      {"scalar", 200,
       R"({"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}})",
       absl::StatusCode::kInvalidArgument,
       "metric cpu: the query returned a scalar result"},
      {"string", 200,
       R"({"status":"success","data":{"resultType":"string","result":[1700000000,"x"]}})",
       absl::StatusCode::kInvalidArgument, "returned a string result"},
      {"matrix", 200,
       R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}})",
       absl::StatusCode::kInvalidArgument, "returned a matrix result"},
      {"matrix without resultType first", 200,
       R"({"status":"success","data":{"result":[{"metric":{},"values":[[1,"1"]]}]}})",
       absl::StatusCode::kInvalidArgument, "matrix (range vector)"},
      {"bad_data", 400,
       R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \")\""})",
       absl::StatusCode::kInvalidArgument,
       "metric cpu: query failed (HTTP 400, bad_data): 1:5: parse error: "
       "unexpected \")\""},
      {"execution", 422,
       R"({"status":"error","errorType":"execution","error":"many-to-many matching not allowed"})",
       absl::StatusCode::kInvalidArgument, "many-to-many"},
      {"timeout", 503,
       R"({"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"})",
       absl::StatusCode::kDeadlineExceeded, "timed out"},
      {"unavailable", 503,
       R"({"status":"error","errorType":"unavailable","error":"too many queries"})",
       absl::StatusCode::kUnavailable, "too many queries"},
      {"401 from a proxy", 401, "Unauthorized\n",
       absl::StatusCode::kPermissionDenied, "HTTP 401"},
      {"403 json", 403, R"({"message":"forbidden"})",
       absl::StatusCode::kPermissionDenied, "forbidden"},
      {"502 html", 502, "<html>bad gateway</html>",
       absl::StatusCode::kUnavailable, "bad gateway"},
      {"404", 404, "404 page not found", absl::StatusCode::kFailedPrecondition,
       "404 page not found"},
      {"not json", 200, "<html>login</html>", absl::StatusCode::kUnavailable,
       "malformed response"},
      {"truncated", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]})",
       absl::StatusCode::kUnavailable, "malformed response"},
      {"bad value", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"abc"]}]}})",
       absl::StatusCode::kUnavailable, "malformed sample value \"abc\""},
      {"no data", 200, R"({"status":"success"})",
       absl::StatusCode::kUnavailable, "not a Prometheus query result"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Got> got;
    absl::StatusOr<PromQueryInfo> info = Decode(c.http_status, c.body, &got);
    EXPECT_EQ(info.status().code(), c.code) << info.status();
    EXPECT_THAT(std::string(info.status().message()), HasSubstr(c.message_part));
  }
}

TEST(ParsePromValueTest, Table) {
  EXPECT_EQ(ParsePromValue("0.5"), 0.5);
  EXPECT_EQ(ParsePromValue("-3"), -3);
  EXPECT_EQ(ParsePromValue("1e+06"), 1e6);
  EXPECT_EQ(ParsePromValue("+Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParsePromValue("-Inf"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*ParsePromValue("NaN")));
  EXPECT_EQ(ParsePromValue(""), std::nullopt);
  EXPECT_EQ(ParsePromValue("x"), std::nullopt);
}

}  // namespace
}  // namespace ms::metrics
