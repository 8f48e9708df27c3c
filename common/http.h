// HttpClient: the one HTTP client of the project, over libcurl.
//
// Used by kube/ to talk to kube-apiserver and by metrics/ to query metrics
// backends. No libcurl type crosses this header. A client owns a small pool
// of connections (curl easy handles), so concurrent requests run in parallel
// and sequential ones reuse their TCP and TLS connections. It speaks
// HTTP/1.1, one request per connection at a time.
//
// Do() blocks its caller; Send() does not: every request sent that way is
// carried by one I/O thread of the client's (started on the first Send),
// which keeps them all in flight through libcurl's multi interface and
// serves every answer that is ready after one poll.
//
// Deadlines: a request may carry an absolute deadline (HttpRequest::
// deadline), fixed by whoever queued it, so that the time it spends before
// it leaves (waiting for a credential, or for a busy I/O thread) is taken
// from its time, not added to it. When it leaves, its timeout is the
// smaller of `timeout` and what is left until `deadline`; a request whose
// deadline has passed before it could leave is not sent at all, and fails
// with NotSent() (Cancelled): unlike DeadlineExceeded, which may come after
// the server acted on the request, it certainly had no effect.
//
// Thread-safe: Do(), Stream() and Send() may be called from any number of
// threads.
//
// Failure contract: a transport failure returns a non-OK status —
// DeadlineExceeded when the request's timeout elapsed, Unavailable when the
// server could not be reached or the connection broke, InvalidArgument for a
// malformed URL or unreadable TLS material. An HTTP error status (4xx, 5xx) is
// NOT a transport failure: it comes back as an OK HttpResponse whose `status`
// the caller interprets. A request not sent because its deadline had
// passed is Cancelled (IsNotSent). A body over HttpRequest::max_response_bytes is
// ResourceExhausted, marked so that IsResponseTooLarge() tells it from
// other ResourceExhausted statuses (an HTTP 429 a caller maps to it).
#ifndef METRICS_SCHEDULER_COMMON_HTTP_H_
#define METRICS_SCHEDULER_COMMON_HTTP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ms {

// How to verify the server and, optionally, present a client certificate.
// Each PEM item is given either as a file path or inline; inline wins.
struct TlsOptions {
  std::string ca_file;
  std::string ca_pem;
  std::string client_cert_file;
  std::string client_cert_pem;
  std::string client_key_file;
  std::string client_key_pem;
  // Skip verification of the server's certificate. Off unless explicitly set.
  bool insecure_skip_verify = false;
};

// Which proxy requests go through. The default is libcurl's: the
// http_proxy, https_proxy and no_proxy environment variables.
struct ProxyOptions {
  bool from_environment = true;  // when `url` is empty
  std::string url;               // an explicit proxy; wins
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Whole-request timeout; for Stream(), the longest the stream may live.
  absl::Duration timeout = absl::Seconds(30);
  // Do() and Send(): the latest the request may leave, and end (see
  // "Deadlines" above). InfiniteFuture: `timeout` alone, counted from when
  // the request leaves.
  absl::Time deadline = absl::InfiniteFuture();
  // Do() only: a response body longer than this fails the request with
  // ResourceExhausted, before more of it is held in memory (after
  // decompression). 0: no limit.
  size_t max_response_bytes = 0;
  // A client certificate and key (PEM) for this request, in place of the
  // client's TlsOptions' ones (a credential that rotates); "": the
  // client's. Connections made with other ones are not reused for it.
  std::string client_cert_pem;
  std::string client_key_pem;
};

struct HttpResponse {
  long status = 0;  // NOLINT(runtime/int): libcurl's type
  std::string body;
  std::string content_type;
};

// Whether `status` is (or was copied from) the ResourceExhausted of an
// answer over HttpRequest::max_response_bytes, whatever its message says
// now: a caller may restate the message with ResponseTooLarge().
bool IsResponseTooLarge(const absl::Status& status);
// A ResourceExhausted status with `message` that IsResponseTooLarge()
// recognises.
absl::Status ResponseTooLarge(absl::string_view message);

// Whether `status` is (or was copied from) NotSent(): the request was never
// sent, its deadline having passed first.
bool IsNotSent(const absl::Status& status);
// A Cancelled status with `message` that IsNotSent() recognises. For
// callers that queue requests of their own (kube/client.h) and give up on
// one before it reaches Send().
absl::Status NotSent(absl::string_view message);

class HttpClient {
 public:
  explicit HttpClient(TlsOptions tls = {}, ProxyOptions proxy = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request and reads the whole response.
  absl::StatusOr<HttpResponse> Do(const HttpRequest& request);

  // Sends one request without waiting for it: `done` gets what Do() would
  // have returned, on the client's I/O thread. `done` must not block (the
  // other requests' answers wait meanwhile); it may Send() again. The
  // destructor waits until every request sent has been answered (or has
  // timed out) and its `done` has returned.
  using Done = std::function<void(absl::StatusOr<HttpResponse>)>;
  void Send(HttpRequest request, Done done);

  // Sends one request and hands the response body to `on_data` as it
  // arrives, chunk by chunk (chunks are not aligned to lines). Returns when
  // the server ends the response, when `on_data` returns false, or when
  // `*cancel` becomes true (checked at least every 200 ms); the last two
  // return Cancelled. On success returns the HTTP status; a non-2xx status's
  // body is passed to `on_data` like any other.
  absl::StatusOr<long> Stream(  // NOLINT(runtime/int)
      const HttpRequest& request,
      const std::function<bool(absl::string_view)>& on_data,
      const std::atomic<bool>* cancel);

 private:
  class Handle;
  class Io;
  struct Transfer;
  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> handle);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_HTTP_H_
