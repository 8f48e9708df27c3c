#include "common/http.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

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

}  // namespace

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
};

HttpClient::HttpClient(TlsOptions tls, ProxyOptions proxy)
    : state_(std::make_unique<State>()) {
  GlobalInit();
  state_->tls = std::move(tls);
  state_->proxy = std::move(proxy);
}

HttpClient::~HttpClient() = default;

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

absl::StatusOr<HttpResponse> HttpClient::Do(const HttpRequest& request) {
  std::unique_ptr<Handle> handle = Acquire();
  CURL* curl = handle->get();
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_slist* headers =
      Prepare(curl, request, state_->tls, state_->proxy, error_buffer);
  HttpResponse response;
  BodyContext body{&response.body, request.max_response_bytes};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  // Refused at once when the Content-Length says so (0: no limit).
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(request.max_response_bytes));
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (body.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(request.url, ": response larger than ",
                     request.max_response_bytes, " bytes"));
  }
  if (code != CURLE_OK) {
    absl::Status status = CurlError(code, error_buffer, request.url);
    // A handle whose transfer failed may hold a broken connection: drop it.
    return status;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* content_type = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != nullptr) response.content_type = content_type;
  Release(std::move(handle));
  return response;
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
