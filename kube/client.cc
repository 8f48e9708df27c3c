#include "kube/client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "common/url.h"

namespace ms::kube {
namespace {

std::string Query(const ListOptions& options) {
  std::string q;
  if (!options.field_selector.empty()) {
    absl::StrAppend(&q, "&fieldSelector=", UrlEncode(options.field_selector));
  }
  if (!options.label_selector.empty()) {
    absl::StrAppend(&q, "&labelSelector=", UrlEncode(options.label_selector));
  }
  return q;
}

std::string MicroTime(absl::Time t) {
  if (t == absl::InfinitePast()) return "null";
  return JsonQuote(absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t,
                                    absl::UTCTimeZone()));
}

std::string LeaseBody(const Lease& lease) {
  std::string metadata = absl::StrCat(
      "{\"name\":", JsonQuote(lease.name),
      ",\"namespace\":", JsonQuote(lease.namespace_));
  if (!lease.resource_version.empty()) {
    absl::StrAppend(&metadata,
                    ",\"resourceVersion\":", JsonQuote(lease.resource_version));
  }
  metadata += "}";
  return absl::StrCat(
      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
      "\"metadata\":",
      metadata, ",\"spec\":{\"holderIdentity\":",
      JsonQuote(lease.holder_identity),
      ",\"leaseDurationSeconds\":", lease.lease_duration_seconds,
      ",\"acquireTime\":", MicroTime(lease.acquire_time),
      ",\"renewTime\":", MicroTime(lease.renew_time),
      ",\"leaseTransitions\":", lease.lease_transitions, "}}");
}

bool IsSuccess(long status) {  // NOLINT(runtime/int)
  return status >= 200 && status < 300;
}

// `what` was refused for its size: more than `limit` bytes, the most
// `flag` allows.
absl::Status TooLarge(absl::string_view what, size_t limit,
                      absl::string_view flag) {
  return ResponseTooLarge(absl::StrCat(
      what, " is larger than ", limit, " bytes, the most ", flag,
      " allows: refused (raise ", flag, " if the cluster's objects are "
      "this large)"));
}

}  // namespace

KubeClient::KubeClient(ClusterConfig config, std::string user_agent,
                       ResponseLimits limits)
    : config_(std::move(config)),
      user_agent_(std::move(user_agent)),
      limits_(limits),
      http_(config_.tls) {}

KubeClient::~KubeClient() {
  {
    absl::MutexLock lock(&async_mu_);
    async_mu_.Await(absl::Condition(
        +[](KubeClient* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->async_mu_) {
          return c->async_calls_ == 0;
        },
        this));
    stopping_ = true;
  }
  if (credential_thread_.joinable()) credential_thread_.join();
}

absl::StatusOr<std::shared_ptr<const ExecCredential>> KubeClient::Credential()
    const {
  if (config_.exec == nullptr) return nullptr;
  return config_.exec->Get();
}

HttpRequest KubeClient::Request(
    const std::string& method, const std::string& path,
    const std::shared_ptr<const ExecCredential>& credential) const {
  HttpRequest request;
  request.method = method;
  request.url = config_.server + path;
  request.headers.emplace_back("Accept", "application/json");
  request.headers.emplace_back("User-Agent", user_agent_);
  std::string token = config_.BearerToken();
  if (credential != nullptr) {
    token = credential->token;
    request.client_cert_pem = credential->client_cert_pem;
    request.client_key_pem = credential->client_key_pem;
  }
  if (!token.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + token);
  }
  return request;
}

absl::Status KubeClient::Refused(
    const std::shared_ptr<const ExecCredential>& credential,
    absl::string_view body) const {
  config_.exec->Reject(credential);
  absl::Status status = DecodeErrorStatus(401, body);
  return absl::UnauthenticatedError(
      absl::StrCat("the apiserver rejected the credential of exec plugin ",
                   config_.exec->config().command, ": ", status.message()));
}

HttpRequest KubeClient::Prepare(
    const std::string& method, const std::string& path,
    const std::string& body, const std::string& content_type,
    absl::Duration timeout, absl::Time deadline,
    const std::shared_ptr<const ExecCredential>& credential) const {
  HttpRequest request = Request(method, path, credential);
  request.timeout = timeout;
  request.deadline = deadline;
  request.max_response_bytes = limits_.max_response_bytes;
  if (method != "GET") {
    request.headers.emplace_back("Content-Type", content_type);
    request.body = body;
  }
  return request;
}

