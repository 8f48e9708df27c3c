#include "bench/quality/cluster_objects.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ms::quality {
namespace {

// Whether `json` parses.
bool Parses(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(json).get(doc) == simdjson::SUCCESS;
}

TEST(ClusterObjectsTest, NamesAndAddresses) {
  EXPECT_EQ(PoolName("heterogeneous", "ours"), "heterogeneous-ours");
  EXPECT_EQ(NodeName("p", {.name = "fast-1"}), "p-fast-1");
  EXPECT_EQ(PodName("p", {.name = "p-0001"}), "p-p-0001");
  EXPECT_EQ(OwnerName("p", "heavy-1"), "p-heavy-1");
  EXPECT_EQ(NodeAddress(0), "10.200.0.1");
  EXPECT_EQ(NodeAddress(251), "10.200.1.2");
}

TEST(ClusterObjectsTest, ObjectsSayTheirPoolAndSizes) {
  std::string node = NodeJson("p-a", "p");
  EXPECT_TRUE(Parses(node)) << node;
  EXPECT_TRUE(
      absl::StrContains(node, R"("quality.metrics-scheduler.io/pool":"p")"));
  std::string status =
      NodeStatusPatch({.cores = 8, .memory_gib = 32}, "p-a", "10.200.0.1");
  EXPECT_TRUE(Parses(status)) << status;
  EXPECT_TRUE(absl::StrContains(status, R"("cpu":"8000m","memory":"32768Mi")"));
  EXPECT_TRUE(absl::StrContains(status, R"("address":"10.200.0.1")"));
  std::string pod =
      PodJson("p-p-1", "p", "metrics-scheduler",
              {.cpu_request = 0.5, .memory_request_gib = 0.25}, std::nullopt);
  EXPECT_TRUE(Parses(pod)) << pod;
  EXPECT_TRUE(absl::StrContains(pod, R"("schedulerName":"metrics-scheduler")"));
  EXPECT_TRUE(absl::StrContains(
      pod, R"("nodeSelector":{"quality.metrics-scheduler.io/pool":"p"})"));
  EXPECT_TRUE(absl::StrContains(pod, R"("cpu":"500m","memory":"256Mi")"));
  EXPECT_TRUE(absl::StrContains(pod, R"("containers":[{"name":"app",)"));
  EXPECT_FALSE(absl::StrContains(pod, "ownerReferences"));
}

TEST(ClusterObjectsTest, APodWithAnOwnerNamesItsConfigMapAsItsController) {
  std::string owner = OwnerJson("p-heavy-1", "p");
  EXPECT_TRUE(Parses(owner)) << owner;
  EXPECT_TRUE(absl::StrContains(
      owner, R"("kind":"ConfigMap","metadata":{"name":"p-heavy-1",)"));
  EXPECT_EQ(
      ObjectUid(R"({"kind":"ConfigMap","metadata":{"name":"a","uid":"u-1"}})")
          .value(),
      "u-1");
  EXPECT_EQ(ObjectUid(R"({"kind":"Status","metadata":{}})").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ObjectUid("not json").status().code(),
            absl::StatusCode::kInvalidArgument);

  std::string pod = PodJson("p-p-1", "p", "metrics-scheduler", {},
                            OwnerRef{.name = "p-heavy-1", .uid = "u-1"});
  EXPECT_TRUE(Parses(pod)) << pod;
  EXPECT_TRUE(absl::StrContains(
      pod, R"("ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap",)"
           R"("name":"p-heavy-1","uid":"u-1","controller":true}])"))
      << pod;
}

TEST(ClusterObjectsTest, APodRunningPatchSaysWhenItStartedInWholeUtcSeconds) {
  struct Case {
    absl::Time start;
    std::string start_time;  // status.startTime as written
  };
  const absl::Time t = absl::FromCivil(absl::CivilSecond(2026, 11, 28, 7, 1, 2),
                                       absl::UTCTimeZone());
  const Case cases[] = {
      {t, "2026-11-28T07:01:02Z"},
      // Truncated as metav1.Time is, never rounded up: 02.999 is 02, and
      // the last millisecond of a year stays in it.
      {t + absl::Milliseconds(999), "2026-11-28T07:01:02Z"},
      {absl::FromCivil(absl::CivilSecond(2027, 1, 1), absl::UTCTimeZone()) -
           absl::Milliseconds(1),
       "2026-12-31T23:59:59Z"},
      // UTC whatever the zone the instant was made in: 08:01:02 at +01:00.
      {absl::FromCivil(absl::CivilSecond(2026, 11, 28, 8, 1, 2),
                       absl::FixedTimeZone(3600)),
       "2026-11-28T07:01:02Z"},
      {absl::UnixEpoch(), "1970-01-01T00:00:00Z"},
  };
  for (const Case& c : cases) {
    const std::string patch = PodRunningPatch(c.start);
    EXPECT_TRUE(Parses(patch)) << patch;
    EXPECT_EQ(patch,
              absl::StrCat(
                  R"({"status":{"phase":"Running","startTime":")", c.start_time,
                  R"(","conditions":[{"type":"PodScheduled",)",
                  R"("status":"True"},{"type":"Ready","status":"True"}]}})"));
  }
}

}  // namespace
}  // namespace ms::quality
