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
// (DeadlineExceeded, Unavailable; Cancelled, IsNotSent() in common/http.h,
// for a request never sent: see "Deadlines" below); an HTTP error from the
// apiserver maps to a code a caller can act on, with the server's message:
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
//
// Deadlines: a call's timeout counts from the moment it is made, before
// any credential work: the call fixes an absolute deadline (now + timeout,
// HttpRequest::deadline) that every attempt of its request keeps. Time
// spent waiting for the exec plugin, for the I/O thread, or on a first
// attempt refused with a 401 is taken from it; when the request leaves,
// what is left is its timeout, and a request whose deadline has passed
// before it could leave is not sent at all: it fails with Cancelled
// (IsNotSent() is true of it). Unlike DeadlineExceeded, which may come
// after the apiserver acted, that status says for certain that the
// request had no effect (a binding was not made). So a caller that checks
// a condition (the lease's write window) and bounds the timeout by it
// knows that no request of that call leaves after the window closes,
// however long a credential took.
//
// Exec plugins and the asynchronous calls (BindAsync, CreateEventAsync):
// the plugin, which may take up to its timeout (a minute), never runs on
// the calling thread (the binder dispatches from the I/O thread's
// callbacks) nor on the I/O thread (every other request's answer would
// wait for it). A call whose credential is cached and good is sent at
// once; otherwise (none yet, expired, or just refused with a 401) it waits
// on the client's credential thread, which runs the plugin once for all
// the calls waiting, then sends each with what is left of its deadline, or
// fails it as never sent when nothing is left. A 401 to an asynchronous
// call goes the same way: the I/O thread only hands it over. The blocking
// calls run the plugin on their caller's thread, within their deadline.
// (Fetching every credential ahead of the calls would not do: a 401 or an
// expiry comes after the call is made.)
//
// Size limits: no answer of the apiserver is held beyond a limit
// (ResponseLimits), however large a page or an object it sends: a list
// page or any other answer over max_response_bytes, or one watch event
// (one line of the stream) over max_watch_event_bytes, is refused as it
// arrives with ResourceExhausted (common/http.h's IsResponseTooLarge() is
// true of it), its message naming the limit and the flag that raises it.
// A list then fails as a whole, a watch ends; an informer backs off and
// tries again (kube/informer.h).
#ifndef METRICS_SCHEDULER_KUBE_CLIENT_H_
#define METRICS_SCHEDULER_KUBE_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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

// How much of one answer the client holds at most (see "Size limits"
// above). The defaults are far above any real answer: kube-apiserver
// stores objects of at most 1.5 MiB (etcd's default request limit), so a
// watch event, one object, is at most a few MiB as JSON, and a list page
// of 500 of them (ListOptions::page_size) a few hundred MiB only if every
// object is near the limit; a page of 500 ordinary pods is a few MB.
struct ResponseLimits {
  // Any answer but a watch: a list page, a pod, a lease, a review, a Get().
  size_t max_response_bytes = size_t{256} << 20;
  // One event of a watch stream.
  size_t max_watch_event_bytes = size_t{16} << 20;
};
// The scheduler's flags that set them (scheduler/cmd/main.cc), named by the
// errors.
inline constexpr char kMaxResponseBytesFlag[] =
    "--max-apiserver-response-bytes";
inline constexpr char kMaxWatchEventBytesFlag[] = "--max-watch-event-bytes";

struct ListOptions {
  std::string field_selector;  // e.g. "spec.schedulerName=x,spec.nodeName="
  std::string label_selector;
  int page_size = 500;  // `limit` of each page
  // Not sent: the metadata.annotations a decoded Node keeps (the keys
  // node-attribute metrics and metric filters' node bounds read); the rest
  // are skipped. Nodes only.
  std::vector<std::string> node_annotations;
};

