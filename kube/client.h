// KubeClient: the Kubernetes REST calls the scheduler makes.
//
// Lists (all pages), watches, Bindings, Events, pod status patches and Leases
// over HttpClient, decoded into model/ values. The caller owns retries and
// policy; the client makes one call per method call (a list makes one call
// per page).
//
// Thread-safe: every method may be called from any thread at once.
//
// Failure contract: transport failures come back as HttpClient reports them
// (DeadlineExceeded, Unavailable); an HTTP error from the apiserver maps to
// a code a caller can act on, with the server's message:
//   400, 422 InvalidArgument     401 Unauthenticated    403 PermissionDenied
//   404 NotFound                 409 AlreadyExists (create of an existing
//   object) or Aborted (a conflict: stale resourceVersion, pod already bound)
//   410 OutOfRange (resourceVersion expired: relist)    429 ResourceExhausted
//   504 DeadlineExceeded         other 5xx Unavailable
// A response that cannot be decoded is InvalidArgument.
//
// Credentials: every request carries the config's (ClusterConfig). With an
// exec credential plugin, a request that fails to get a credential fails
// with the plugin's error (kube/exec_credential.h), and a 401 makes the
// plugin run again: a call is then sent once more with the new credential;
// a watch returns, and the caller's next watch gets the new one. A 401 to
// the new credential too is Unauthenticated, naming the plugin.
#ifndef METRICS_SCHEDULER_KUBE_CLIENT_H_
#define METRICS_SCHEDULER_KUBE_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http.h"
#include "kube/cluster_config.h"
#include "kube/decode.h"
#include "kube/review.h"
#include "model/node.h"
#include "model/pod.h"

namespace ms::kube {

// How long a request may take unless its call says otherwise (watches,
// leases and bindings take their own).
inline constexpr absl::Duration kDefaultRequestTimeout = absl::Seconds(30);

struct ListOptions {
  std::string field_selector;  // e.g. "spec.schedulerName=x,spec.nodeName="
  std::string label_selector;
  int page_size = 500;  // `limit` of each page
  // Not sent: the metadata.annotations a decoded Node keeps (the keys
  // node-attribute metrics read); the rest are skipped. Nodes only.
  std::vector<std::string> node_annotations;
};

// A core/v1 Event about a pod.
struct PodEvent {
  // metadata.name; empty: made from the pod's name and the time. A caller
  // that retries sets it, so a retry after a lost answer is refused
  // (AlreadyExists) instead of recording the Event twice.
  std::string name;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::string type;    // "Normal" or "Warning"
  std::string reason;  // "Scheduled", "FailedScheduling", ...
  std::string action;  // "Binding", "Scheduling"
  std::string message;
  std::string reporting_component;  // the scheduler's name
  std::string reporting_instance;   // this replica's identity
  // When it happened (firstTimestamp, lastTimestamp); InfinitePast: when
  // it is sent.
  absl::Time time = absl::InfinitePast();
};

// A pod condition to set through pods/status.
struct PodCondition {
  std::string type = "PodScheduled";
  std::string status;  // "True" / "False"
  std::string reason;  // "Unschedulable", "SchedulerError"
  std::string message;
};

// The pods a preemption made room for and that are not bound yet.
inline constexpr char kNominatedPodsSelector[] =
    "spec.nodeName=,status.nominatedNodeName!=";
inline constexpr char kBudgetsPath[] = "/apis/policy/v1/poddisruptionbudgets";
// Cluster-wide paths of the storage objects (model/volumes.h).
inline constexpr char kClaimsPath[] = "/api/v1/persistentvolumeclaims";
inline constexpr char kVolumesPath[] = "/api/v1/persistentvolumes";
inline constexpr char kStorageClassesPath[] =
    "/apis/storage.k8s.io/v1/storageclasses";
inline constexpr char kCsiNodesPath[] = "/apis/storage.k8s.io/v1/csinodes";

class KubeClient {
 public:
  explicit KubeClient(ClusterConfig config,
                      std::string user_agent = "metrics-scheduler");

  // A list, every page. With `page`, each page is handed to it as soon
  // as it is decoded (its items may be moved from) and only the list's
  // resourceVersion is returned: the informers' way, so that a whole list
  // is never held at once.
  absl::StatusOr<ObjectList<Pod>> ListPods(const ListOptions& options);
  absl::StatusOr<std::string> ListPods(
      const ListOptions& options,
      absl::FunctionRef<void(ObjectList<Pod>&)> page);
  absl::StatusOr<ObjectList<Node>> ListNodes(const ListOptions& options);
  absl::StatusOr<std::string> ListNodes(
      const ListOptions& options,
      absl::FunctionRef<void(ObjectList<Node>&)> page);
  absl::StatusOr<ObjectList<Namespace>> ListNamespaces(
      const ListOptions& options);
  absl::StatusOr<std::string> ListNamespaces(
      const ListOptions& options,
      absl::FunctionRef<void(ObjectList<Namespace>&)> page);

