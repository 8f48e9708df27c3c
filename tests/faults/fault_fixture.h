// FaultTest: the fixture of the fault tests, and the one check they share.
//
// Every fault test runs build/metrics-scheduler on the local control plane
// (tests/testenv), breaks something while a burst of pods is being placed,
// and then asserts the same guarantee with ExpectEveryPodBoundOnce():
//
//   - every pod the test created is bound (spec.nodeName set) to one of the
//     test's own nodes (its nodeSelector: the node fits);
//   - every such pod has exactly one Scheduled Event from metrics-scheduler,
//     whose message names the node the pod is bound to (a second one would
//     mean it was bound twice; none, that the binding went unreported);
//   - on every node, the sum of the requests of the pods bound to it is
//     within its allocatable cpu, memory and pod count, computed from what
//     the test asked for when it created the nodes and pods, not by the
//     scheduler's own code (a pod of another namespace on a suite node is
//     a failure: it would escape the count).
//
// A test may create more pods than the nodes hold: then exactly as many
// as fit are bound, and every other one is reported unschedulable
// (WaitForUnschedulable).
//
// Each test gets a namespace and node label of its own (`fault-suite=`), so
// nothing another test leaves behind takes part. The Lease is the default
// one (the RBAC of manifests/rbac.yaml allows no other); every test stops
// its schedulers with SIGTERM, which releases it.
#ifndef METRICS_SCHEDULER_TESTS_FAULTS_FAULT_FIXTURE_H_
#define METRICS_SCHEDULER_TESTS_FAULTS_FAULT_FIXTURE_H_

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"

namespace ms::testing {

// What the scheduler's configuration file says; the rest is fixed.
struct FaultConfig {
  std::string backend_url = "http://127.0.0.1:1";  // nothing listens there
  std::string backend_timeout = "1s";
  std::string refresh_timeout = "1s";
  std::string ttl = "1s";
  std::string max_staleness = "5s";
  std::string cold_cache_deadline = "500ms";
  // kube-scheduler's defaults: a leader survives a few seconds without the
  // apiserver.
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
};

// What ExpectEveryPodBoundOnce found, for further assertions.
struct BindingReport {
  int pods = 0;
  int bound = 0;
  int fallback_events = 0;  // Scheduled events that say "(fallback)"
  int metrics_events = 0;   // ... and "(metrics)"
  int pods_without_event = 0;
  std::map<std::string, int> events_by_instance;  // reportingInstance -> n
};

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The test's i-th node name.
  std::string Node(int i) const;
  // Creates `count` Ready nodes labelled with the suite.
  void AddNodes(int count, const std::string& cpu,
                const std::string& memory = "16Gi");

  std::string ConfigYaml(const FaultConfig& config) const;
  // Starts the scheduler with the scheduler identity's kubeconfig and
  // `extra` flags (e.g. --master=URL to go through a
  // proxy). Null (and a test failure) when it does not start.
  SchedulerProcess* StartScheduler(const FaultConfig& config,
                                   const std::string& identity = "fault",
                                   std::vector<std::string> extra = {});
  // Waits until `s` reports itself leader.
  void WaitForLeader(SchedulerProcess* s,
                     absl::Duration timeout = absl::Seconds(30));

  // A pod for metrics-scheduler, pinned to the suite's nodes.
  std::string PodJson(const std::string& name, const std::string& cpu) const;
  // Creates the pod, retrying for up to `timeout` while the apiserver cannot
  // answer (an AlreadyExists after a lost answer counts as created).
  bool CreatePod(const std::string& name, const std::string& cpu = "100m",
                 absl::Duration timeout = absl::Seconds(60));
  // Creates pods prefix-0 .. prefix-(count-1) on a thread of their own;
  // JoinCreator() waits for it.
  void CreatePodsInBackground(const std::string& prefix, int count,
                              const std::string& cpu = "100m");
  void JoinCreator();

  // Pod name -> node name ("" while pending) in the suite's namespace; empty
  // when the apiserver cannot answer.
  std::map<std::string, std::string> Placements();
  int CountBound();
  // Waits until `want` pods exist in the namespace and all are bound.
  bool WaitForAllBound(int want, absl::Duration timeout = absl::Seconds(90));

  // Scheduled Events of the suite written by `instance` (a replica's
  // identity).
  int CountScheduledEvents(const std::string& instance);
  // Deletes the pod at once (no kubelet here to wait for); its Scheduled
  // Event, if any, no longer counts.
  void DeletePod(const std::string& name);
  // Adds a label to the pod: an update event.
  void LabelPod(const std::string& name, const std::string& key,
                const std::string& value);
  // Waits until `bound` pods are bound and every other pod of the suite
  // carries the PodScheduled=False condition with reason Unschedulable.
  bool WaitForUnschedulable(int bound,
                            absl::Duration timeout = absl::Seconds(90));

  // The shared check (see the file comment). `want` pods must exist, and
  // `want_bound` of them be bound (-1: all). With `allow_lost_events`, a
  // pod may lack its Scheduled Event (a replica killed between binding and
  // writing the Event), but never have two.
  BindingReport ExpectEveryPodBoundOnce(int want,
                                        bool allow_lost_events = false,
                                        int want_bound = -1);

  Testenv env_;
  std::string suite_;
  SchedulerProcesses schedulers_;
  std::vector<std::string> nodes_;
  std::thread creator_;
  // What the test asked for, in millicores: the checker's own accounts.
  std::map<std::string, int64_t> node_milli_cpu_;
  absl::Mutex created_mu_;  // CreatePod runs on the creator's thread too
  std::map<std::string, int64_t> pod_milli_cpu_ ABSL_GUARDED_BY(created_mu_);
  std::set<std::string> deleted_;  // pod names
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_FAULTS_FAULT_FIXTURE_H_
