#include "common/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ms {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

absl::Status CurlError(CURLcode code, const char* detail,
                       const std::string& url) {
  std::string msg = absl::StrCat(url, ": ", *detail ? detail
                                                    : curl_easy_strerror(code));
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(msg);
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_WRITE_ERROR:
      return absl::CancelledError(msg);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CIPHER:
      return absl::InvalidArgumentError(msg);
    case CURLE_PEER_FAILED_VERIFICATION:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

struct BodyContext {
  std::string* body;
  size_t max_bytes;  // 0: no limit
  bool too_large = false;
};

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<BodyContext*>(user);
  if (ctx->max_bytes != 0 && size * n > ctx->max_bytes - ctx->body->size()) {
    ctx->too_large = true;
    return 0;  // makes libcurl abort with CURLE_WRITE_ERROR
  }
  ctx->body->append(data, size * n);
  return size * n;
}

struct StreamContext {
  const std::function<bool(absl::string_view)>* on_data;
  const std::atomic<bool>* cancel;
  bool stopped = false;
};

size_t StreamBody(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<StreamContext*>(user);
  if (!(*ctx->on_data)(absl::string_view(data, size * n))) {
    ctx->stopped = true;
    return 0;  // makes libcurl abort with CURLE_WRITE_ERROR
  }
  return size * n;
}

int StreamProgress(void* user, curl_off_t, curl_off_t, curl_off_t,
                   curl_off_t) {
  auto* ctx = static_cast<StreamContext*>(user);
  if (ctx->cancel != nullptr && ctx->cancel->load()) {
    ctx->stopped = true;
    return 1;
  }
  return 0;
}

void SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

// The payloads that mark an answer over max_response_bytes, and a request
// not sent.
constexpr char kTooLargeUrl[] = "metrics-scheduler/http/response-too-large";
constexpr char kNotSentUrl[] = "metrics-scheduler/http/not-sent";

// Fits `request`'s timeout into what is left until its deadline, as it
// leaves; NotSent when nothing is left.
absl::Status FitToDeadline(HttpRequest& request) {
  if (request.deadline == absl::InfiniteFuture()) return absl::OkStatus();
  const absl::Duration left = request.deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return NotSent(absl::StrCat(
        request.method, " ", request.url,
        ": not sent: its deadline passed ", absl::FormatDuration(-left),
        " before it could leave"));
  }
  request.timeout = std::min(request.timeout, left);
  return absl::OkStatus();
}

}  // namespace

bool IsNotSent(const absl::Status& status) {
  return absl::IsCancelled(status) &&
         status.GetPayload(kNotSentUrl).has_value();
}

absl::Status NotSent(absl::string_view message) {
  absl::Status status = absl::CancelledError(message);
  status.SetPayload(kNotSentUrl, absl::Cord());
  return status;
}

bool IsResponseTooLarge(const absl::Status& status) {
  return absl::IsResourceExhausted(status) &&
         status.GetPayload(kTooLargeUrl).has_value();
}

absl::Status ResponseTooLarge(absl::string_view message) {
  absl::Status status = absl::ResourceExhaustedError(message);
  status.SetPayload(kTooLargeUrl, absl::Cord());
  return status;
}