// A core/v1 Event about a pod.
struct PodEvent {
  // metadata.name; empty: made from the pod's name and the time. A caller
  // that retries sets it, so a retry after a lost answer is refused
  // (AlreadyExists) instead of recording the Event twice.
  std::string name;
  // The kind of the object it is about: a Pod, or a Node (pod_name is then
  // the node's name and pod_namespace "default", where Events about
  // cluster-scoped objects go).
  std::string kind = "Pod";
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
// Cluster-wide paths (Workloads: WorkloadPath in kube/decode.h).
inline constexpr char kPodsPath[] = "/api/v1/pods";
inline constexpr char kNodesPath[] = "/api/v1/nodes";
inline constexpr char kNamespacesPath[] = "/api/v1/namespaces";
inline constexpr char kBudgetsPath[] = "/apis/policy/v1/poddisruptionbudgets";
// Cluster-wide paths of the storage objects (model/volumes.h).
inline constexpr char kClaimsPath[] = "/api/v1/persistentvolumeclaims";
inline constexpr char kVolumesPath[] = "/api/v1/persistentvolumes";
inline constexpr char kStorageClassesPath[] =
    "/apis/storage.k8s.io/v1/storageclasses";
inline constexpr char kCsiNodesPath[] = "/apis/storage.k8s.io/v1/csinodes";
inline constexpr char kCsiDriversPath[] = "/apis/storage.k8s.io/v1/csidrivers";
inline constexpr char kCapacitiesPath[] =
    "/apis/storage.k8s.io/v1/csistoragecapacities";
// DeviceClasses (model/device_class.h).
inline constexpr char kDeviceClassesPath[] =
    "/apis/resource.k8s.io/v1/deviceclasses";

class KubeClient {
 public:
  explicit KubeClient(ClusterConfig config,
                      std::string user_agent = "metrics-scheduler",
                      ResponseLimits limits = {});
  // Waits until every asynchronous call made has been answered (or has
  // failed) and its `done` has returned.
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

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
  // would have returned, on the HTTP client's I/O thread (HttpClient::Send)
  // or the client's credential thread, and must not block. A 401 to an
  // exec plugin's credential is retried once with the plugin's next one,
  // as by the blocking calls. The deadline is now + `timeout` (Events:
  // kDefaultRequestTimeout); a call that cannot leave by then fails with
  // Cancelled, IsNotSent() (see "Deadlines" above).
  using Done = std::function<void(absl::Status)>;
  void BindAsync(const Pod& pod, const std::string& node_name,
                 absl::Duration timeout, Done done);
  void CreateEventAsync(const PodEvent& event, Done done);

  // Sets one condition in the pod's status (a strategic merge patch on
  // pods/NAME/status, keyed by condition type).
  absl::Status PatchPodCondition(const std::string& namespace_,
                                 const std::string& name,
                                 const PodCondition& condition,
                                 absl::Duration timeout = kDefaultRequestTimeout);

  absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                             const std::string& name);

  // Deletes a pod, only if its uid is still `uid` (Aborted otherwise);
  // NotFound when it is gone.
  absl::Status DeletePod(const std::string& namespace_, const std::string& name,
                         const std::string& uid,
                         absl::Duration timeout = kDefaultRequestTimeout);
  // Evicts a pod through the Eviction API (pods/NAME/eviction, policy/v1),
  // only if its uid is still `uid`: the apiserver deletes it unless a
  // PodDisruptionBudget forbids it now, which is ResourceExhausted (429,
  // with the budget's message). NotFound when it is gone, Aborted when the
  // uid differs.
  absl::Status EvictPod(const std::string& namespace_, const std::string& name,
                        const std::string& uid,
                        absl::Duration timeout = kDefaultRequestTimeout);
  // Sets (or, with "", clears) a pod's status.nominatedNodeName.
  absl::Status SetNominatedNode(const std::string& namespace_,
                                const std::string& name,
                                const std::string& node,
                                absl::Duration timeout = kDefaultRequestTimeout);

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

  // The apiserver's release: /version's gitVersion ("v1.37.2").
  absl::StatusOr<std::string> ServerVersion(
      absl::Duration timeout = kDefaultRequestTimeout);

  // GETs `path` (with its query string) and returns the body of a 2xx
  // answer, for APIs with no decoder here (the resource metrics API).
  // `max_response_bytes`: the caller's limit on the body, whose
  // ResourceExhausted (IsResponseTooLarge) the caller names; 0: the
  // client's ResponseLimits::max_response_bytes.
  absl::StatusOr<std::string> Get(const std::string& path,
                                  absl::Duration timeout = kDefaultRequestTimeout,
                                  size_t max_response_bytes = 0);