absl::StatusOr<HttpResponse> KubeClient::Judge(
    HttpResponse response,
    const std::shared_ptr<const ExecCredential>& credential, int attempt,
    bool* again) const {
  *again = false;
  if (response.status == 401 && credential != nullptr) {
    absl::Status refused = Refused(credential, response.body);
    // The plugin's credential expired early or was revoked: send the
    // request once more with what the plugin prints now. The apiserver
    // authenticates before anything else, so the refused request did
    // nothing.
    *again = attempt == 1;
    return refused;
  }
  if (!IsSuccess(response.status)) {
    return DecodeErrorStatus(response.status, response.body);
  }
  return response;
}

absl::StatusOr<HttpResponse> KubeClient::Call(const std::string& method,
                                              const std::string& path,
                                              const std::string& body,
                                              const std::string& content_type,
                                              absl::Duration timeout,
                                              size_t max_response_bytes) {
  // Before any credential work: the plugin's time is the call's.
  const absl::Time deadline = absl::Now() + timeout;
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(std::shared_ptr<const ExecCredential> credential,
                     Credential());
    HttpRequest request = Prepare(method, path, body, content_type, timeout,
                                  deadline, credential);
    if (max_response_bytes != 0) {
      request.max_response_bytes = max_response_bytes;
    }
    absl::StatusOr<HttpResponse> answer = http_.Do(request);
    if (IsResponseTooLarge(answer.status()) && max_response_bytes == 0) {
      return TooLarge(absl::StrCat("the answer to ", method, " ", path),
                      limits_.max_response_bytes, kMaxResponseBytesFlag);
    }
    ASSIGN_OR_RETURN(HttpResponse response, std::move(answer));
    bool again = false;
    absl::StatusOr<HttpResponse> judged =
        Judge(std::move(response), credential, attempt, &again);
    if (!again) return judged;
  }
}

void KubeClient::StartAsync(AsyncCall call) {
  {
    absl::MutexLock lock(&async_mu_);
    ++async_calls_;
  }
  CallAsync(std::make_shared<AsyncCall>(std::move(call)));
}

void KubeClient::CallAsync(std::shared_ptr<AsyncCall> call) {
  std::shared_ptr<const ExecCredential> credential;
  if (config_.exec != nullptr) {
    credential = config_.exec->Current();
    if (credential == nullptr) {
      AwaitCredential(std::move(call));
      return;
    }
  }
  SendAsync(std::move(call), std::move(credential));
}

void KubeClient::SendAsync(std::shared_ptr<AsyncCall> call,
                           std::shared_ptr<const ExecCredential> credential) {
  HttpRequest request =
      Prepare(call->method, call->path, call->body, call->content_type,
              call->timeout, call->deadline, credential);
  http_.Send(std::move(request),
             [this, call = std::move(call), credential = std::move(credential)](
                 absl::StatusOr<HttpResponse> response) mutable {
               if (!response.ok()) {
                 Finish(*call, IsResponseTooLarge(response.status())
                                   ? TooLarge(absl::StrCat("the answer to ",
                                                           call->method, " ",
                                                           call->path),
                                              limits_.max_response_bytes,
                                              kMaxResponseBytesFlag)
                                   : response.status());
                 return;
               }
               bool again = false;
               absl::Status judged = Judge(*std::move(response), credential,
                                           call->attempt, &again)
                                         .status();
               if (again) {
                 // Refused (401): the plugin's next credential, fetched off
                 // this thread; the deadline stays the call's.
                 ++call->attempt;
                 CallAsync(std::move(call));
                 return;
               }
               Finish(*call, std::move(judged));
             });
}

void KubeClient::AwaitCredential(std::shared_ptr<AsyncCall> call) {
  absl::MutexLock lock(&async_mu_);
  awaiting_credential_.push_back(std::move(call));
  if (!credential_thread_.joinable()) {
    credential_thread_ = std::thread([this] { FetchCredentials(); });
  }
}

