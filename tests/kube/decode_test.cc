#include "kube/decode.h"

#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"

namespace ms::kube {
namespace {

using ::ms::testing::ReadFileOrDie;
using ::ms::testing::TestDataPath;

// The hand-written reading of the apiserver's form agrees with absl's
// general RFC 3339 parser, which reads every other form.
TEST(ParseTimestampTest, AgreesWithAGeneralParser) {
  auto general = [](const std::string& text) {
    absl::Time t;
    std::string err;
    EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, text, &t, &err)) << text;
    return absl::ToUnixMillis(t);
  };
  std::vector<std::string> texts = {
      "1970-01-01T00:00:00Z",        "2000-02-29T23:59:59Z",
      "2024-12-31T12:00:00Z",        "2100-03-01T00:00:00Z",
      "1969-12-31T23:59:59.999Z",    "2026-11-21T22:10:00.123456Z",
      "2026-11-21T22:10:00.1Z",      "2026-11-21T22:10:00.123456789Z",
      "2026-11-21T22:10:00+02:00",   "2026-11-21t22:10:00z",
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    int64_t seconds = std::uniform_int_distribution<int64_t>(
        -2208988800, 7258118400)(rng);  // 1900 to 2200
    texts.push_back(absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ",
                                     absl::FromUnixSeconds(seconds) +
                                         absl::Microseconds(i * 977 % 1000000),
                                     absl::UTCTimeZone()));
  }
  for (const std::string& text : texts) {
    absl::StatusOr<int64_t> ms = ParseTimestampMs(text);
    ASSERT_TRUE(ms.ok()) << text << ": " << ms.status();
    EXPECT_EQ(*ms, general(text)) << text;
  }
  for (const char* bad : {"", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-11-21T24:00:00Z", "2026-11-21 22:10:00Z",
                          "2026-11-21T22:10:0xZ", "yesterday"}) {
    EXPECT_EQ(ParseTimestampMs(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// tests/testdata/kube/pod_full.json was recorded from the testenv's
// kube-apiserver (`kubectl get pod -o json`) for the manifest
// tests/testdata/kube/pod_full.yaml.
TEST(DecodePodTest, RecordedPodWithEveryField) {
  absl::StatusOr<Pod> pod =
      DecodePod(ReadFileOrDie(TestDataPath("kube/pod_full.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "full");
  EXPECT_EQ(pod->namespace_, "decode");
  EXPECT_FALSE(pod->uid.empty());
  EXPECT_FALSE(pod->resource_version.empty());
  EXPECT_EQ(pod->labels.at("app"), "web");
  EXPECT_EQ(pod->scheduler_name, "metrics-scheduler");
  EXPECT_EQ(pod->node_name, "");
  EXPECT_FALSE(pod->deleting);
  EXPECT_EQ(pod->phase, PodPhase::kPending);
  EXPECT_EQ(pod->priority, 1000);
  EXPECT_GT(pod->creation_time_ms, 1700000000000);
  EXPECT_EQ(pod->node_selector.at("disk"), "ssd");

  ASSERT_TRUE(pod->required_node_affinity.has_value());
  ASSERT_EQ(pod->required_node_affinity->size(), 2u);
  const NodeSelectorTerm& t0 = (*pod->required_node_affinity)[0];
  ASSERT_EQ(t0.match_expressions.size(), 2u);
  EXPECT_EQ(t0.match_expressions[0].key, "zone");
  EXPECT_EQ(t0.match_expressions[0].op, SelectorOperator::kIn);
  EXPECT_EQ(t0.match_expressions[0].values,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t0.match_expressions[1].op, SelectorOperator::kGt);
  const NodeSelectorTerm& t1 = (*pod->required_node_affinity)[1];
  ASSERT_EQ(t1.match_fields.size(), 1u);
  EXPECT_EQ(t1.match_fields[0].key, "metadata.name");
  EXPECT_EQ(t1.match_fields[0].values, (std::vector<std::string>{"node-1"}));

  // The apiserver adds the two default NoExecute tolerations after ours.
  ASSERT_GE(pod->tolerations.size(), 2u);
  EXPECT_EQ(pod->tolerations[0].key, "dedicated");
  EXPECT_EQ(pod->tolerations[0].op, TolerationOperator::kEqual);
  EXPECT_EQ(pod->tolerations[0].value, "web");
  EXPECT_EQ(pod->tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(pod->tolerations[1].op, TolerationOperator::kExists);
  EXPECT_FALSE(pod->tolerations[1].effect.has_value());

  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_EQ(pod->containers[0].requests.milli_cpu, 250);
  EXPECT_EQ(pod->containers[0].requests.memory, 64LL * 1024 * 1024);
  EXPECT_EQ(pod->containers[0].requests.ephemeral_storage, 1000000000);
  EXPECT_EQ(pod->containers[0].requests.Scalar("example.com/gpu"), 1);
  ASSERT_EQ(pod->containers[0].ports.size(), 2u);
  EXPECT_EQ(pod->containers[0].ports[0].host_port, 8080);
  EXPECT_EQ(pod->containers[0].ports[1].host_port, 0);
  // Requests default to limits when only limits are given.
  EXPECT_EQ(pod->containers[1].requests.milli_cpu, 500);

  ASSERT_EQ(pod->init_containers.size(), 2u);
  EXPECT_FALSE(pod->init_containers[0].restart_always);
  EXPECT_TRUE(pod->init_containers[1].restart_always);

  EXPECT_TRUE(pod->has_pod_anti_affinity);
  EXPECT_FALSE(pod->has_pod_affinity);  // only preferred terms
  EXPECT_TRUE(pod->has_topology_spread);
  EXPECT_TRUE(pod->has_claim_volumes);
}

TEST(DecodePodTest, OverheadAndDeletion) {
  absl::StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"p",
    "namespace":"n","deletionTimestamp":"2024-01-01T00:00:00Z"},
    "spec":{"overhead":{"cpu":"250m","memory":"120Mi"},"containers":[]},
    "status":{"phase":"Succeeded"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(pod->deleting);
  EXPECT_EQ(pod->overhead.milli_cpu, 250);
  EXPECT_EQ(pod->overhead.memory, 120LL * 1024 * 1024);
  EXPECT_EQ(pod->phase, PodPhase::kSucceeded);
  EXPECT_EQ(pod->Key(), "n/p");
}

TEST(DecodePodTest, BadInputIsInvalidArgument) {
  for (const char* bad : {
           "", "{", "[]", R"({"metadata":{"name":3}})",
           R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1x"}}}]}})",
           R"({"spec":{"tolerations":[{"operator":"Maybe"}]}})",
       }) {
    absl::StatusOr<Pod> pod = DecodePod(bad);
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(DecodePod(R"({"spec":{"containers":[{"resources":{"requests":)"
                      R"({"cpu":"1x"}}}]}})")
                .status()
                .message(),
            "decoding Pod: resource cpu: invalid quantity \"1x\": unknown "
            "suffix");
}

// tests/testdata/kube/node.json: a testenv Node after its status was set.
TEST(DecodeNodeTest, RecordedNode) {
  absl::StatusOr<Node> node =
      DecodeNode(ReadFileOrDie(TestDataPath("kube/node.json")));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->name, "decode-node");
  EXPECT_TRUE(node->ready);
  EXPECT_TRUE(node->unschedulable);
  EXPECT_EQ(node->labels.at("disk"), "ssd");
  ASSERT_EQ(node->taints.size(), 2u);
  EXPECT_EQ(node->taints[0],
            (Taint{"dedicated", "web", TaintEffect::kNoSchedule}));
  EXPECT_EQ(node->taints[1].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(node->allocatable.milli_cpu, 4000);
  EXPECT_EQ(node->allocatable.memory, 16LL * 1024 * 1024 * 1024);
  EXPECT_EQ(node->allocatable.pods, 110);
  EXPECT_EQ(node->allocatable.Scalar("example.com/gpu"), 2);
  ASSERT_EQ(node->addresses.size(), 2u);
  EXPECT_EQ(node->addresses[0], (NodeAddress{"InternalIP", "10.0.0.7"}));
}

TEST(DecodeListTest, RecordedPodListPage) {
  absl::StatusOr<ObjectList<Pod>> list =
      DecodePodList(ReadFileOrDie(TestDataPath("kube/pod_list_page.json")));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_FALSE(list->continue_token.empty());  // recorded with limit=2
}

TEST(DecodeWatchTest, EventTypes) {
  absl::StatusOr<WatchEvent<Node>> added = DecodeNodeWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"n1","resourceVersion":"12"}}})");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  EXPECT_EQ(added->object.name, "n1");
  EXPECT_EQ(added->resource_version, "12");

  absl::StatusOr<WatchEvent<Pod>> bookmark = DecodePodWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}})");
  ASSERT_TRUE(bookmark.ok()) << bookmark.status();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "99");

  absl::StatusOr<WatchEvent<Pod>> gone = DecodePodWatchEvent(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (500)","reason":"Expired","code":410}})json");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(gone->error.message(),
            "HTTP 410 Expired: too old resource version: 1 (500)");

  // Object before type: still decoded.
  absl::StatusOr<WatchEvent<Node>> reordered = DecodeNodeWatchEvent(
      R"({"object":{"metadata":{"name":"n2"}},"type":"DELETED"})");
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  EXPECT_EQ(reordered->type, WatchEventType::kDeleted);
  EXPECT_EQ(reordered->object.name, "n2");

  EXPECT_EQ(DecodeNodeWatchEvent(R"({"type":"EXPLODED","object":{}})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeNodeWatchEvent(R"({"type":"ADDED"})").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DecodeErrorStatusTest, MapsEachHttpStatus) {
  struct Case {
    long http;  // NOLINT(runtime/int)
    const char* reason;
    absl::StatusCode code;
  };
  for (const Case& c : {
           Case{400, "BadRequest", absl::StatusCode::kInvalidArgument},
           Case{401, "Unauthorized", absl::StatusCode::kUnauthenticated},
           Case{403, "Forbidden", absl::StatusCode::kPermissionDenied},
           Case{404, "NotFound", absl::StatusCode::kNotFound},
           Case{409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
           Case{409, "Conflict", absl::StatusCode::kAborted},
           Case{410, "Expired", absl::StatusCode::kOutOfRange},
           Case{422, "Invalid", absl::StatusCode::kInvalidArgument},
           Case{429, "TooManyRequests", absl::StatusCode::kResourceExhausted},
           Case{500, "InternalError", absl::StatusCode::kUnavailable},
           Case{503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
           Case{504, "Timeout", absl::StatusCode::kDeadlineExceeded},
       }) {
    std::string body = std::string(R"({"kind":"Status","reason":")") +
                       c.reason + R"(","message":"m","code":)" +
                       std::to_string(c.http) + "}";
    absl::Status s = DecodeErrorStatus(c.http, body);
    EXPECT_EQ(s.code(), c.code) << c.http << " " << c.reason;
    EXPECT_EQ(s.message(),
              "HTTP " + std::to_string(c.http) + " " + c.reason + ": m");
  }
  // A body that is not a Status keeps its text.
  absl::Status s = DecodeErrorStatus(502, "bad gateway");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "HTTP 502: bad gateway");
}

}  // namespace
}  // namespace ms::kube
