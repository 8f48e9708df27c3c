#include "scoring/preemption.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms {
namespace {

constexpr char kNotHelpful[] = "Preemption is not helpful for scheduling";
constexpr char kNoVictims[] = "No preemption victims found for incoming pod";

// Filter failures that removing pods cannot fix (UnschedulableAndUnresolvable
// in kube-scheduler). kFailCsiDriverMissing is not among them: kube-scheduler
// reports it as Unschedulable, so preemption tries such a node in vain.
constexpr uint32_t kUnresolvable =
    kFailUnschedulable | kFailNodeName | kFailTaint | kFailEnforcedAffinity |
    kFailAffinity | kFailVolumeNodeConflict | kFailVolumeBindConflict |
    kFailVolumeMissing | kFailVolumeZone | kFailTopologySpreadLabel |
    kFailPodAffinity | kFailNodeFeatures | kFailDeviceClassResource |
    kFailVolumeNotEnoughSpace | kFailMetric;

// Whether removing pods could make the node fit (NodeResourcesFit: unless
// the pod asks for more of an insufficient resource than the node has).
bool Resolvable(const NodeCheck& c, const Resources& requests,
                const Node& node) {
  if (c.feasible() || (c.failures & kUnresolvable) != 0) return false;
  const Resources& a = node.allocatable;
  if ((c.failures & kFailCpu) && requests.milli_cpu > a.milli_cpu) return false;
  if ((c.failures & kFailMemory) && requests.memory > a.memory) return false;
  if ((c.failures & kFailEphemeralStorage) &&
      requests.ephemeral_storage > a.ephemeral_storage) {
    return false;
  }
  for (size_t i = 0; i < requests.scalar.size() && i < 64; ++i) {
    if ((c.scalars & (uint64_t{1} << i)) == 0) continue;
    const auto& [name, amount] = requests.scalar[i];
    if (amount > a.Scalar(name)) return false;
  }
  return true;
}

int64_t StartOf(const PodInfo& p, int64_t now_ms) {
  return p.start_time_ms != 0 ? p.start_time_ms : now_ms;
}

// kube-scheduler's "0/N nodes are available: 2 A, 1 B." over per-node
// reasons.
std::string Histogram(const std::map<std::string, int>& counts, size_t n) {
  std::vector<std::string> parts;
  for (const auto& [reason, count] : counts) {
    parts.push_back(absl::StrCat(count, " ", reason));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrCat("0/", n, " nodes are available: ",
                      absl::StrJoin(parts, ", "), ".");
}

using Victims = std::vector<std::shared_ptr<const PodInfo>>;

// filterPodsWithPDBViolation (FilterVictimsWithPDBViolation from 1.37):
// splits `pods` (in order) into those whose eviction would exceed a
// budget, and the others. Each pod takes one from every budget selecting
// it; from 1.37 it stops at the first budget it exceeds, so a pod that
// two budgets select and the first already forbids leaves the second's
// allowance to the pods after it.
void SplitByBudget(const Victims& pods,
                   const std::vector<PodDisruptionBudget>* budgets,
                   KubeVersion kube, Victims& violating, Victims& others) {
  std::vector<int64_t> allowed;
  if (budgets != nullptr) {
    for (const PodDisruptionBudget& b : *budgets) {
      allowed.push_back(b.disruptions_allowed);
    }
  }
  for (const auto& pod : pods) {
    bool violated = false;
    if (!pod->labels.empty() && budgets != nullptr) {
      for (size_t j = 0; j < budgets->size(); ++j) {
        const PodDisruptionBudget& b = (*budgets)[j];
        if (b.namespace_ != pod->namespace_ || !b.selector ||
            (b.selector->match_labels.empty() &&
             b.selector->match_expressions.empty()) ||
            !Selects(b.selector, pod->labels) ||
            std::count(b.disrupted_pods.begin(), b.disrupted_pods.end(),
                       pod->name) > 0) {
          continue;
        }
        if (--allowed[j] < 0) {
          violated = true;
          // From 1.37 the first budget a pod would exceed settles it: the
          // budgets after it are not charged for it.
          if (kube.AtLeast(37)) break;
        }
      }
    }
    (violated ? violating : others).push_back(pod);
  }
}

struct Candidate {
  size_t node = 0;
  Victims victims;
  int64_t violations = 0;
};

// SelectVictimsOnNode. Returns false with *reasons set when the node
// cannot help. Leaves `filter`'s states as it found them.
bool SelectVictims(const PreemptionInput& in, PreemptionFilter& filter,
                   size_t i, Candidate& out,
                   std::vector<std::string>* reasons) {
  const Pod& pod = *in.pod;
  NodeInfo info = (*in.nodes)[i];
  Victims potential;
  for (const auto& p : (*in.nodes)[i].pods) {
    if (p->priority >= pod.priority) continue;
    potential.push_back(p);
    info.RemovePod(PodCharge{p});
    filter.Update(i, *p, -1);
  }
  if (potential.empty()) {
    *reasons = {kNoVictims};
    return false;
  }
  // Every lower-priority pod removed: the states are put back on return.
  auto restore = [&](const Victims& removed) {
    for (const auto& p : removed) filter.Update(i, *p, 1);
  };
  if (NodeCheck c = filter.Check(i, info); !c.feasible()) {
    *reasons = filter.Reasons(c);
    restore(potential);
    return false;
  }
  const int64_t now = in.now_ms;
  auto more_important = [now](const auto& a, const auto& b) {
    return MoreImportant(*a, *b, now);
  };
  std::stable_sort(potential.begin(), potential.end(), more_important);
  Victims violating, others;
  SplitByBudget(potential, in.budgets, in.kube, violating, others);
  out = Candidate{.node = i};
  // Puts `p` back; keeps it a victim when the pod no longer fits.
  auto reprieve = [&](const std::shared_ptr<const PodInfo>& p) {
    info.AddPod(PodCharge{p});
    filter.Update(i, *p, 1);
    if (filter.Check(i, info).feasible()) return true;
    info.RemovePod(PodCharge{p});
    filter.Update(i, *p, -1);
    out.victims.push_back(p);
    return false;
  };
  for (const auto& p : violating) {
    if (!reprieve(p)) ++out.violations;
  }
  for (const auto& p : others) reprieve(p);
  if (!violating.empty() && !others.empty()) {
    std::stable_sort(out.victims.begin(), out.victims.end(), more_important);
  }
  restore(out.victims);
  if (out.victims.empty()) {
    *reasons = {absl::StrCat("expected at least one victim pod on node \"",
                             info.node.name, "\"")};
    return false;
  }
  return true;
}

// pickOneNodeForPreemption: the best of `candidates` (in the order found).
const Candidate& PickCandidate(const std::vector<Candidate>& candidates,
                               int64_t now_ms) {
  using Score = int64_t (*)(const Candidate&, int64_t);
  // Higher is better, as kube-scheduler's score functions.
  static constexpr Score kScores[] = {
      [](const Candidate& c, int64_t) { return -c.violations; },
      [](const Candidate& c, int64_t) {
        return -static_cast<int64_t>(c.victims[0]->priority);
      },
      [](const Candidate& c, int64_t) {
        int64_t sum = 0;
        for (const auto& v : c.victims) {
          sum += int64_t{v->priority} +
                 int64_t{std::numeric_limits<int32_t>::max()} + 1;
        }
        return -sum;
      },
      [](const Candidate& c, int64_t) {
        return -static_cast<int64_t>(c.victims.size());
      },
      // The earliest start among the highest-priority victims: the later,
      // the better.
      [](const Candidate& c, int64_t now) {
        int32_t top = c.victims[0]->priority;
        int64_t earliest = StartOf(*c.victims[0], now);
        for (const auto& v : c.victims) {
          if (v->priority == top) {
            earliest = std::min(earliest, StartOf(*v, now));
          } else if (v->priority > top) {
            top = v->priority;
            earliest = StartOf(*v, now);
          }
        }
        return earliest;
      },
  };
  std::vector<const Candidate*> left;
  for (const Candidate& c : candidates) left.push_back(&c);
  for (Score score : kScores) {
    int64_t best = std::numeric_limits<int64_t>::min();
    std::vector<const Candidate*> kept;
    for (const Candidate* c : left) {
      const int64_t s = score(*c, now_ms);
      if (s > best) {
        best = s;
        kept.clear();
      }
      if (s == best) kept.push_back(c);
    }
    left = std::move(kept);
    if (left.size() == 1) break;
  }
  // kube-scheduler takes any of the tied (Go map order); the first node
  // listed keeps a retry on the same choice.
  return **std::min_element(
      left.begin(), left.end(),
      [](const Candidate* a, const Candidate* b) { return a->node < b->node; });
}

}  // namespace

bool MoreImportant(const PodInfo& a, const PodInfo& b, int64_t now_ms) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return StartOf(a, now_ms) < StartOf(b, now_ms);
}

