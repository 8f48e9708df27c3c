// The Preemptor against a recording SchedulerApi: the writes of one
// preemption in kube-scheduler's order, victims already gone passed over,
// a refused write reported, and nothing written by a replica not leading.
#include "scheduler/cycle/preemptor.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cmd/explain.h"
#include "tests/testing/scripted_leadership.h"

namespace ms {
namespace {

using ::ms::testing::ScriptedLeadership;
using ::testing::ElementsAre;

// Records each write as a line, and the timeout it was given;
// DeletePod answers from `delete_answers` by pod name (OK when absent), and
// SetPodCondition with `condition_answer`. `after_write`, when set (before
// the Preemptor runs), is called after each write with its line.
class RecordingApi final : public SchedulerApi {
 public:
  std::map<std::string, absl::Status> delete_answers;
  absl::Status condition_answer;
  std::function<void(const std::string&)> after_write;

  absl::Status Bind(const Pod&, const std::string&, absl::Duration) override {
    return absl::UnimplementedError("Bind");
  }
  absl::Status RecordEvent(const kube::PodEvent& e) override {
    Record(absl::StrCat("event ", e.pod_name, " ", e.reason, ": ", e.message));
    return absl::OkStatus();
  }
  absl::Status SetPodCondition(const Pod& pod, const kube::PodCondition& c,
                               absl::Duration timeout) override {
    Record(absl::StrCat("condition ", pod.name, " ", c.type, "=", c.status,
                        " ", c.reason, ": ", c.message),
           timeout);
    return condition_answer;
  }
  absl::Status DeletePod(const std::string&, const std::string& name,
                         const std::string& uid,
                         absl::Duration timeout) override {
    Record(absl::StrCat("delete ", name, " uid=", uid), timeout);
    auto it = delete_answers.find(name);
    return it == delete_answers.end() ? absl::OkStatus() : it->second;
  }
  absl::Status SetNominatedNode(const Pod& pod, const std::string& node,
                                absl::Duration timeout) override {
    Record(absl::StrCat("nominate ", pod.name, " -> '", node, "'"), timeout);
    return absl::OkStatus();
  }
  std::vector<std::string> Calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  std::vector<absl::Duration> Timeouts() {
    absl::MutexLock lock(&mu_);
    return timeouts_;
  }

 private:
  // `timeout`: the write's (none for an Event).
  void Record(std::string call,
              std::optional<absl::Duration> timeout = std::nullopt) {
    {
      absl::MutexLock lock(&mu_);
      calls_.push_back(call);
      if (timeout) timeouts_.push_back(*timeout);
    }
    if (after_write) after_write(call);
  }
  absl::Mutex mu_;
  std::vector<std::string> calls_;
  std::vector<absl::Duration> timeouts_;
};

std::shared_ptr<const PodInfo> Victim(const std::string& name) {
  return std::make_shared<const PodInfo>(
      PodInfo{.name = name, .uid = "uid-" + name, .namespace_ = "ns"});
}

PreemptionTask Task() {
  return {.preemptor =
              Pod{.name = "high",
                  .namespace_ = "ns",
                  .uid = "uid-high",
                  .scheduler_name = "metrics-scheduler"},
          .node = "n1",
          .victims = {Victim("a"), Victim("b")},
          .lower_nominated = {Victim("waiting")}};
}

struct Fixture {
  RecordingApi api;
  Registry registry;
  AlwaysLeader leader;
  std::vector<std::string> failed;  // preemptors reported
  absl::Mutex mu;

