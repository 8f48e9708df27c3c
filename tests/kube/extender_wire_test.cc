// The extender protocol's JSON, as kube-scheduler's Go encoding writes and
// reads it (k8s.io/kube-scheduler extender/v1).
#include "kube/extender_wire.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ms::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ExtenderWireTest, DecodesNodeNamesAndThePod) {
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(
      R"({"Pod":{"metadata":{"name":"web-1","namespace":"shop",)"
      R"("labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}],)"
      R"("priority":1000}},)"
      R"("Nodes":null,"NodeNames":["n1","n2","n3"]})");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->pod_namespace, "shop");
  EXPECT_EQ(args->pod_name, "web-1");
  // What a metric filter's scopes select pods by.
  EXPECT_EQ(args->pod_labels, (std::map<std::string, std::string>{{"a", "b"}}));
  EXPECT_EQ(args->pod_priority, 1000);
  EXPECT_THAT(args->node_names, ElementsAre("n1", "n2", "n3"));
  EXPECT_FALSE(args->with_nodes);
}

// Go reads field names ignoring case; older kube-schedulers wrote them in
// lower case.
TEST(ExtenderWireTest, FieldNamesIgnoreCase) {
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(
      R"({"pod":{"metadata":{"name":"p"}},"nodenames":["a"]})");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->pod_name, "p");
  EXPECT_THAT(args->pod_labels, IsEmpty());
  EXPECT_EQ(args->pod_priority, 0);
  EXPECT_THAT(args->node_names, ElementsAre("a"));
}

TEST(ExtenderWireTest, NullLabelsAndPriorityAreNone) {
  absl::StatusOr<ExtenderArgs> args =
      DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p","labels":null},)"
                         R"("spec":{"priority":null}},"NodeNames":["a"]})");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(args->pod_labels, IsEmpty());
  EXPECT_EQ(args->pod_priority, 0);
}

TEST(ExtenderWireTest, WholeNodesAreRecognised) {
  absl::StatusOr<ExtenderArgs> args = DecodeExtenderArgs(
      R"({"Pod":{},"Nodes":{"metadata":{},"items":[)"
      R"({"metadata":{"name":"n1","labels":{}},"status":{}},)"
      R"({"metadata":{"name":"n2"}}]},"NodeNames":null})");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE(args->with_nodes);
  EXPECT_THAT(args->node_names, ElementsAre("n1", "n2"));
}

TEST(ExtenderWireTest, MalformedIsInvalidArgument) {
  for (const char* body : {"", "[", "[]", R"({"NodeNames":[1]})",
                           R"({"NodeNames":{"a":1}})"}) {
    EXPECT_EQ(DecodeExtenderArgs(body).status().code(),
              absl::StatusCode::kInvalidArgument)
        << body;
  }
  absl::StatusOr<ExtenderArgs> empty = DecodeExtenderArgs("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(empty->node_names, IsEmpty());
}

TEST(ExtenderWireTest, EncodesAnswers) {
  EXPECT_EQ(EncodeFilterResult({"n1", "n3"},
                               {{"n2", "node(s) had cpu above 0.9"}}),
            R"({"NodeNames":["n1","n3"],"FailedNodes":{},)"
            R"("FailedAndUnresolvableNodes":{"n2":"node(s) had cpu above 0.9"},)"
            R"("Error":""})");
  EXPECT_EQ(EncodeFilterResult({}, {}, "say \"why\""),
            R"({"NodeNames":[],"FailedNodes":{},)"
            R"("FailedAndUnresolvableNodes":{},"Error":"say \"why\""})");
  EXPECT_EQ(EncodeHostPriorities({{"n1", 10}, {"n2", 0}}),
            R"([{"Host":"n1","Score":10},{"Host":"n2","Score":0}])");
  EXPECT_EQ(EncodeHostPriorities({}), "[]");
}

}  // namespace
}  // namespace ms::kube
