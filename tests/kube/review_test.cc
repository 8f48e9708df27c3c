// The TokenReview and SubjectAccessReview wire format (kube/review.h):
// request bodies as the apiserver reads them, and its answers decoded.
#include "kube/review.h"

#include <simdjson.h>

#include <string>

#include "gtest/gtest.h"

namespace ms::kube {
namespace {

// The body parses as JSON, and the fields a test names hold what it says.
simdjson::dom::element Parse(simdjson::dom::parser& parser,
                             const std::string& json) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  return doc;
}

TEST(ReviewTest, TokenReviewBodyQuotesTheToken) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, TokenReviewBody("a\"b\\c"));
  EXPECT_EQ(std::string_view(doc["apiVersion"]), "authentication.k8s.io/v1");
  EXPECT_EQ(std::string_view(doc["kind"]), "TokenReview");
  EXPECT_EQ(std::string_view(doc["spec"]["token"]), "a\"b\\c");
}

TEST(ReviewTest, SubjectAccessReviewBodyCarriesUserAndNonResourceRequest) {
  NonResourceAccess access{
      .user = {.username = "system:serviceaccount:monitoring:prometheus",
               .uid = "u-1",
               .groups = {"system:serviceaccounts", "system:authenticated"},
               .extra = {{"authentication.kubernetes.io/pod-name",
                          {"prometheus-0"}}}},
      .path = "/metrics",
      .verb = "get"};
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      Parse(parser, SubjectAccessReviewBody(access));
  EXPECT_EQ(std::string_view(doc["apiVersion"]), "authorization.k8s.io/v1");
  EXPECT_EQ(std::string_view(doc["kind"]), "SubjectAccessReview");
  simdjson::dom::element spec = doc["spec"];
  EXPECT_EQ(std::string_view(spec["nonResourceAttributes"]["path"]),
            "/metrics");
  EXPECT_EQ(std::string_view(spec["nonResourceAttributes"]["verb"]), "get");
  EXPECT_EQ(std::string_view(spec["user"]),
            "system:serviceaccount:monitoring:prometheus");
  EXPECT_EQ(std::string_view(spec["uid"]), "u-1");
  simdjson::dom::array groups = spec["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(std::string_view(groups.at(1)), "system:authenticated");
  simdjson::dom::array pod =
      spec["extra"]["authentication.kubernetes.io/pod-name"];
  ASSERT_EQ(pod.size(), 1u);
  EXPECT_EQ(std::string_view(pod.at(0)), "prometheus-0");
}

TEST(ReviewTest, SubjectAccessReviewBodyWithNoGroupsOrExtra) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(
      parser, SubjectAccessReviewBody(
                  {.user = {.username = "u"}, .path = "/x", .verb = "get"}));
  EXPECT_EQ(simdjson::dom::array(doc["spec"]["groups"]).size(), 0u);
  EXPECT_EQ(simdjson::dom::object(doc["spec"]["extra"]).size(), 0u);
}

// An answer as kube-apiserver writes it (spec echoed, status set).
TEST(ReviewTest, DecodesAnAuthenticatedTokenReview) {
  absl::StatusOr<TokenReview> review = DecodeTokenReview(R"({
    "kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
    "metadata": {"creationTimestamp": null},
    "spec": {"token": "t"},
    "status": {
      "authenticated": true,
      "user": {
        "username": "system:serviceaccount:ns:reader",
        "uid": "3f1c",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns",
                   "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": ["JTI=1"]}
      },
      "audiences": ["https://kubernetes.default.svc.cluster.local"]
    }
  })");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_TRUE(review->authenticated);
  EXPECT_EQ(review->user,
            (UserInfo{.username = "system:serviceaccount:ns:reader",
                      .uid = "3f1c",
                      .groups = {"system:serviceaccounts",
                                 "system:serviceaccounts:ns",
                                 "system:authenticated"},
                      .extra = {{"authentication.kubernetes.io/credential-id",
                                 {"JTI=1"}}}}));
}

TEST(ReviewTest, DecodesARefusedTokenReview) {
  absl::StatusOr<TokenReview> review = DecodeTokenReview(
      R"({"kind":"TokenReview","status":{"user":{},"error":"token expired"}})");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_FALSE(review->authenticated);
  EXPECT_EQ(review->error, "token expired");
  EXPECT_EQ(review->user, UserInfo{});
}

TEST(ReviewTest, DecodesAccessReviews) {
  absl::StatusOr<AccessReview> allowed = DecodeAccessReview(
      R"({"kind":"SubjectAccessReview","status":{"allowed":true,)"
      R"("reason":"RBAC: allowed by ClusterRoleBinding \"r\""}})");
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_TRUE(allowed->allowed);
  EXPECT_FALSE(allowed->denied);
  EXPECT_EQ(allowed->reason, "RBAC: allowed by ClusterRoleBinding \"r\"");

  absl::StatusOr<AccessReview> refused = DecodeAccessReview(
      R"({"status":{"allowed":false,"denied":true,"evaluationError":"e"}})");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->allowed);
  EXPECT_TRUE(refused->denied);
  EXPECT_EQ(refused->evaluation_error, "e");

  // No status at all: not allowed.
  absl::StatusOr<AccessReview> empty = DecodeAccessReview(R"({"spec":{}})");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_FALSE(empty->allowed);
}

TEST(ReviewTest, MalformedAnswersAreInvalidArgument) {
  for (const char* json : {"", "[]", "{\"status\":", "{\"status\":[1]}",
                           R"({"status":{"allowed":"yes"}})"}) {
    EXPECT_EQ(DecodeAccessReview(json).status().code(),
              absl::StatusCode::kInvalidArgument)
        << json;
  }
  EXPECT_EQ(DecodeTokenReview(R"({"status":{"user":{"groups":"g"}}})")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ms::kube
