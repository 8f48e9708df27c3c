// Leadership: whether this replica may write placements to the cluster.
//
// The binder asks before every binding. LeaderElector implements it for
// replicas that elect a leader; AlwaysLeader for a single replica run with
// --leader-elect=false; tests script it.
//
// Thread-safe: called from every binder thread at once.
#ifndef METRICS_SCHEDULER_SCHEDULER_LEADERSHIP_H_
#define METRICS_SCHEDULER_SCHEDULER_LEADERSHIP_H_

#include "absl/time/time.h"

namespace ms {

class Leadership {
 public:
  virtual ~Leadership() = default;
  // True from winning the lease until the elector gives it up.
  virtual bool IsLeader() const = 0;
  // True when a write that must not outlive the lease may start now: this
  // replica leads and its lease was renewed recently enough. While it leads
  // but a renewal is late, waits up to `max_wait` for it; false when it
  // does not lead, or no renewal came in time.
  virtual bool AwaitWriteWindow(absl::Duration max_wait) = 0;
};

class AlwaysLeader final : public Leadership {
 public:
  bool IsLeader() const override { return true; }
  bool AwaitWriteWindow(absl::Duration) override { return true; }
};

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_LEADERSHIP_H_
