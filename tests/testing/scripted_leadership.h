// ScriptedLeadership: a Leadership (scheduler/ha/leadership.h) as a test
// scripts it: leading or not, switched at any time, the write margin it
// reports, and a hook run inside every AwaitWriteWindow (a write about to
// start). Thread-safe, but `on_await` and `margin` are set before the code
// under test runs.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_SCRIPTED_LEADERSHIP_H_
#define METRICS_SCHEDULER_TESTS_TESTING_SCRIPTED_LEADERSHIP_H_

#include <atomic>
#include <functional>

#include "absl/time/time.h"
#include "scheduler/ha/leadership.h"

namespace ms::testing {

class ScriptedLeadership final : public Leadership {
 public:
  std::atomic<bool> leader = true;
  absl::Duration margin = absl::InfiniteDuration();
  std::function<void()> on_await;
  std::atomic<int> awaits = 0;  // AwaitWriteWindow calls so far

  bool IsLeader() const override { return leader.load(); }
  bool AwaitWriteWindow(absl::Duration) override {
    ++awaits;
    if (on_await) on_await();
    return leader.load();
  }
  absl::Duration WriteMargin() const override { return margin; }
};

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_SCRIPTED_LEADERSHIP_H_
