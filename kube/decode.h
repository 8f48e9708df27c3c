// Decoding Kubernetes JSON into model/ values.
//
// The apiserver's Pods, Nodes, lists, watch events and Status errors, decoded
// with simdjson's on-demand parser. Only the fields placement needs are read;
// unknown fields are skipped. No simdjson type crosses this header.
//
// Lists and watch events are decoded by two templates, DecodeList<T> and
// DecodeWatchEvent<T>, for every kind T the scheduler watches: Pod, Node,
// Namespace, Workload, PodDisruptionBudget, PersistentVolumeClaim,
// PersistentVolume, StorageClass, CsiNode, CsiDriver, CsiStorageCapacity
// and DeviceClass.
// KubeClient and the informers' sources call them; each kind's decoder is
// in its own file (kube/decode_core.h says which).
//
// Failure contract: malformed JSON, a field of the wrong type, an enum value
// this decoder does not know or an invalid quantity returns InvalidArgument
// whose message names the object and the field; the outputs are then
// unspecified. Lists and watch events are the exception: there such an
// object is refused on its own (see RejectedObject) and the rest is
// decoded, so that one object a newer or differently configured apiserver
// sends cannot hide all the others. A quantity too large for int64 is not
// refused: it saturates at kMaxQuantity. Pure functions; thread-safe.
#ifndef METRICS_SCHEDULER_KUBE_DECODE_H_
#define METRICS_SCHEDULER_KUBE_DECODE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/device_class.h"
#include "model/disruption_budget.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_affinity.h"
#include "model/topology_spread.h"
#include "model/volumes.h"

namespace ms::kube {

// A coordination.k8s.io/v1 Lease, as leader election uses it.
struct Lease {
  std::string name;
  std::string namespace_;
  std::string resource_version;  // precondition for UpdateLease
  std::string holder_identity;
  int32_t lease_duration_seconds = 0;
  absl::Time acquire_time = absl::InfinitePast();
  absl::Time renew_time = absl::InfinitePast();
  int32_t lease_transitions = 0;
};

// What a decoded quantity saturates at (2^56: 64 Pi bytes, 7.2e13 cores in
// millicores): beyond any real node, and small enough that adding up a few
// hundred of them cannot overflow int64. The apiserver accepts quantities
// up to about 2^63 * 10^18 (`memory: 100Ei`); kube-scheduler's int64
// conversion of those wraps, ours saturates.
inline constexpr int64_t kMaxQuantity = int64_t{1} << 56;

// An object of a list or a watch event that the decoder refused, with what
// could still be read of its identity (empty when unreadable) and why.
struct RejectedObject {
  std::string resource;  // "pods", "nodes", "services", ...
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string error;  // names the field, e.g. `unknown toleration operator "Gt"`

  // The informer's key: the name for cluster-scoped resources (nodes,
  // namespaces, persistentvolumes, storageclasses, csinodes, csidrivers,
  // deviceclasses),
  // "namespace/name" for the namespaced ones.
  std::string Key() const {
    return resource == "nodes" || resource == "namespaces" ||
                   resource == "persistentvolumes" ||
                   resource == "storageclasses" || resource == "csinodes" ||
                   resource == "csidrivers" || resource == "deviceclasses"
               ? name
               : namespace_ + "/" + name;
  }

  friend bool operator==(const RejectedObject&,
                         const RejectedObject&) = default;
};

// What decoding a kind takes besides its JSON: nothing, except for the
// kinds below.
template <typename T>
struct DecodeContext {};

// The metadata.annotations a Node keeps; others are skipped (a Node's
// annotations can be large, and only node-attribute metrics and metric
// filters' node bounds read any).
template <>
struct DecodeContext<Node> {
  std::vector<std::string> annotations;
  // Node::images already held for node `name` when its images_digest is
  // `digest` (written to `images`, true); null or false: the names are
  // read and interned. A kubelet writes its node's status again and again
  // with the same tens of images: this lets such a write skip them.
  std::function<bool(std::string_view name, uint64_t digest,
                     std::vector<uint32_t>& images)>
      known_images;
};

// Which resource a Workload comes from. There is no default: a list of
// ReplicaSets is not a list of Services.
template <>
struct DecodeContext<Workload> {
  DecodeContext(WorkloadKind kind) : kind(kind) {}  // NOLINT(runtime/explicit)
  WorkloadKind kind;
};

absl::StatusOr<Pod> DecodePod(absl::string_view json);
// `annotations`: as DecodeContext<Node>'s.
absl::StatusOr<Node> DecodeNode(
    absl::string_view json, const std::vector<std::string>& annotations = {});
absl::StatusOr<Lease> DecodeLease(absl::string_view json);
// The gitVersion of the apiserver's /version answer ("v1.37.2").
absl::StatusOr<std::string> DecodeGitVersion(absl::string_view json);

// A page of a list. Only a malformed list fails as a whole; each object the
// decoder refuses is left out of `items` and reported in `rejected`.
template <typename T>
struct ObjectList {
  std::vector<T> items;
  std::vector<RejectedObject> rejected;
  std::string resource_version;  // of the list, to start a watch from
  std::string continue_token;    // non-empty when more pages follow
};

// A page of a list of T: DecodeList<Pod>(json),
// DecodeList<Node>(json, {.annotations = keep}),
// DecodeList<Workload>(json, WorkloadKind::kService).
template <typename T>
absl::StatusOr<ObjectList<T>> DecodeList(absl::string_view json,
                                         const DecodeContext<T>& context = {});

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// One line of a watch stream. For kBookmark only `resource_version` is set;
// for kError `error` holds the server's Status (410 Gone: relist).
//
// A DELETED event's `object` is a tombstone: only its identity
// (namespace, name, uid, resourceVersion, each when it is a string), which
// is all a delete needs; the rest of the object is skipped, not decoded.
//
// When the decoder refuses the object of an ADDED or MODIFIED event,
// `rejected` says which and why, and `object` is a tombstone holding only
// the identity that could be read (as `resource_version` does).
template <typename T>
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  T object;
  std::string resource_version;  // of the object, or the bookmark
  absl::Status error;
  std::optional<RejectedObject> rejected;
};

// One line of a watch stream of T, with T's context as DecodeList's.
template <typename T>
absl::StatusOr<WatchEvent<T>> DecodeWatchEvent(
    absl::string_view line, const DecodeContext<T>& context = {});

// Services, ReplicaSets, StatefulSets, ReplicationControllers: the
// resource's name ("services", ...) and its cluster-wide path.
const char* WorkloadResource(WorkloadKind kind);
const char* WorkloadPath(WorkloadKind kind);

// An RFC 3339 timestamp (metadata.creationTimestamp, a Lease's renewTime),
// in milliseconds since the epoch, rounded down.
absl::StatusOr<int64_t> ParseTimestampMs(absl::string_view text);

// A Kubernetes Status body ({"kind":"Status","code":409,"reason":"Conflict",
// "message":...}) or any other error body, turned into an absl::Status whose
// code follows the HTTP status (see kube/client.h for the mapping).
absl::Status DecodeErrorStatus(long http_status,  // NOLINT(runtime/int)
                               absl::string_view body);

// The code an apiserver's HTTP error status maps to (the table in
// kube/client.h; a 409 depends on the Status's `reason`), for callers
// without a body. The metrics backends' statuses map differently
// (metrics/http_errors.h).
absl::StatusCode CodeForApiserverStatus(
    long http_status,  // NOLINT(runtime/int)
    absl::string_view reason);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_DECODE_H_
