// Access to the local control plane (tests/testenv) from tests.
//
// ctest starts each control plane once (fixtures `testenv_main` and
// `testenv_e2e`, tests/CMakeLists.txt) and passes its directory in
// $TESTENV_DIR; a test gets the admin and scheduler
// credentials from there, creates what it needs through the admin identity
// (raw JSON, or `kubectl apply` through the testenv binary), and cleans up
// its own namespace and nodes. Names are unique per test so tests never see
// each other's objects.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_TESTENV_H_
#define METRICS_SCHEDULER_TESTS_TESTING_TESTENV_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http.h"
#include "kube/cluster_config.h"

namespace ms::testing {

class Testenv {
 public:
  // Fails the current test (and returns a Testenv with an empty server) when
  // $TESTENV_DIR is unset or the control plane is not there.
  Testenv();

  const std::string& dir() const { return dir_; }
  const std::string& server() const { return server_; }

  kube::ClusterConfig AdminConfig() const;
  kube::ClusterConfig SchedulerConfig() const;

  // A request as the admin identity. Returns the response whatever its
  // status; transport failures as a status.
  absl::StatusOr<HttpResponse> Admin(const std::string& method,
                                     const std::string& path,
                                     const std::string& body = "",
                                     const std::string& content_type =
                                         "application/json");
  // Like Admin but fails the test unless the answer is 2xx.
  std::string AdminOk(const std::string& method, const std::string& path,
                      const std::string& body = "",
                      const std::string& content_type = "application/json");

  // Runs `testenv kubectl --kubeconfig admin.kubeconfig ARGS`; returns its
  // output, failing the test on a non-zero exit.
  std::string Kubectl(const std::string& args);

  // Creates a namespace (deleted again by DeleteNamespace) with its default
  // ServiceAccount, so that pods may be created in it at once.
  void CreateNamespace(const std::string& name);
  void DeleteNamespace(const std::string& name);

  // Creates a Ready node with the given allocatable and labels (a JSON
  // object body such as R"({"zone":"a"})"), InternalIP `ip` if non-empty.
  void CreateNode(const std::string& name, const std::string& cpu = "4",
                  const std::string& memory = "16Gi",
                  const std::string& labels_json = "{}",
                  const std::string& ip = "");
  void DeleteNode(const std::string& name);

  // Pod name -> node name ("" while pending) of every pod in `namespace_`;
  // empty when the list fails.
  std::map<std::string, std::string> PodNodes(const std::string& namespace_);

  // Grants the scheduler identity exactly manifests/rbac.yaml.
  void ApplySchedulerRbac();

  // Creates the ServiceAccount `name` in `namespace_` and returns a token
  // of it from the TokenRequest API, valid for an hour; fails the test (and
  // returns "") when it cannot.
  std::string ServiceAccountToken(const std::string& namespace_,
                                  const std::string& name);
  // Waits until the apiserver's authoriser lets `user` (e.g.
  // "system:serviceaccount:ns:name") get the non-resource URL `path`, as a
  // SubjectAccessReview asks it: a new RBAC binding takes a moment to be
  // seen. Returns whether it did.
  bool WaitUntilAllowedToGet(const std::string& user, const std::string& path);

 private:
  std::string dir_;
  std::string server_;
  std::string admin_token_;
  std::string scheduler_token_;
  std::string ca_file_;
  std::unique_ptr<HttpClient> http_;
};

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns
// whether it held. For waiting on asynchronous effects, never as a sleep.
bool WaitFor(const std::function<bool()>& condition,
             absl::Duration timeout = absl::Seconds(30));

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_TESTENV_H_