void KubeClient::FetchCredentials() {
  while (true) {
    std::vector<std::shared_ptr<AsyncCall>> calls;
    {
      absl::MutexLock lock(&async_mu_);
      async_mu_.Await(absl::Condition(
          +[](KubeClient* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->async_mu_) {
            return !c->awaiting_credential_.empty() || c->stopping_;
          },
          this));
      if (awaiting_credential_.empty()) return;  // stopping
      calls.swap(awaiting_credential_);
    }
    // Calls out of time already are not sent, and do not run the plugin.
    const absl::Time now = absl::Now();
    std::vector<std::shared_ptr<AsyncCall>> live;
    for (std::shared_ptr<AsyncCall>& call : calls) {
      if (call->deadline > now) {
        live.push_back(std::move(call));
        continue;
      }
      Finish(*call,
             NotSent(absl::StrCat(
                 call->method, " ", call->path,
                 ": not sent: its deadline passed while it waited for a "
                 "credential from exec plugin ",
                 config_.exec->config().command)));
    }
    if (live.empty()) continue;
    absl::StatusOr<std::shared_ptr<const ExecCredential>> credential =
        config_.exec->Get();
    for (std::shared_ptr<AsyncCall>& call : live) {
      if (!credential.ok()) {
        Finish(*call, credential.status());
        continue;
      }
      // HttpClient refuses it (NotSent) if its deadline passed meanwhile.
      SendAsync(std::move(call), *credential);
    }
  }
}

void KubeClient::Finish(AsyncCall& call, absl::Status status) {
  Done done = std::move(call.done);
  done(std::move(status));
  absl::MutexLock lock(&async_mu_);
  --async_calls_;
}

absl::StatusOr<std::string> KubeClient::Get(const std::string& path,
                                            absl::Duration timeout,
                                            size_t max_response_bytes) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("GET", path, "", "application/json", timeout,
                        max_response_bytes));
  return std::move(response.body);
}

absl::StatusOr<std::string> KubeClient::ServerVersion(absl::Duration timeout) {
  ASSIGN_OR_RETURN(std::string body, Get("/version", timeout));
  return DecodeGitVersion(body);
}

absl::StatusOr<TokenReview> KubeClient::ReviewToken(absl::string_view token,
                                                    absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("POST", kTokenReviewsPath, TokenReviewBody(token),
                        "application/json", timeout));
  return DecodeTokenReview(response.body);
}

absl::StatusOr<AccessReview> KubeClient::ReviewAccess(
    const NonResourceAccess& access, absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("POST", kSubjectAccessReviewsPath,
                        SubjectAccessReviewBody(access), "application/json",
                        timeout));
  return DecodeAccessReview(response.body);
}

template <typename T>
absl::StatusOr<std::string> KubeClient::List(
    const std::string& path, const ListOptions& options,
    const DecodeContext<T>& context,
    absl::FunctionRef<void(ObjectList<T>&)> page) {
  std::string continue_token;
  std::string resource_version;
  do {
    std::string url = absl::StrCat(path, "?limit=", options.page_size,
                                   Query(options));
    if (!continue_token.empty()) {
      absl::StrAppend(&url, "&continue=", UrlEncode(continue_token));
    }
    ObjectList<T> decoded;
    {
      // The body is let go before the page is handled.
      ASSIGN_OR_RETURN(HttpResponse response, Call("GET", url));
      ASSIGN_OR_RETURN(decoded, DecodeList<T>(response.body, context));
    }
    resource_version = decoded.resource_version;
    continue_token = decoded.continue_token;
    page(decoded);
  } while (!continue_token.empty());
  return resource_version;
}

template <typename T>
absl::StatusOr<ObjectList<T>> KubeClient::List(
    const std::string& path, const ListOptions& options,
    const DecodeContext<T>& context) {
  ObjectList<T> all;
  ASSIGN_OR_RETURN(all.resource_version,
                   List<T>(path, options, context, [&](ObjectList<T>& page) {
                     all.items.insert(
                         all.items.end(),
                         std::make_move_iterator(page.items.begin()),
                         std::make_move_iterator(page.items.end()));
                     all.rejected.insert(
                         all.rejected.end(),
                         std::make_move_iterator(page.rejected.begin()),
                         std::make_move_iterator(page.rejected.end()));
                   }));
  return all;
}