  // Watches from `resource_version`, calling `on_event` for each event
  // (bookmarks included) until the server ends the watch (returns OK), the
  // callback returns false or `*cancel` turns true (Cancelled), or an error.
  // An ERROR event or HTTP 410 returns OutOfRange: the caller must relist.
  // `timeout` bounds the watch on the server side.
  absl::Status WatchPods(const ListOptions& options,
                         const std::string& resource_version,
                         const std::function<bool(WatchEvent<Pod>&)>& on_event,
                         const std::atomic<bool>* cancel,
                         absl::Duration timeout = absl::Minutes(5));
  absl::Status WatchNodes(
      const ListOptions& options, const std::string& resource_version,
      const std::function<bool(WatchEvent<Node>&)>& on_event,
      const std::atomic<bool>* cancel,
      absl::Duration timeout = absl::Minutes(5));
  // Services, ReplicaSets, StatefulSets or ReplicationControllers, in
  // every namespace.
  absl::StatusOr<ObjectList<Workload>> ListWorkloads(
      WorkloadKind kind, const ListOptions& options);
  absl::StatusOr<std::string> ListWorkloads(
      WorkloadKind kind, const ListOptions& options,
      absl::FunctionRef<void(ObjectList<Workload>&)> page);
  absl::Status WatchWorkloads(
      WorkloadKind kind, const ListOptions& options,
      const std::string& resource_version,
      const std::function<bool(WatchEvent<Workload>&)>& on_event,
      const std::atomic<bool>* cancel,
      absl::Duration timeout = absl::Minutes(5));
  absl::Status WatchNamespaces(
      const ListOptions& options, const std::string& resource_version,
      const std::function<bool(WatchEvent<Namespace>&)>& on_event,
      const std::atomic<bool>* cancel,
      absl::Duration timeout = absl::Minutes(5));

  // POSTs pods/NAME/binding with the pod's uid, so that a pod recreated
  // under the same name is not bound by mistake. `timeout` bounds the
  // request: DeadlineExceeded when it elapses, and then the binding may or
  // may not have been made (read the pod back to know).
  absl::Status Bind(const Pod& pod, const std::string& node_name,
                    absl::Duration timeout = kDefaultRequestTimeout);

  absl::Status CreateEvent(const PodEvent& event);

  // Bind() and CreateEvent() without waiting: `done` gets the answer they
  // would have returned, on the HTTP client's I/O thread (HttpClient::Send),
  // and must not block. A 401 to an exec plugin's credential is retried
  // once with the plugin's next one, as by the blocking calls.
  using Done = std::function<void(absl::Status)>;
  void BindAsync(const Pod& pod, const std::string& node_name,
                 absl::Duration timeout, Done done);
  void CreateEventAsync(const PodEvent& event, Done done);

  // Sets one condition in the pod's status (a strategic merge patch on
  // pods/NAME/status, keyed by condition type).
  absl::Status PatchPodCondition(const std::string& namespace_,
                                 const std::string& name,
                                 const PodCondition& condition);

  absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                             const std::string& name);

  // Deletes a pod, only if its uid is still `uid` (Aborted otherwise);
  // NotFound when it is gone.
  absl::Status DeletePod(const std::string& namespace_, const std::string& name,
                         const std::string& uid);
  // Sets (or, with "", clears) a pod's status.nominatedNodeName.
  absl::Status SetNominatedNode(const std::string& namespace_,
                                const std::string& name,
                                const std::string& node);

  // Lease calls take a timeout: leader election bounds each attempt so
  // that a slow apiserver cannot hold a leader past its renew deadline.
  absl::StatusOr<Lease> GetLease(const std::string& namespace_,
                                 const std::string& name,
                                 absl::Duration timeout = kDefaultRequestTimeout);
  // AlreadyExists when another replica created it first.
  absl::StatusOr<Lease> CreateLease(
      const Lease& lease, absl::Duration timeout = kDefaultRequestTimeout);
  // Aborted when `lease.resource_version` is no longer current.
  absl::StatusOr<Lease> UpdateLease(
      const Lease& lease, absl::Duration timeout = kDefaultRequestTimeout);