class HttpClient::Handle {
 public:
  Handle() : curl_(curl_easy_init()) {}
  ~Handle() { curl_easy_cleanup(curl_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  CURL* get() const { return curl_; }

 private:
  CURL* curl_;
};

struct HttpClient::State {
  TlsOptions tls;
  ProxyOptions proxy;
  absl::Mutex mu;
  std::vector<std::unique_ptr<Handle>> idle ABSL_GUARDED_BY(mu);
  std::unique_ptr<Io> io ABSL_GUARDED_BY(mu);  // from the first Send()
};

HttpClient::HttpClient(TlsOptions tls, ProxyOptions proxy)
    : state_(std::make_unique<State>()) {
  GlobalInit();
  state_->tls = std::move(tls);
  state_->proxy = std::move(proxy);
}


std::unique_ptr<HttpClient::Handle> HttpClient::Acquire() {
  {
    absl::MutexLock lock(&state_->mu);
    if (!state_->idle.empty()) {
      std::unique_ptr<Handle> h = std::move(state_->idle.back());
      state_->idle.pop_back();
      return h;
    }
  }
  return std::make_unique<Handle>();
}

void HttpClient::Release(std::unique_ptr<Handle> handle) {
  constexpr size_t kMaxIdle = 64;
  absl::MutexLock lock(&state_->mu);
  if (state_->idle.size() < kMaxIdle) state_->idle.push_back(std::move(handle));
}

namespace {

// Sets everything but the body callbacks. Returns the header list the caller
// frees after the transfer.
curl_slist* Prepare(CURL* curl, const HttpRequest& request,
                    const TlsOptions& tls, const ProxyOptions& proxy,
                    char* error_buffer) {
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  // HTTP/1.1 even where the server offers HTTP/2: each connection of the
  // pool carries one request at a time, so HTTP/2's multiplexing buys
  // nothing, and its framing and header compression cost about 15 % of
  // the scheduler's CPU per pod (docs/benchmarks.md).
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION,
                   static_cast<long>(CURL_HTTP_VERSION_1_1));
  int64_t timeout_ms = absl::ToInt64Milliseconds(request.timeout);
  if (timeout_ms <= 0) timeout_ms = 1;
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min<int64_t>(timeout_ms, 10000)));

  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    if (request.method == "POST") {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
    } else {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  }

  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }
  // libcurl adds "Expect: 100-continue" to large POSTs; the servers we talk
  // to answer at once, so the extra round trip only costs time.
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  if (!tls.ca_pem.empty()) {
    SetBlob(curl, CURLOPT_CAINFO_BLOB, tls.ca_pem);
  } else if (!tls.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
  }
  if (!request.client_cert_pem.empty()) {
    SetBlob(curl, CURLOPT_SSLCERT_BLOB, request.client_cert_pem);
  } else if (!tls.client_cert_pem.empty()) {
    SetBlob(curl, CURLOPT_SSLCERT_BLOB, tls.client_cert_pem);
  } else if (!tls.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, tls.client_cert_file.c_str());
  }
  if (!request.client_key_pem.empty()) {
    SetBlob(curl, CURLOPT_SSLKEY_BLOB, request.client_key_pem);
  } else if (!tls.client_key_pem.empty()) {
    SetBlob(curl, CURLOPT_SSLKEY_BLOB, tls.client_key_pem);
  } else if (!tls.client_key_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY, tls.client_key_file.c_str());
  }
  if (tls.insecure_skip_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!proxy.url.empty()) {
    curl_easy_setopt(curl, CURLOPT_PROXY, proxy.url.c_str());
  } else if (!proxy.from_environment) {
    curl_easy_setopt(curl, CURLOPT_PROXY, "");  // none, whatever the env
  }
  return headers;
}

}  // namespace

namespace {

// Sets up the transfer of a whole response into `*response`, its body
// bounded by the request's max_response_bytes.
void ReadWhole(CURL* curl, const HttpRequest& request, BodyContext* body) {
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
  // Refused at once when the Content-Length says so (0: no limit).
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(request.max_response_bytes));
}

// What a transfer set up by ReadWhole() came to.
absl::StatusOr<HttpResponse> Answer(CURL* curl, CURLcode code,
                                    const HttpRequest& request,
                                    const BodyContext& body,
                                    const char* error_buffer,
                                    HttpResponse response) {
  if (body.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return ResponseTooLarge(
        absl::StrCat(request.url, ": response larger than ",
                     request.max_response_bytes, " bytes"));
  }
  if (code != CURLE_OK) return CurlError(code, error_buffer, request.url);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* content_type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != nullptr) response.content_type = content_type;
  return response;
}

}  // namespace

absl::StatusOr<HttpResponse> HttpClient::Do(const HttpRequest& queued) {
  HttpRequest fitted;
  const HttpRequest* leaving = &queued;
  if (queued.deadline != absl::InfiniteFuture()) {
    fitted = queued;
    if (absl::Status s = FitToDeadline(fitted); !s.ok()) return s;
    leaving = &fitted;
  }
  const HttpRequest& request = *leaving;
  std::unique_ptr<Handle> handle = Acquire();
  CURL* curl = handle->get();
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_slist* headers =
      Prepare(curl, request, state_->tls, state_->proxy, error_buffer);
  HttpResponse response;
  BodyContext body{&response.body, request.max_response_bytes};
  ReadWhole(curl, request, &body);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  absl::StatusOr<HttpResponse> answer = Answer(
      curl, code, request, body, error_buffer, std::move(response));
  // A handle whose transfer failed may hold a broken connection: drop it.
  if (answer.ok()) Release(std::move(handle));
  return answer;
}

// A request sent with Send(), from Send() until its `done` has returned.
struct HttpClient::Transfer {
  HttpRequest request;
  Done done;
  std::unique_ptr<Handle> handle;
  curl_slist* headers = nullptr;
  HttpResponse response;
  BodyContext body{&response.body, 0};
  char error_buffer[CURL_ERROR_SIZE] = {0};
};

