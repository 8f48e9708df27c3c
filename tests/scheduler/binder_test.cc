// The Scheduler's binder against an apiserver kept in memory (at our own
// SchedulerApi interface): every pod bound once on a node that fits, with
// bind workers, event writers and an "informer" all running at once (this
// test also runs under ThreadSanitizer), and each way a binding can fail.
// The same guarantees against a real kube-apiserver are in
// tests/scheduler/e2e_test.cc and tests/faults/.
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "scheduler/api.h"
#include "scheduler/scheduler.h"
#include "scheduler/self_metrics.h"
#include "tests/testing/testenv.h"

namespace ms {
namespace {

using ::ms::testing::WaitFor;

Node MakeNode(const std::string& name) {
  Node n;
  n.name = name;
  n.ready = true;
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = int64_t{16} << 30;
  n.allocatable.pods = 110;
  return n;
}

Pod MakePod(const std::string& name, int64_t milli_cpu = 500) {
  Pod p;
  p.namespace_ = "ns";
  p.name = name;
  p.uid = "uid-" + name;
  p.scheduler_name = "metrics-scheduler";
  Container c;
  c.requests.milli_cpu = milli_cpu;
  p.containers.push_back(c);
  return p;
}

// The apiserver's side: a pod binds once (409 Aborted after that), a pod
// that is gone is 404 NotFound. A failure can be scripted for the next
// binding of a pod, applied (the answer was lost) or not.
class MemoryApi final : public SchedulerApi {
 public:
  // Called, outside the lock, with each pod the apiserver binds: the
  // informers' view.
  std::function<void(const Pod&)> on_bound;

  void AddPod(const Pod& pod) {
    absl::MutexLock lock(&mu_);
    pods_[pod.Key()] = pod;
  }
  void DeletePod(const std::string& key) {
    absl::MutexLock lock(&mu_);
    pods_.erase(key);
  }
  void FailNextBind(const std::string& key, absl::Status status,
                    bool applied) {
    absl::MutexLock lock(&mu_);
    failures_[key] = {std::move(status), applied};
  }

  absl::Status Bind(const Pod& pod, const std::string& node) override {
    Pod bound;
    absl::Status result;
    {
      absl::MutexLock lock(&mu_);
      ++bind_calls_[pod.Key()];
      auto it = pods_.find(pod.Key());
      if (it == pods_.end()) return absl::NotFoundError("pod not found");
      if (!it->second.node_name.empty()) {
        return absl::AbortedError(
            absl::StrCat("pod is already assigned to ", it->second.node_name));
      }
      if (auto f = failures_.find(pod.Key()); f != failures_.end()) {
        result = f->second.status;
        bool applied = f->second.applied;
        failures_.erase(f);
        if (!applied) return result;
      }
      it->second.node_name = node;
      bound = it->second;
    }
    if (on_bound) on_bound(bound);
    return result;
  }

  absl::Status RecordEvent(const kube::PodEvent& event) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(event);
    return absl::OkStatus();
  }

  absl::Status SetPodCondition(const Pod& pod,
                               const kube::PodCondition& condition) override {
    absl::MutexLock lock(&mu_);
    conditions_[pod.Key()] = condition;
    return absl::OkStatus();
  }

  absl::StatusOr<Pod> GetPod(const std::string& namespace_,
                             const std::string& name) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(namespace_ + "/" + name);
    if (it == pods_.end()) return absl::NotFoundError("pod not found");
    return it->second;
  }