  // Runs `task` to its end; the Preemptor is drained before returning.
  // `started`, when given, is called once the task is submitted.
  void Run(PreemptionTask task, Leadership& leadership,
           PreemptorOptions options = {},
           std::function<void(Preemptor&)> started = nullptr) {
    EventRecorder recorder({.components = {"metrics-scheduler"}}, api,
                           registry);
    Preemptor preemptor(options, api, recorder,
                        leadership, registry, [this](const Pod& p) {
                          absl::MutexLock lock(&mu);
                          failed.push_back(p.name);
                        });
    preemptor.Submit(std::move(task));
    if (started) started(preemptor);
    preemptor.Drain();
    EXPECT_FALSE(preemptor.InFlight("uid-high"));
  }
};

TEST(PreemptorTest, WritesWhatKubeSchedulerWritesInItsOrder) {
  Fixture f;
  f.Run(Task(), f.leader);
  const std::string condition =
      " DisruptionTarget=True PreemptionByScheduler: metrics-scheduler: "
      "preempting to accommodate a higher priority pod";
  std::vector<std::string> calls = f.api.Calls();
  // Events are written by the recorder's own threads: apart.
  std::vector<std::string> events, writes;
  for (const std::string& c : calls) {
    (c.rfind("event ", 0) == 0 ? events : writes).push_back(c);
  }
  EXPECT_THAT(writes,
              ElementsAre("condition a" + condition, "delete a uid=uid-a",
                          "condition b" + condition, "delete b uid=uid-b",
                          "nominate waiting -> ''", "nominate high -> 'n1'"));
  EXPECT_THAT(events, ::testing::UnorderedElementsAre(
                          "event a Preempted: Preempted by pod uid-high on "
                          "node n1",
                          "event b Preempted: Preempted by pod uid-high on "
                          "node n1"));
  EXPECT_TRUE(f.failed.empty());
}

TEST(PreemptorTest, AVictimAlreadyGoneIsPassedOver) {
  Fixture f;
  f.api.delete_answers["a"] = absl::NotFoundError("gone");
  f.Run(Task(), f.leader);
  std::vector<std::string> calls = f.api.Calls();
  EXPECT_NE(std::find(calls.begin(), calls.end(), "nominate high -> 'n1'"),
            calls.end());
  EXPECT_TRUE(f.failed.empty());
}

TEST(PreemptorTest, ARefusedDeletionIsReportedAndNothingNominated) {
  Fixture f;
  f.api.delete_answers["a"] = absl::InvalidArgumentError("refused");
  f.Run(Task(), f.leader);
  for (const std::string& c : f.api.Calls()) {
    EXPECT_EQ(c.find("nominate"), std::string::npos) << c;
    EXPECT_EQ(c.find(" b "), std::string::npos) << c;
  }
  EXPECT_THAT(f.failed, ElementsAre("high"));
}

TEST(PreemptorTest, NothingIsWrittenOutsideTheLeadersWindow) {
  Fixture f;
  ScriptedLeadership standby;
  standby.leader = false;
  f.Run(Task(), standby);
  EXPECT_TRUE(f.api.Calls().empty());
  EXPECT_THAT(f.failed, ElementsAre("high"));
}

// The lease is lost after the first victim's deletion: nothing more is
// written (a former leader evicts nothing once a standby may lead).
TEST(PreemptorTest, ALeaseLostInTheMiddleStopsItsWrites) {
  Fixture f;
  ScriptedLeadership leader;
  f.api.after_write = [&](const std::string& call) {
    if (call.rfind("delete a ", 0) == 0) leader.leader = false;
  };
  f.Run(Task(), leader);
  EXPECT_THAT(f.api.Calls(),
              ElementsAre(::testing::StartsWith("condition a "),
                          "delete a uid=uid-a",
                          ::testing::StartsWith("event a Preempted")));
  EXPECT_THAT(f.failed, ElementsAre("high"));
}

// Each write gives up within the timeout the scheduler keeps below the
// lease's margin, as a binding does.
TEST(PreemptorTest, EveryWriteIsBoundedByTheWriteTimeout) {
  Fixture f;
  f.Run(Task(), f.leader, {.timeout = absl::Milliseconds(800)});
  ASSERT_FALSE(f.api.Timeouts().empty());
  for (absl::Duration t : f.api.Timeouts()) {
    EXPECT_EQ(t, absl::Milliseconds(800));
  }
}

// An apiserver that does not answer: the waits between tries end at
// shutdown, not after the ~25 s of tries.
TEST(PreemptorTest, ShutdownCutsShortTheRetriesOfAWrite) {
  Fixture f;
  f.api.condition_answer = absl::UnavailableError("connection refused");
  absl::Notification tried;
  f.api.after_write = [&](const std::string&) {
    if (!tried.HasBeenNotified()) tried.Notify();
  };
  f.Run(Task(), f.leader, {}, [&](Preemptor& preemptor) {
    tried.WaitForNotification();
    preemptor.Cancel();
  });
  EXPECT_LT(f.api.Calls().size(), static_cast<size_t>(kRetryAttempts));
  EXPECT_THAT(f.failed, ElementsAre("high"));
}

TEST(ExplainPreemptionTest, SaysWhatItWouldTakeOrWhyNot) {
  Preemption p{.node_index = 0,
               .node_name = "n1",
               .victims = {Victim("a"), Victim("b")},
               .budget_violations = 1};
  EXPECT_EQ(FormatPreemption(p),
            "preemption would help: on n1, evicting 2 pod(s): ns/a (priority "
            "0), ns/b (priority 0); 1 of them beyond their "
            "PodDisruptionBudget\n");
  EXPECT_EQ(FormatPreemption(
                {.message = "preemption: not eligible due to "
                            "preemptionPolicy=Never."}),
            "preemption would not help: preemption: not eligible due to "
            "preemptionPolicy=Never.\n");
}

}  // namespace
}  // namespace ms