// The I/O thread of Send(): one libcurl multi handle, its connections kept
// between requests, and the transfers in flight.
class HttpClient::Io {
 public:
  Io(const TlsOptions& tls, const ProxyOptions& proxy)
      : tls_(tls), proxy_(proxy), multi_(curl_multi_init()) {
    // Connections kept open for the next requests: as many as are
    // commonly in flight at once.
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, 96L);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Io() {
    Stop();
    idle_.clear();
    curl_multi_cleanup(multi_);
  }

  // Returns once every request sent has been answered and its `done` has
  // returned, then ends the thread.
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    curl_multi_wakeup(multi_);
    if (thread_.joinable()) thread_.join();
  }

  void Send(std::unique_ptr<Transfer> transfer) {
    {
      absl::MutexLock lock(&mu_);
      submitted_.push_back(std::move(transfer));
    }
    curl_multi_wakeup(multi_);
  }

 private:
  void Start(std::unique_ptr<Transfer> t) {
    if (absl::Status late = FitToDeadline(t->request); !late.ok()) {
      t->done(std::move(late));
      return;
    }
    if (!idle_.empty()) {
      t->handle = std::move(idle_.back());
      idle_.pop_back();
    } else {
      t->handle = std::make_unique<Handle>();
    }
    CURL* curl = t->handle->get();
    t->headers = Prepare(curl, t->request, tls_, proxy_, t->error_buffer);
    t->body.max_bytes = t->request.max_response_bytes;
    ReadWhole(curl, t->request, &t->body);
    curl_easy_setopt(curl, CURLOPT_PRIVATE, t.get());
    curl_multi_add_handle(multi_, curl);
    t.release();  // owned by the multi handle until Finish()
    ++active_;
  }

  void Finish(CURL* curl, CURLcode code) {
    Transfer* raw = nullptr;
    curl_easy_getinfo(curl, CURLINFO_PRIVATE, &raw);
    std::unique_ptr<Transfer> t(raw);
    curl_multi_remove_handle(multi_, curl);
    --active_;
    curl_slist_free_all(t->headers);
    absl::StatusOr<HttpResponse> answer =
        Answer(curl, code, t->request, t->body, t->error_buffer,
               std::move(t->response));
    constexpr size_t kMaxIdle = 64;
    if (answer.ok() && idle_.size() < kMaxIdle) {
      idle_.push_back(std::move(t->handle));
    }
    t->done(std::move(answer));
  }

  void Loop() {
    std::vector<std::unique_ptr<Transfer>> batch;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        batch.swap(submitted_);
      }
      for (std::unique_ptr<Transfer>& t : batch) Start(std::move(t));
      batch.clear();
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* curl = msg->easy_handle;
        CURLcode code = msg->data.result;
        Finish(curl, code);
      }
      if (active_ == 0) {
        absl::MutexLock lock(&mu_);
        if (stopping_ && submitted_.empty()) return;
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }

  const TlsOptions& tls_;
  const ProxyOptions& proxy_;
  CURLM* const multi_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Transfer>> submitted_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The I/O thread's own.
  std::vector<std::unique_ptr<Handle>> idle_;
  size_t active_ = 0;
  std::thread thread_;
};

HttpClient::~HttpClient() {
  Io* io;
  {
    absl::MutexLock lock(&state_->mu);
    io = state_->io.get();
  }
  // Waits for the requests sent, whose `done` may still Send() through it.
  if (io != nullptr) io->Stop();
}

void HttpClient::Send(HttpRequest request, Done done) {
  auto t = std::make_unique<Transfer>();
  t->request = std::move(request);
  t->done = std::move(done);
  Io* io;
  {
    absl::MutexLock lock(&state_->mu);
    if (state_->io == nullptr) {
      state_->io = std::make_unique<Io>(state_->tls, state_->proxy);
    }
    io = state_->io.get();
  }
  io->Send(std::move(t));
}

absl::StatusOr<long> HttpClient::Stream(  // NOLINT(runtime/int)
    const HttpRequest& request,
    const std::function<bool(absl::string_view)>& on_data,
    const std::atomic<bool>* cancel) {
  // A stream holds its connection for long: it gets a handle of its own.
  Handle handle;
  CURL* curl = handle.get();
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_slist* headers =
      Prepare(curl, request, state_->tls, state_->proxy, error_buffer);
  StreamContext ctx{&on_data, cancel};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, StreamBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ctx);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, StreamProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &ctx);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (ctx.stopped) return absl::CancelledError("stream stopped");
  if (code != CURLE_OK) return CurlError(code, error_buffer, request.url);
  long status = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

}  // namespace ms
