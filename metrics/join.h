// Joiner: which node a series names, per a metric's `join` configuration.
//
// A query returns series, not Nodes. Each metric says how its series name a
// node (config.h, JoinConfig): a label holding the node name, or one holding
// an address such as `10.0.0.7:9100` (port ignored, matched against the
// Node's addresses, then its name), optionally through a regex whose first
// capture group is the part to match. The regex is RE2's: linear in the
// length of the value, with no recursion, since label values come from
// outside and may be of any length. The sources look up the label's value
// of each series with Match().
//
//   ASSIGN_OR_RETURN(Joiner joiner, Joiner::Create(metric.join, {}));
//   const std::string* node = joiner.Match("10.0.0.7:9100", nodes);
//
// Thread-compatible: Match() is const and may run on many threads at once.
#ifndef METRICS_SCHEDULER_METRICS_JOIN_H_
#define METRICS_SCHEDULER_METRICS_JOIN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "config/config.h"
#include "metrics/node_set.h"

namespace re2 {
class RE2;
}

namespace ms::metrics {

struct JoinOptions {
  // Name matching also accepts the short form on either side: host
  // "n1.example.com" names node "n1", host "n1" names node
  // "n1.example.com" (Sysdig's host.hostName).
  bool short_names = false;
};

class Joiner {
 public:
  // InvalidArgument when the regex does not compile (config/ validates it at
  // load, so only a hand-built JoinConfig gets there).
  static absl::StatusOr<Joiner> Create(const JoinConfig& join,
                                       JoinOptions options);

  // The name of the node `label_value` names, or nullptr. A regex that does
  // not match the whole value matches no node.
  const std::string* Match(absl::string_view label_value,
                           const NodeSet& nodes) const;

 private:
  Joiner(JoinMatch match, std::shared_ptr<const re2::RE2> regex,
         JoinOptions options)
      : match_(match), regex_(std::move(regex)), options_(options) {}

  JoinMatch match_;
  std::shared_ptr<const re2::RE2> regex_;  // null: none
  JoinOptions options_;
};

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_JOIN_H_