  // Lists or watches any kind kube/decode.h decodes by its path, as the
  // methods above do, decoding with DecodeList<T> and DecodeWatchEvent<T>
  // (`context`: theirs). Informers' sources (informer.h) call these.
  template <typename T>
  absl::StatusOr<ObjectList<T>> List(const std::string& path,
                                     const ListOptions& options,
                                     const DecodeContext<T>& context = {});
  template <typename T>
  absl::StatusOr<std::string> List(
      const std::string& path, const ListOptions& options,
      const DecodeContext<T>& context,
      absl::FunctionRef<void(ObjectList<T>&)> page);
  template <typename T>
  absl::Status Watch(const std::string& path, const ListOptions& options,
                     const DecodeContext<T>& context,
                     const std::string& resource_version,
                     const std::function<bool(WatchEvent<T>&)>& on_event,
                     const std::atomic<bool>* cancel,
                     absl::Duration timeout = absl::Minutes(5));

  const std::string& server() const { return config_.server; }

 private:
  absl::StatusOr<HttpResponse> Call(
      const std::string& method, const std::string& path,
      const std::string& body = "",
      const std::string& content_type = "application/json",
      absl::Duration timeout = kDefaultRequestTimeout,
      size_t max_response_bytes = 0);
  // An asynchronous call, from BindAsync or CreateEventAsync until its
  // `done` has returned.
  struct AsyncCall {
    std::string method;
    std::string path;
    std::string body;
    std::string content_type;
    absl::Duration timeout;
    absl::Time deadline;  // now + timeout, when the call was made
    Done done;
    int attempt = 1;  // counts the tries of a 401
  };
  // The request a call sends: Request() with the timeout and deadline, and
  // for a method other than GET the body and its type.
  HttpRequest Prepare(
      const std::string& method, const std::string& path,
      const std::string& body, const std::string& content_type,
      absl::Duration timeout, absl::Time deadline,
      const std::shared_ptr<const ExecCredential>& credential) const;
  // What an answer to attempt `attempt` of a call means: the response when
  // 2xx, the apiserver's error otherwise. A 401 to the exec plugin's
  // `credential` is Refused(); `*again` says to send the call once more
  // (after the first attempt only).
  absl::StatusOr<HttpResponse> Judge(
      HttpResponse response,
      const std::shared_ptr<const ExecCredential>& credential, int attempt,
      bool* again) const;
  // Call() without waiting: counts the call, then CallAsync().
  void StartAsync(AsyncCall call);
  // Sends `call` at once when the exec plugin (if any) has a good
  // credential cached, else hands it to the credential thread. Never runs
  // the plugin: safe on the I/O thread.
  void CallAsync(std::shared_ptr<AsyncCall> call);
  // Sends `call` with `credential` (the exec plugin's, or null).
  void SendAsync(std::shared_ptr<AsyncCall> call,
                 std::shared_ptr<const ExecCredential> credential);
  // Queues `call` for the credential thread, starting it if need be.
  void AwaitCredential(std::shared_ptr<AsyncCall> call);
  // The credential thread: runs the plugin once for the calls waiting,
  // then sends them.
  void FetchCredentials();
  // Hands `status` to the call's `done`; the call is over.
  void Finish(AsyncCall& call, absl::Status status);
  // The exec plugin's credential, running it if need be (null without a
  // plugin). Fails only when the plugin does.
  absl::StatusOr<std::shared_ptr<const ExecCredential>> Credential() const;
  // A request carrying the config's credential, or `credential` (the exec
  // plugin's) when not null.
  HttpRequest Request(
      const std::string& method, const std::string& path,
      const std::shared_ptr<const ExecCredential>& credential) const;
  // The apiserver answered 401 to `credential`, the exec plugin's: the
  // plugin is told (ExecCredentialPlugin::Reject), and the status to
  // return says so.
  absl::Status Refused(const std::shared_ptr<const ExecCredential>& credential,
                       absl::string_view body) const;

  const ClusterConfig config_;
  const std::string user_agent_;
  const ResponseLimits limits_;

  absl::Mutex async_mu_;
  // Asynchronous calls made and not over yet.
  int async_calls_ ABSL_GUARDED_BY(async_mu_) = 0;
  // Calls waiting for the exec plugin's next credential.
  std::vector<std::shared_ptr<AsyncCall>> awaiting_credential_
      ABSL_GUARDED_BY(async_mu_);
  bool stopping_ ABSL_GUARDED_BY(async_mu_) = false;
  std::thread credential_thread_;  // from the first call that waits

  // Last: destroyed first, it waits for its I/O thread, whose callbacks
  // use the members above.
  HttpClient http_;
};

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_CLIENT_H_
