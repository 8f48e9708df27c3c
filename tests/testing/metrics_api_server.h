// MetricsApiServer: a loopback HTTPS server answering the resource metrics
// API (metrics.k8s.io/v1beta1 nodes) as metrics-server does, registered with
// the testenv apiserver so that its aggregation layer proxies
// /apis/metrics.k8s.io/v1beta1 to it. The test control plane has no
// kubelets for a real metrics-server to scrape; this stands in for it
// behind the real apiserver, which is what the scheduler talks to.
//
// Registration is what a metrics-server install does: a Service (here an
// ExternalName `localhost`, port given by the APIService) and the
// APIService `v1beta1.metrics.k8s.io` with insecureSkipTLSVerify. There is
// one such APIService per cluster; a testenv's tests run one at a time
// (ctest RESOURCE_LOCK testenv_<plane>), and the destructor deletes it.
//
//   ASSERT_OK_AND_ASSIGN(auto metrics, MetricsApiServer::Start(env, ns, dir));
//   metrics->SetUsage("node-a", "1500m", "2Gi");
//   ... GET /apis/metrics.k8s.io/v1beta1/nodes through the apiserver ...
//
// Thread-safe.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_METRICS_API_SERVER_H_
#define METRICS_SCHEDULER_TESTS_TESTING_METRICS_API_SERVER_H_

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tests/testing/testenv.h"

namespace httplib {
class SSLServer;
}

namespace ms::testing {

class MetricsApiServer {
 public:
  // Serves on 127.0.0.1 with a certificate made in `dir` (which must
  // exist), creates the Service in `namespace_` and the APIService, and
  // waits until the apiserver reports the APIService Available.
  static absl::StatusOr<std::unique_ptr<MetricsApiServer>> Start(
      Testenv& env, const std::string& namespace_, const std::string& dir);
  ~MetricsApiServer();  // deletes the APIService, then stops serving
  MetricsApiServer(const MetricsApiServer&) = delete;
  MetricsApiServer& operator=(const MetricsApiServer&) = delete;

  // A node's usage as quantities ("1500m", "2Gi"), sampled now.
  void SetUsage(const std::string& node, const std::string& cpu,
                const std::string& memory);
  void RemoveUsage(const std::string& node);
  // While not 0, node lists are answered with this status (and a Status
  // body), as a failing metrics-server would answer.
  void FailWith(int status);
  // Node lists answered so far (any status).
  int node_lists() const;

 private:
  MetricsApiServer(Testenv& env, std::string namespace_);
  std::string NodeList() const;

  Testenv& env_;
  const std::string namespace_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
  mutable absl::Mutex mu_;
  struct Usage {
    std::string cpu, memory;
  };
  std::map<std::string, Usage> usage_ ABSL_GUARDED_BY(mu_);
  int fail_with_ ABSL_GUARDED_BY(mu_) = 0;
  int node_lists_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_METRICS_API_SERVER_H_