absl::StatusOr<ObjectList<Pod>> KubeClient::ListPods(
    const ListOptions& options) {
  return List<Pod>(kPodsPath, options);
}

absl::StatusOr<std::string> KubeClient::ListPods(
    const ListOptions& options,
    absl::FunctionRef<void(ObjectList<Pod>&)> page) {
  return List<Pod>(kPodsPath, options, {}, page);
}

absl::StatusOr<ObjectList<Node>> KubeClient::ListNodes(
    const ListOptions& options) {
  return List<Node>(kNodesPath, options,
                    {.annotations = options.node_annotations});
}

absl::StatusOr<std::string> KubeClient::ListNodes(
    const ListOptions& options,
    absl::FunctionRef<void(ObjectList<Node>&)> page) {
  return List<Node>(kNodesPath, options,
                    {.annotations = options.node_annotations}, page);
}

absl::StatusOr<ObjectList<Namespace>> KubeClient::ListNamespaces(
    const ListOptions& options) {
  return List<Namespace>(kNamespacesPath, options);
}

absl::StatusOr<std::string> KubeClient::ListNamespaces(
    const ListOptions& options,
    absl::FunctionRef<void(ObjectList<Namespace>&)> page) {
  return List<Namespace>(kNamespacesPath, options, {}, page);
}

template <typename T>
absl::Status KubeClient::Watch(
    const std::string& path, const ListOptions& options,
    const DecodeContext<T>& context, const std::string& resource_version,
    const std::function<bool(WatchEvent<T>&)>& on_event,
    const std::atomic<bool>* cancel, absl::Duration timeout) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ExecCredential> credential,
                   Credential());
  HttpRequest request =
      Request("GET",
              absl::StrCat(path, "?watch=1&allowWatchBookmarks=true",
                           "&resourceVersion=", UrlEncode(resource_version),
                           "&timeoutSeconds=", absl::ToInt64Seconds(timeout),
                           Query(options)),
              credential);
  // The server ends the watch after `timeout`; the client allows a margin.
  request.timeout = timeout + absl::Seconds(30);

  std::string buffer;
  absl::Status stream_error;
  bool stopped_by_callback = false;
  auto event_too_large = [&] {
    return TooLarge(absl::StrCat("an event of the watch of ", path),
                    limits_.max_watch_event_bytes, kMaxWatchEventBytesFlag);
  };
  auto on_data = [&](absl::string_view chunk) {
    buffer.append(chunk.data(), chunk.size());
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      absl::string_view line(buffer.data() + start, nl - start);
      if (line.size() > limits_.max_watch_event_bytes) {
        stream_error = event_too_large();
        return false;
      }
      if (line.empty()) continue;
      absl::StatusOr<WatchEvent<T>> event = DecodeWatchEvent<T>(line, context);
      if (!event.ok()) {
        stream_error = event.status();
        return false;
      }
      if (event->type == WatchEventType::kError) {
        stream_error = event->error;
        return false;
      }
      if (!on_event(*event)) {
        stopped_by_callback = true;
        return false;
      }
    }
    buffer.erase(0, start);
    // The event being read, its end not seen yet.
    if (buffer.size() > limits_.max_watch_event_bytes) {
      stream_error = event_too_large();
      return false;
    }
    return true;
  };
  absl::StatusOr<long> status =  // NOLINT(runtime/int)
      http_.Stream(request, on_data, cancel);
  // The informer watches again after an error, with the plugin's next
  // credential.
  if (status.ok() && *status == 401 && credential != nullptr) {
    return Refused(credential, buffer);
  }
  if (!stream_error.ok()) return stream_error;
  if (stopped_by_callback) return absl::CancelledError("watch stopped");
  if (!status.ok()) return status.status();
  if (!IsSuccess(*status)) return DecodeErrorStatus(*status, buffer);
  return absl::OkStatus();
}

absl::Status KubeClient::WatchPods(
    const ListOptions& options, const std::string& resource_version,
    const std::function<bool(WatchEvent<Pod>&)>& on_event,
    const std::atomic<bool>* cancel, absl::Duration timeout) {
  return Watch<Pod>(kPodsPath, options, {}, resource_version, on_event, cancel,
                    timeout);
}

