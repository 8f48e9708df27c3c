#include "bench/quality/cluster_objects.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "simdjson.h"

namespace ms::quality {

std::string PoolName(const std::string& trace, const std::string& policy) {
  return absl::StrCat(trace, "-", policy);
}

std::string NodeName(const std::string& pool, const NodeSpec& node) {
  return absl::StrCat(pool, "-", node.name);
}

std::string PodName(const std::string& pool, const PodSpec& pod) {
  return absl::StrCat(pool, "-", pod.name);
}

std::string OwnerName(const std::string& pool, const std::string& owner) {
  return absl::StrCat(pool, "-", owner);
}

std::string NodeAddress(int index) {
  return absl::StrCat("10.200.", index / 250, ".", index % 250 + 1);
}

std::string NodeJson(const std::string& name, const std::string& pool) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":)",
                      JsonQuote(name), R"(,"labels":{)", JsonQuote(kPoolLabel),
                      ":", JsonQuote(pool), R"(,"kubernetes.io/hostname":)",
                      JsonQuote(name), "}}}");
}

namespace {

// Cores as a Kubernetes quantity, in millicores.
std::string Millicores(double cores) {
  return absl::StrCat(static_cast<int64_t>(std::llround(cores * 1000)), "m");
}

std::string Mebibytes(double gib) {
  return absl::StrCat(static_cast<int64_t>(std::llround(gib * 1024)), "Mi");
}

}  // namespace

std::string NodeStatusPatch(const NodeSpec& node, const std::string& name,
                            const std::string& address) {
  std::string resources =
      absl::StrCat(R"({"cpu":")", Millicores(node.cores), R"(","memory":")",
                   Mebibytes(node.memory_gib),
                   R"(","pods":"110","ephemeral-storage":"100Gi"})");
  return absl::StrCat(
      R"({"status":{"capacity":)", resources, R"(,"allocatable":)", resources,
      R"(,"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady",)",
      R"("message":"quality benchmark"}],"addresses":[{"type":"InternalIP","address":)",
      JsonQuote(address), R"(},{"type":"Hostname","address":)", JsonQuote(name),
      "}]}}");
}

std::string OwnerJson(const std::string& name, const std::string& pool) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":)",
      JsonQuote(name), R"(,"labels":{)", JsonQuote(kPoolLabel), ":",
      JsonQuote(pool), "}}}");
}

absl::StatusOr<std::string> ObjectUid(absl::string_view json) {
  simdjson::dom::parser parser;
  std::string_view uid;
  if (parser.parse(json.data(), json.size())["metadata"]["uid"].get(uid) !=
          simdjson::SUCCESS ||
      uid.empty()) {
    return absl::InvalidArgumentError("no metadata.uid in the object");
  }
  return std::string(uid);
}

namespace {

// ,"ownerReferences":[...] naming `owner` as the controller, or nothing.
std::string OwnerReferences(const std::optional<OwnerRef>& owner) {
  if (!owner) return "";
  return absl::StrCat(
      R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":)",
      JsonQuote(owner->name), R"(,"uid":)", JsonQuote(owner->uid),
      R"(,"controller":true}])");
}

}  // namespace

std::string PodJson(const std::string& name, const std::string& pool,
                    const std::string& scheduler, const PodSpec& pod,
                    const std::optional<OwnerRef>& owner) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":)", JsonQuote(name),
      R"(,"labels":{)", JsonQuote(kPoolLabel), ":", JsonQuote(pool), "}",
      OwnerReferences(owner), R"(},"spec":{"schedulerName":)",
      JsonQuote(scheduler), R"(,"nodeSelector":{)", JsonQuote(kPoolLabel), ":",
      JsonQuote(pool), R"(},"terminationGracePeriodSeconds":0,)",
      R"("containers":[{"name":"app","image":"registry.k8s.io/pause:3.10",)",
      R"("resources":{"requests":{"cpu":")", Millicores(pod.cpu_request),
      R"(","memory":")", Mebibytes(pod.memory_request_gib), R"("}}}]}})");
}

std::string PodRunningPatch(absl::Time start) {
  return absl::StrCat(
      R"({"status":{"phase":"Running","startTime":")",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", start, absl::UTCTimeZone()),
      R"(","conditions":[{"type":"PodScheduled","status":"True"},)",
      R"({"type":"Ready","status":"True"}]}})");
}

}  // namespace ms::quality
