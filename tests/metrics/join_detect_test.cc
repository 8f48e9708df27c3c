// JoinDetector (metrics/join_detect.h): each candidate wins on series shaped
// for it, the most nodes named wins, ties go to the earlier candidate, and
// when nothing names a node every series is unmatched. Series are decoded
// from JSON, as PrometheusSource hands them over.
#include "metrics/join_detect.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/prometheus_decode.h"
#include "tests/metrics/source_test_util.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;

NodeSet Nodes() {
  return NodeSet({
      {"n1", {"10.0.0.1"}},
      {"n2", {"10.0.0.2"}},
      {"n3", {"10.0.0.3"}},
      {"worker-4.example.com", {"10.0.0.4"}},
  });
}

// A vector answer, one series per label set (JSON objects' insides), each
// with the value of its position: 0, 1, ...
std::string Answer(const std::vector<std::string>& series) {
  std::vector<std::string> items;
  for (size_t i = 0; i < series.size(); ++i) {
    items.push_back(absl::StrCat(R"({"metric":{)", series[i],
                                 R"(},"value":[1700000000,")", i, R"("]})"));
  }
  return absl::StrCat(
      R"({"status":"success","data":{"resultType":"vector","result":[)",
      absl::StrJoin(items, ","), "]}}");
}

// The answer's series joined by the detected join.
FetchResult Detect(const std::vector<std::string>& series,
                   const NodeSet& nodes) {
  absl::StatusOr<JoinDetector> detector = JoinDetector::Create(nodes);
  EXPECT_TRUE(detector.ok()) << detector.status();
  if (!detector.ok()) return {};
  PromDecodeOptions options{.metric_name = "cpu",
                            .labels_text = true,
                            .candidate_labels = JoinCandidateLabels()};
  absl::StatusOr<PromQueryInfo> info =
      DecodeInstantQuery(200, Answer(series), options,
                         [&](const PromSeries& s) { detector->Add(s); });
  EXPECT_TRUE(info.ok()) << info.status();
  return std::move(*detector).Finish();
}

struct Case {
  std::string name;
  std::vector<std::string> series;
  std::string want_join;               // "" = none named a node
  std::map<std::string, double> want;  // node -> value
  int want_unmatched = 0;
  int want_duplicates = 0;
};

TEST(JoinDetectorTest, PicksTheCandidateNamingTheMostNodes) {
  const std::vector<Case> cases = {
      {"node label",
       {R"("node":"n1","instance":"10.9.9.1:9100")",
        R"("node":"n2","instance":"10.9.9.2:9100")"},
       "node (name)",
       {{"n1", 0}, {"n2", 1}}},
      // node-exporter: host:port of the node's IP; `node` names one node
      // (2 > 1), the series without one is unmatched under instance too.
      {"instance by address",
       {R"("instance":"10.0.0.1:9100","node":"n1")",
        R"("instance":"10.0.0.2:9100","node":"x")",
        R"("instance":"10.0.0.3:9100")", R"("job":"other")"},
       "instance (address)",
       {{"n1", 0}, {"n2", 1}, {"n3", 2}},
       1},
      // kube-prometheus relabels instance to the node name: the address
      // join falls back to names.
      {"instance by name",
       {R"("instance":"n1")", R"("instance":"n3")"},
       "instance (address)",
       {{"n1", 0}, {"n3", 1}}},
      {"kubernetes_node",
       {R"("kubernetes_node":"n2","host":"n9")"},
       "kubernetes_node (name)",
       {{"n2", 0}}},
      {"nodename",
       {R"("nodename":"n1")", R"("nodename":"n2")"},
       "nodename (name)",
       {{"n1", 0}, {"n2", 1}}},
      {"hostname",
       {R"("hostname":"n3","instance":"n9:9100")"},
       "hostname (name)",
       {{"n3", 0}}},
      {"host",
       {R"("host":"worker-4.example.com")"},
       "host (name)",
       {{"worker-4.example.com", 0}}},
      // Distinct nodes count, not series: `node` names n1 three times,
      // hostname two nodes; the third series is a duplicate of n1.
      {"distinct nodes",
       {R"("node":"n1","hostname":"n1")", R"("node":"n1","hostname":"n2")",
        R"("node":"n1","hostname":"n1")"},
       "hostname (name)",
       {{"n1", 0}, {"n2", 1}},
       0,
       1},
      // Ties go to the earlier candidate: node and hostname both name two.
      {"tie node first",
       {R"("node":"n1","hostname":"n2")", R"("node":"n2","hostname":"n3")"},
       "node (name)",
       {{"n1", 0}, {"n2", 1}}},
      {"tie instance before host",
       {R"("instance":"10.0.0.1:9100")", R"("host":"n2")"},
       "instance (address)",
       {{"n1", 0}},
       1},
      // As a configured join (no short names): "worker-4" is no node.
      {"no short names",
       {R"("hostname":"worker-4")", R"("nodename":"n1")"},
       "nodename (name)",
       {{"n1", 1}},
       1},
  };
  const NodeSet nodes = Nodes();
  for (const Case& c : cases) {
    FetchResult r = Detect(c.series, nodes);
    EXPECT_EQ(r.detected_join, c.want_join) << c.name;
    EXPECT_EQ(ValuesOf(r), c.want) << c.name;
    EXPECT_EQ(r.unmatched, c.want_unmatched) << c.name;
    EXPECT_EQ(r.duplicates, c.want_duplicates) << c.name;
  }
}