absl::Status KubeClient::WatchNodes(
    const ListOptions& options, const std::string& resource_version,
    const std::function<bool(WatchEvent<Node>&)>& on_event,
    const std::atomic<bool>* cancel, absl::Duration timeout) {
  return Watch<Node>(kNodesPath, options,
                     {.annotations = options.node_annotations},
                     resource_version, on_event, cancel, timeout);
}

absl::Status KubeClient::WatchNamespaces(
    const ListOptions& options, const std::string& resource_version,
    const std::function<bool(WatchEvent<Namespace>&)>& on_event,
    const std::atomic<bool>* cancel, absl::Duration timeout) {
  return Watch<Namespace>(kNamespacesPath, options, {}, resource_version,
                          on_event, cancel, timeout);
}

absl::StatusOr<ObjectList<Workload>> KubeClient::ListWorkloads(
    WorkloadKind kind, const ListOptions& options) {
  return List<Workload>(WorkloadPath(kind), options, kind);
}

absl::StatusOr<std::string> KubeClient::ListWorkloads(
    WorkloadKind kind, const ListOptions& options,
    absl::FunctionRef<void(ObjectList<Workload>&)> page) {
  return List<Workload>(WorkloadPath(kind), options, kind, page);
}

absl::Status KubeClient::WatchWorkloads(
    WorkloadKind kind, const ListOptions& options,
    const std::string& resource_version,
    const std::function<bool(WatchEvent<Workload>&)>& on_event,
    const std::atomic<bool>* cancel, absl::Duration timeout) {
  return Watch<Workload>(WorkloadPath(kind), options, kind, resource_version,
                         on_event, cancel, timeout);
}

namespace {

std::string BindingPath(const Pod& pod) {
  return absl::StrCat("/api/v1/namespaces/", pod.namespace_, "/pods/",
                      pod.name, "/binding");
}

std::string BindingBody(const Pod& pod, const std::string& node_name) {
  return absl::StrCat(
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":",
      JsonQuote(pod.name), ",\"namespace\":", JsonQuote(pod.namespace_),
      ",\"uid\":", JsonQuote(pod.uid),
      "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":",
      JsonQuote(node_name), "}}");
}

std::string EventsPath(const PodEvent& event) {
  return absl::StrCat("/api/v1/namespaces/", event.pod_namespace, "/events");
}

std::string EventBody(const PodEvent& event) {
  const absl::Time now =
      event.time == absl::InfinitePast() ? absl::Now() : event.time;
  std::string timestamp = JsonQuote(
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone()));
  // Event names only need to be unique; kube's recorder uses the object's
  // name and a hex timestamp the same way.
  std::string name = !event.name.empty()
                         ? event.name
                         : absl::StrCat(event.pod_name, ".",
                                        absl::Hex(absl::ToUnixNanos(now)));
  return absl::StrCat(
      "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":",
      JsonQuote(name), ",\"namespace\":", JsonQuote(event.pod_namespace),
      "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":",
      JsonQuote(event.kind), ",\"name\":", JsonQuote(event.pod_name),
      // A Node is cluster-scoped: its involvedObject has no namespace.
      event.kind == "Pod"
          ? absl::StrCat(",\"namespace\":", JsonQuote(event.pod_namespace))
          : "",
      event.pod_uid.empty()
          ? ""
          : absl::StrCat(",\"uid\":", JsonQuote(event.pod_uid)),
      "},\"type\":", JsonQuote(event.type),
      ",\"reason\":", JsonQuote(event.reason),
      ",\"action\":", JsonQuote(event.action),
      ",\"message\":", JsonQuote(event.message),
      ",\"source\":{\"component\":", JsonQuote(event.reporting_component),
      "},\"reportingComponent\":", JsonQuote(event.reporting_component),
      ",\"reportingInstance\":", JsonQuote(event.reporting_instance),
      ",\"firstTimestamp\":", timestamp, ",\"lastTimestamp\":", timestamp,
      ",\"count\":1}");
}

}  // namespace