  // Where each pod is bound ("" for not bound).
  std::map<std::string, std::string> Placements() {
    absl::MutexLock lock(&mu_);
    std::map<std::string, std::string> out;
    for (const auto& [key, pod] : pods_) out[key] = pod.node_name;
    return out;
  }
  int BindCalls(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = bind_calls_.find(key);
    return it == bind_calls_.end() ? 0 : it->second;
  }
  int TotalBindCalls() {
    absl::MutexLock lock(&mu_);
    int total = 0;
    for (const auto& [key, n] : bind_calls_) total += n;
    return total;
  }
  // The pods named by Events with `reason`.
  std::multiset<std::string> EventPods(const std::string& reason) {
    absl::MutexLock lock(&mu_);
    std::multiset<std::string> out;
    for (const kube::PodEvent& e : events_) {
      if (e.reason == reason) out.insert(e.pod_namespace + "/" + e.pod_name);
    }
    return out;
  }
  std::vector<kube::PodEvent> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::optional<kube::PodCondition> Condition(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = conditions_.find(key);
    if (it == conditions_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Failure {
    absl::Status status;
    bool applied;
  };
  absl::Mutex mu_;
  std::map<std::string, Pod> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Failure> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> bind_calls_ ABSL_GUARDED_BY(mu_);
  std::vector<kube::PodEvent> events_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, kube::PodCondition> conditions_ ABSL_GUARDED_BY(mu_);
};

class BinderTest : public ::testing::Test {
 protected:
  BinderTest() {
    api_.on_bound = [this](const Pod& pod) {
      // As the informers would: the pod is on a node now.
      scheduler_.OnPendingPod(pod);
      scheduler_.OnAssignedPod(pod);
    };
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      scheduler_.OnNode(MakeNode(name));
    }
  }
  ~BinderTest() override {
    scheduler_.Stop();
    if (run_.joinable()) run_.join();
  }

  void Start() {
    run_ = std::thread([this] { scheduler_.Run(); });
  }
  // A new pending pod, as the apiserver and the pending-pods informer see it.
  void Create(const Pod& pod) {
    api_.AddPod(pod);
    scheduler_.OnPendingPod(pod);
  }
  bool QueueEmpty() {
    QueueLengths l = scheduler_.queue().Lengths();
    return l.active == 0 && l.backoff == 0 && l.in_flight == 0;
  }
  // The CPU the scheduler counts as requested on `node`.
  int64_t ChargedCpu(const std::string& node) {
    for (const NodeInfo& n : scheduler_.state().Nodes()) {
      if (n.node.name == node) return n.requested.milli_cpu;
    }
    return -1;
  }
  // The CPU requested on each node, from the pods bound there.
  std::map<std::string, int64_t> CpuPerNode(
      const std::map<std::string, int64_t>& cpu_of_pod) {
    std::map<std::string, int64_t> out;
    for (const auto& [key, node] : api_.Placements()) {
      if (!node.empty()) out[node] += cpu_of_pod.at(key);
    }
    return out;
  }

  Config config_;
  MemoryApi api_;
  Registry registry_;
  std::atomic<bool> leader_ = true;
  Scheduler scheduler_{config_,
                       {.identity = "test",
                        .bind_workers = 8,
                        .seed = 1,
                        .queue = {.initial_backoff = absl::Milliseconds(10),
                                  .max_backoff = absl::Milliseconds(100)}},
                       api_,
                       nullptr,
                       RealClock::Get(),
                       registry_,
                       [this] { return leader_.load(); }};
  std::thread run_;
};

TEST_F(BinderTest, EveryPodIsBoundOnceOnANodeThatFits) {
  Start();
  // 40 pods of 500m for 4 nodes of 4 cores: 32 fit, 8 do not. They arrive
  // from two threads while the scheduler runs.
  std::map<std::string, int64_t> cpu;
  std::vector<Pod> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back(MakePod(absl::StrCat("p", i)));
    cpu[pods.back().Key()] = 500;
  }
  std::thread other([&] {
    for (size_t i = 1; i < pods.size(); i += 2) Create(pods[i]);
  });
  for (size_t i = 0; i < pods.size(); i += 2) Create(pods[i]);
  other.join();

  auto bound = [&] {
    int n = 0;
    for (const auto& [key, node] : api_.Placements()) n += !node.empty();
    return n;
  };
  ASSERT_TRUE(WaitFor([&] {
    return bound() == 32 && api_.EventPods("Scheduled").size() == 32 &&
           api_.EventPods("FailedScheduling").size() >= 8;
  })) << bound() << " bound";