TEST(JoinDetectorTest, UnmatchedExamplesAreTheWinnersMisses) {
  FetchResult r = Detect({R"("instance":"10.0.0.1:9100","node":"n1")",
                          R"("instance":"10.0.0.2:9100")",
                          R"("instance":"10.9.9.9:9100","node":"n9")"},
                         Nodes());
  EXPECT_EQ(r.detected_join, "instance (address)");
  EXPECT_EQ(r.unmatched, 1);
  EXPECT_THAT(r.unmatched_examples,
              ElementsAre(R"({instance="10.9.9.9:9100", node="n9"})"));
}

TEST(JoinDetectorTest, NothingMatchesEverySeriesUnmatched) {
  FetchResult r = Detect({R"("instance":"10.9.9.1:9100","job":"x")",
                          R"("instance":"10.9.9.2:9100","job":"x")",
                          R"("pod":"web-1")", R"("pod":"web-2")"},
                         Nodes());
  EXPECT_EQ(r.detected_join, "");
  EXPECT_TRUE(r.by_node.empty());
  EXPECT_EQ(r.unmatched, 4);
  EXPECT_THAT(r.unmatched_examples,
              ElementsAre(R"({instance="10.9.9.1:9100", job="x"})",
                          R"({instance="10.9.9.2:9100", job="x"})",
                          R"({pod="web-1"})"));
  EXPECT_EQ(DescribeDetectedJoin(r.detected_join),
            "no series names a node by any candidate join (tried node "
            "(name), instance (address), kubernetes_node (name), nodename "
            "(name), hostname (name), host (name))");
}

TEST(JoinDetectorTest, EmptyAnswerDetectsNothing) {
  FetchResult r = Detect({}, Nodes());
  EXPECT_EQ(r.detected_join, "");
  EXPECT_EQ(r.unmatched, 0);
  EXPECT_TRUE(r.unmatched_examples.empty());
}

TEST(JoinDetectorTest, Describes) {
  EXPECT_EQ(DescribeJoin("instance", JoinMatch::kAddress),
            "instance (address)");
  EXPECT_EQ(DescribeDetectedJoin("node (name)"),
            "series name nodes by node (name)");
  EXPECT_THAT(JoinCandidateLabels(),
              ElementsAre("node", "instance", "kubernetes_node", "nodename",
                          "hostname", "host"));
}

}  // namespace
}  // namespace ms::metrics