absl::Status KubeClient::Bind(const Pod& pod, const std::string& node_name,
                              absl::Duration timeout) {
  return Call("POST", BindingPath(pod), BindingBody(pod, node_name),
              "application/json", timeout)
      .status();
}

void KubeClient::BindAsync(const Pod& pod, const std::string& node_name,
                           absl::Duration timeout, Done done) {
  StartAsync({.method = "POST",
              .path = BindingPath(pod),
              .body = BindingBody(pod, node_name),
              .content_type = "application/json",
              .timeout = timeout,
              .deadline = absl::Now() + timeout,
              .done = std::move(done)});
}

absl::Status KubeClient::CreateEvent(const PodEvent& event) {
  return Call("POST", EventsPath(event), EventBody(event)).status();
}

void KubeClient::CreateEventAsync(const PodEvent& event, Done done) {
  StartAsync({.method = "POST",
              .path = EventsPath(event),
              .body = EventBody(event),
              .content_type = "application/json",
              .timeout = kDefaultRequestTimeout,
              .deadline = absl::Now() + kDefaultRequestTimeout,
              .done = std::move(done)});
}

absl::Status KubeClient::PatchPodCondition(const std::string& namespace_,
                                           const std::string& name,
                                           const PodCondition& condition,
                                           absl::Duration timeout) {
  std::string now = JsonQuote(absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()));
  std::string body = absl::StrCat(
      "{\"status\":{\"conditions\":[{\"type\":", JsonQuote(condition.type),
      ",\"status\":", JsonQuote(condition.status),
      ",\"reason\":", JsonQuote(condition.reason),
      ",\"message\":", JsonQuote(condition.message),
      ",\"lastProbeTime\":null,\"lastTransitionTime\":", now, "}]}}");
  return Call("PATCH",
              absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/", name,
                           "/status"),
              body, "application/strategic-merge-patch+json", timeout)
      .status();
}

absl::Status KubeClient::BindVolume(const VolumeBindings::Bind& bind,
                                    absl::Duration timeout) {
  const ClaimRef& c = bind.claim;
  std::string patch = absl::StrCat(
      "{\"metadata\":{\"resourceVersion\":", JsonQuote(bind.volume_version),
      bind.prebound
          ? ""
          : ",\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":"
            "\"yes\"}",
      "},\"spec\":{\"claimRef\":{\"kind\":\"PersistentVolumeClaim\","
      "\"apiVersion\":\"v1\",\"namespace\":",
      JsonQuote(c.namespace_), ",\"name\":", JsonQuote(c.name),
      ",\"uid\":", JsonQuote(c.uid),
      ",\"resourceVersion\":", JsonQuote(bind.claim_version), "}}}");
  return MergePatch(
      absl::StrCat("/api/v1/persistentvolumes/", UrlEncode(bind.volume)),
      patch, timeout);
}

absl::Status KubeClient::SelectNode(const VolumeBindings::Provision& claim,
                                    const std::string& node,
                                    absl::Duration timeout) {
  std::string patch = absl::StrCat(
      "{\"metadata\":{\"resourceVersion\":", JsonQuote(claim.claim_version),
      ",\"annotations\":{\"volume.kubernetes.io/selected-node\":",
      JsonQuote(node), "}}}");
  return MergePatch(
      absl::StrCat("/api/v1/namespaces/", UrlEncode(claim.namespace_),
                   "/persistentvolumeclaims/", UrlEncode(claim.name)),
      patch, timeout);
}

absl::Status KubeClient::MergePatch(const std::string& path,
                                    const std::string& patch,
                                    absl::Duration timeout) {
  return Call("PATCH", path, patch, "application/merge-patch+json", timeout)
      .status();
}

absl::Status KubeClient::DeletePod(const std::string& namespace_,
                                   const std::string& name,
                                   const std::string& uid,
                                   absl::Duration timeout) {
  return Call("DELETE",
              absl::StrCat("/api/v1/namespaces/", UrlEncode(namespace_),
                           "/pods/", UrlEncode(name)),
              absl::StrCat("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                           "\"preconditions\":{\"uid\":",
                           JsonQuote(uid), "}}"),
              "application/json", timeout)
      .status();
}