  // What kube-scheduler's VolumeBinding writes before binding a pod (merge
  // patches with the resourceVersion the decision saw as precondition:
  // Aborted when the object changed since). BindVolume sets the PV's
  // spec.claimRef to the claim (and pv.kubernetes.io/bound-by-controller
  // unless the PV was pre-bound to it); the PV controller then completes
  // the claim. SelectNode sets a claim's volume.kubernetes.io/selected-node
  // for its provisioner.
  absl::Status BindVolume(const VolumeBindings::Bind& bind,
                          absl::Duration timeout = kDefaultRequestTimeout);
  absl::Status SelectNode(const VolumeBindings::Provision& claim,
                          const std::string& node,
                          absl::Duration timeout = kDefaultRequestTimeout);

  // Merge-patches an object at `path` (JSON merge patch). A
  // metadata.resourceVersion in the patch is a precondition: Aborted when
  // the object has changed since.
  absl::Status MergePatch(const std::string& path, const std::string& patch,
                          absl::Duration timeout = kDefaultRequestTimeout);

  // Delegated authentication and authorisation (kube/review.h): who
  // `token` belongs to (a TokenReview), and whether a user may make a
  // non-resource request (a SubjectAccessReview). Each is one POST; an
  // invalid token or a refused access is an OK answer saying so.
  absl::StatusOr<TokenReview> ReviewToken(
      absl::string_view token, absl::Duration timeout = absl::Seconds(10));
  absl::StatusOr<AccessReview> ReviewAccess(
      const NonResourceAccess& access,
      absl::Duration timeout = absl::Seconds(10));

  // GETs `path` (with its query string) and returns the body of a 2xx
  // answer, for APIs with no decoder here (the resource metrics API).
  absl::StatusOr<std::string> Get(const std::string& path,
                                  absl::Duration timeout = kDefaultRequestTimeout);

  // Lists or watches any resource by its path, with its decoders, as the
  // methods above do. Instantiated for the storage objects of
  // model/volumes.h (see informer.h's sources).
  template <typename T>
  absl::StatusOr<ObjectList<T>> List(
      const std::string& path, const ListOptions& options,
      absl::FunctionRef<absl::StatusOr<ObjectList<T>>(absl::string_view)> decode);
  template <typename T>
  absl::StatusOr<std::string> List(
      const std::string& path, const ListOptions& options,
      absl::FunctionRef<absl::StatusOr<ObjectList<T>>(absl::string_view)> decode,
      absl::FunctionRef<void(ObjectList<T>&)> page);
  template <typename T>
  absl::Status Watch(const std::string& path, const ListOptions& options,
                     const std::string& resource_version,
                     const std::function<bool(WatchEvent<T>&)>& on_event,
                     absl::FunctionRef<absl::StatusOr<WatchEvent<T>>(absl::string_view)> decode,
                     const std::atomic<bool>* cancel,
                     absl::Duration timeout = absl::Minutes(5));

  const std::string& server() const { return config_.server; }

 private:
  absl::StatusOr<HttpResponse> Call(
      const std::string& method, const std::string& path,
      const std::string& body = "",
      const std::string& content_type = "application/json",
      absl::Duration timeout = kDefaultRequestTimeout);
  // The request Call() sends: Request() with the timeout, and for a method
  // other than GET the body and its type.
  absl::StatusOr<HttpRequest> Prepare(
      const std::string& method, const std::string& path,
      const std::string& body, const std::string& content_type,
      absl::Duration timeout,
      std::shared_ptr<const ExecCredential>* credential) const;
  // What an answer to attempt `attempt` of a call means: the response when
  // 2xx, the apiserver's error otherwise. A 401 to the exec plugin's
  // `credential` is Refused(); `*again` says to send the call once more
  // (after the first attempt only).
  absl::StatusOr<HttpResponse> Judge(
      HttpResponse response,
      const std::shared_ptr<const ExecCredential>& credential, int attempt,
      bool* again) const;
  // Call() without waiting; `attempt` counts the tries of a 401.
  void CallAsync(const std::string& method, const std::string& path,
                 std::string body, const std::string& content_type,
                 absl::Duration timeout, Done done, int attempt = 1);
  // A request carrying the config's credential; `*credential` is set to
  // the exec plugin's credential it carries, if any. Fails only when the
  // exec plugin does.
  absl::StatusOr<HttpRequest> Request(
      const std::string& method, const std::string& path,
      std::shared_ptr<const ExecCredential>* credential) const;
  // The apiserver answered 401 to `credential`, the exec plugin's: the
  // plugin is told (ExecCredentialPlugin::Reject), and the status to
  // return says so.
  absl::Status Refused(const std::shared_ptr<const ExecCredential>& credential,
                       absl::string_view body) const;

  const ClusterConfig config_;
  const std::string user_agent_;
  HttpClient http_;
};

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_CLIENT_H_