  for (const auto& [node, milli_cpu] : CpuPerNode(cpu)) {
    EXPECT_LE(milli_cpu, 4000) << node;
  }
  std::multiset<std::string> scheduled = api_.EventPods("Scheduled");
  for (const auto& [key, node] : api_.Placements()) {
    if (node.empty()) {
      // Unschedulable: said so on the pod, never bound.
      EXPECT_EQ(scheduled.count(key), 0u) << key;
      std::optional<kube::PodCondition> c = api_.Condition(key);
      ASSERT_TRUE(c.has_value()) << key;
      EXPECT_EQ(c->reason, "Unschedulable");
      EXPECT_TRUE(absl::StrContains(c->message, "Insufficient cpu"))
          << c->message;
    } else {
      EXPECT_EQ(api_.BindCalls(key), 1) << key;
      EXPECT_EQ(scheduled.count(key), 1u) << key;
    }
  }
}

TEST_F(BinderTest, ABindingWhoseAnswerWasLostIsNotRepeated) {
  Pod pod = MakePod("lost");
  api_.FailNextBind(pod.Key(), absl::UnavailableError("connection reset"),
                    /*applied=*/true);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_FALSE(api_.Placements().at(pod.Key()).empty());
  EXPECT_EQ(api_.EventPods("FailedScheduling").count(pod.Key()), 0u);
}

TEST_F(BinderTest, ABindingThatDidNotHappenIsRetried) {
  Pod pod = MakePod("retried");
  api_.FailNextBind(pod.Key(), absl::UnavailableError("connection refused"),
                    /*applied=*/false);
  Create(pod);
  Start();
  ASSERT_TRUE(WaitFor([&] {
    return api_.EventPods("Scheduled").count(pod.Key()) == 1 && QueueEmpty();
  }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 2);
  EXPECT_FALSE(api_.Placements().at(pod.Key()).empty());
  // The failed attempt is on the pod.
  bool recorded = false;
  for (const kube::PodEvent& e : api_.Events()) {
    recorded |= e.reason == "FailedScheduling" && e.action == "Binding" &&
                absl::StrContains(e.message, "connection refused");
  }
  EXPECT_TRUE(recorded);
}

TEST_F(BinderTest, APodBoundByAnotherSchedulerStaysWhereItIs) {
  Pod pod = MakePod("taken", 4000);
  Pod elsewhere = pod;
  elsewhere.node_name = "n1";
  api_.AddPod(elsewhere);        // bound by someone else...
  scheduler_.OnPendingPod(pod);  // ...before our informer saw it
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueEmpty() && api_.BindCalls(pod.Key()) > 0; }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.Placements().at(pod.Key()), "n1");
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
  // n1 is charged for it at once, and the node we chose is not.
  EXPECT_EQ(ChargedCpu("n1"), 4000);
  int64_t total = 0;
  for (const char* n : {"n1", "n2", "n3", "n4"}) total += ChargedCpu(n);
  EXPECT_EQ(total, 4000);
}

TEST_F(BinderTest, APodDeletedBeforeItsBindingIsDropped) {
  Pod pod = MakePod("gone");
  scheduler_.OnPendingPod(pod);  // the apiserver no longer has it
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueEmpty() && api_.BindCalls(pod.Key()) > 0; }));
  EXPECT_EQ(api_.BindCalls(pod.Key()), 1);
  EXPECT_EQ(api_.EventPods("Scheduled").count(pod.Key()), 0u);
  // The node chosen for it is not left charged.
  for (const char* n : {"n1", "n2", "n3", "n4"}) EXPECT_EQ(ChargedCpu(n), 0) << n;
}

TEST_F(BinderTest, AReplicaThatIsNotLeaderBindsNothing) {
  leader_ = false;
  for (int i = 0; i < 5; ++i) Create(MakePod(absl::StrCat("p", i)));
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueEmpty(); }));
  EXPECT_EQ(api_.TotalBindCalls(), 0);
  for (const char* n : {"n1", "n2", "n3", "n4"}) EXPECT_EQ(ChargedCpu(n), 0) << n;
}

}  // namespace
}  // namespace ms