absl::Status KubeClient::EvictPod(const std::string& namespace_,
                                  const std::string& name,
                                  const std::string& uid,
                                  absl::Duration timeout) {
  return Call("POST",
              absl::StrCat("/api/v1/namespaces/", UrlEncode(namespace_),
                           "/pods/", UrlEncode(name), "/eviction"),
              absl::StrCat("{\"apiVersion\":\"policy/v1\",\"kind\":"
                           "\"Eviction\",\"metadata\":{\"name\":",
                           JsonQuote(name),
                           ",\"namespace\":", JsonQuote(namespace_),
                           "},\"deleteOptions\":{\"preconditions\":{"
                           "\"uid\":",
                           JsonQuote(uid), "}}}"),
              "application/json", timeout)
      .status();
}

absl::Status KubeClient::SetNominatedNode(const std::string& namespace_,
                                          const std::string& name,
                                          const std::string& node,
                                          absl::Duration timeout) {
  return MergePatch(
      absl::StrCat("/api/v1/namespaces/", UrlEncode(namespace_), "/pods/",
                   UrlEncode(name), "/status"),
      absl::StrCat("{\"status\":{\"nominatedNodeName\":",
                   node.empty() ? "null" : JsonQuote(node), "}}"),
      timeout);
}

absl::StatusOr<Pod> KubeClient::GetPod(const std::string& namespace_,
                                       const std::string& name) {
  ASSIGN_OR_RETURN(
      HttpResponse response,
      Call("GET", absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/",
                               name)));
  return DecodePod(response.body);
}

absl::StatusOr<Lease> KubeClient::GetLease(const std::string& namespace_,
                                           const std::string& name,
                                           absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("GET",
                        absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                                     namespace_, "/leases/", name),
                        "", "application/json", timeout));
  return DecodeLease(response.body);
}

absl::StatusOr<Lease> KubeClient::CreateLease(const Lease& lease,
                                              absl::Duration timeout) {
  Lease fresh = lease;
  fresh.resource_version.clear();
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("POST",
                        absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                                     lease.namespace_, "/leases"),
                        LeaseBody(fresh), "application/json", timeout));
  return DecodeLease(response.body);
}

absl::StatusOr<Lease> KubeClient::UpdateLease(const Lease& lease,
                                              absl::Duration timeout) {
  ASSIGN_OR_RETURN(HttpResponse response,
                   Call("PUT",
                        absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                                     lease.namespace_, "/leases/", lease.name),
                        LeaseBody(lease), "application/json", timeout));
  return DecodeLease(response.body);
}

// Every kind's lists and watches, for informer.h's sources and the
// explain command.
#define MS_INSTANTIATE_LIST_WATCH(T)                                    \
  template absl::StatusOr<ObjectList<T>> KubeClient::List<T>(           \
      const std::string&, const ListOptions&, const DecodeContext<T>&); \
  template absl::StatusOr<std::string> KubeClient::List<T>(             \
      const std::string&, const ListOptions&, const DecodeContext<T>&,  \
      absl::FunctionRef<void(ObjectList<T>&)>);                         \
  template absl::Status KubeClient::Watch<T>(                           \
      const std::string&, const ListOptions&, const DecodeContext<T>&,  \
      const std::string&, const std::function<bool(WatchEvent<T>&)>&,   \
      const std::atomic<bool>*, absl::Duration);
MS_INSTANTIATE_LIST_WATCH(Pod)
MS_INSTANTIATE_LIST_WATCH(Node)
MS_INSTANTIATE_LIST_WATCH(Namespace)
MS_INSTANTIATE_LIST_WATCH(Workload)
MS_INSTANTIATE_LIST_WATCH(PersistentVolumeClaim)
MS_INSTANTIATE_LIST_WATCH(PersistentVolume)
MS_INSTANTIATE_LIST_WATCH(StorageClass)
MS_INSTANTIATE_LIST_WATCH(CsiNode)
MS_INSTANTIATE_LIST_WATCH(CsiDriver)
MS_INSTANTIATE_LIST_WATCH(CsiStorageCapacity)
MS_INSTANTIATE_LIST_WATCH(DeviceClass)
MS_INSTANTIATE_LIST_WATCH(PodDisruptionBudget)
#undef MS_INSTANTIATE_LIST_WATCH

}  // namespace ms::kube