Preemption Preempt(const PreemptionInput& in, PreemptionFilter& filter) {
  const Pod& pod = *in.pod;
  const std::vector<NodeInfo>& nodes = *in.nodes;
  const size_t n = nodes.size();
  Preemption out;
  auto fail = [&](std::string message) {
    out.message = absl::StrCat("preemption: ", message);
    return out;
  };
  // 1. Eligible.
  if (pod.never_preempts) {
    return fail("not eligible due to preemptionPolicy=Never.");
  }
  const Resources& requests = in.filter->requests;
  auto resolvable = [&](size_t i) {
    return !in.pre_filter_rejected &&
           Resolvable((*in.checks)[i], requests, nodes[i].node);
  };
  if (!pod.nominated_node_name.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (nodes[i].node.name != pod.nominated_node_name || !resolvable(i)) {
        continue;
      }
      for (const auto& p : nodes[i].pods) {
        if (p->priority < pod.priority && p->terminating && p->preempted) {
          return fail(
              "not eligible due to a terminating pod on the nominated node.");
        }
      }
    }
  }
  // 2. Potential nodes.
  std::vector<size_t> potential;
  for (size_t i = 0; i < n; ++i) {
    if (resolvable(i)) potential.push_back(i);
  }
  if (potential.empty()) {
    return fail(Histogram({{kNotHelpful, static_cast<int>(n)}}, n));
  }
  // 3-4. Candidates.
  const int64_t m = static_cast<int64_t>(potential.size());
  const int64_t wanted = std::min<int64_t>(
      m, std::max<int64_t>(m * in.settings.min_candidate_nodes_percentage / 100,
                           in.settings.min_candidate_nodes_absolute));
  const size_t offset = static_cast<size_t>(in.seed % potential.size());
  std::vector<Candidate> clean, violating;
  std::map<std::string, int> reasons;
  size_t checked = 0;
  for (size_t k = 0; k < potential.size(); ++k) {
    const size_t i = potential[(offset + k) % potential.size()];
    ++checked;
    Candidate c;
    std::vector<std::string> why;
    if (!SelectVictims(in, filter, i, c, &why)) {
      for (std::string& r : why) ++reasons[std::move(r)];
      continue;
    }
    std::vector<Candidate>& list = c.violations == 0 ? clean : violating;
    if (static_cast<int64_t>(list.size()) < wanted) {
      list.push_back(std::move(c));
    }
    if (!clean.empty() &&
        static_cast<int64_t>(clean.size() + violating.size()) >= wanted) {
      break;
    }
  }
  if (clean.empty() && violating.empty()) {
    const size_t absent = n - checked;
    if (absent > 0) reasons[kNotHelpful] += static_cast<int>(absent);
    return fail(Histogram(reasons, n));
  }
  clean.insert(clean.end(), std::make_move_iterator(violating.begin()),
               std::make_move_iterator(violating.end()));
  // 5. The node.
  const Candidate& best = PickCandidate(clean, in.now_ms);
  out.node_index = static_cast<int>(best.node);
  out.node_name = nodes[best.node].node.name;
  out.victims = best.victims;
  out.budget_violations = best.violations;
  if (in.kube.AtLeast(37)) {
    out.message = absl::StrCat(
        "preemption: found a potential placement for pod on node ",
        out.node_name, ", preempting ", out.victims.size(), " victims");
  }
  if (in.nominated != nullptr) {
    for (const NominatedPod& p : *in.nominated) {
      if (p.node == best.node && p.pod().priority < pod.priority) {
        out.lower_nominated.push_back(p.charge.pod);
      }
    }
  }
  return out;
}

}  // namespace ms
