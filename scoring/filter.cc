#include "scoring/filter.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ms {
namespace {

constexpr char kMetadataName[] = "metadata.name";

// Go's strconv.ParseInt(s, 10, 64): optional sign, digits, nothing else.
bool ParseInt64(const std::string& s, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  // Accumulate negatively: the range of int64 is wider below zero.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    int digit = s[i] - '0';
    if (v < (kMin + digit) / 10) return false;
    v = v * 10 - digit;
  }
  if (!negative) {
    if (v == kMin) return false;
    v = -v;
  }
  *out = v;
  return true;
}

// One label requirement; *valid is cleared when the requirement is malformed
// (the term it belongs to then matches nothing, as in kube-scheduler).
bool MatchesLabel(const NodeSelectorRequirement& r,
                  const std::map<std::string, std::string>& labels,
                  bool* valid) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn: {
      if (r.values.empty()) {
        *valid = false;
        return false;
      }
      bool in = has && std::find(r.values.begin(), r.values.end(),
                                 it->second) != r.values.end();
      return r.op == SelectorOperator::kIn ? in : !in;
    }
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty()) {
        *valid = false;
        return false;
      }
      return r.op == SelectorOperator::kExists ? has : !has;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      int64_t want;
      if (r.values.size() != 1 || !ParseInt64(r.values[0], &want)) {
        *valid = false;
        return false;
      }
      int64_t got;
      if (!has || !ParseInt64(it->second, &got)) return false;
      return r.op == SelectorOperator::kGt ? got > want : got < want;
    }
  }
  return false;
}

bool MatchesField(const NodeSelectorRequirement& r, const Node& node,
                  bool* valid) {
  if (r.key != kMetadataName || r.values.size() != 1 ||
      (r.op != SelectorOperator::kIn && r.op != SelectorOperator::kNotIn)) {
    *valid = false;
    return false;
  }
  bool eq = node.name == r.values[0];
  return r.op == SelectorOperator::kIn ? eq : !eq;
}

bool MatchesTerm(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) {
    return false;
  }
  bool valid = true;
  bool match = true;
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (!MatchesLabel(r, node.labels, &valid)) match = false;
  }
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (!MatchesField(r, node, &valid)) match = false;
  }
  return valid && match;
}

const std::string& Normalized(const std::string& s, const std::string& dflt) {
  return s.empty() ? dflt : s;
}

std::string TaintReason(const Taint& taint) {
  return absl::StrCat("node(s) had untolerated taint {", taint.key, ": ",
                      taint.value, "}");
}

bool IsHard(const Taint& t) {
  return t.effect == TaintEffect::kNoSchedule ||
         t.effect == TaintEffect::kNoExecute;
}

// The fixed reasons by bit, in bit order (taint and scalar are worded apart).
constexpr const char* kFixedReasons[] = {
    kReasonNotReady,      kReasonUnschedulable,
    kReasonNodeName,      nullptr /* taint */,
    kReasonAffinity,      kReasonPorts,
    kReasonTooManyPods,   "Insufficient cpu",
    "Insufficient memory", "Insufficient ephemeral-storage",
    nullptr /* scalar */, nullptr /* metric */};

std::string MetricReason(const std::vector<MetricTerm>* metrics, int metric) {
  std::string name = (metrics != nullptr && metric >= 0 &&
                      static_cast<size_t>(metric) < metrics->size())
                         ? (*metrics)[metric].name
                         : absl::StrCat("#", metric);
  return absl::StrCat("node(s) had no usable value for metric ", name);
}

}  // namespace

PodFilter MakePodFilter(const Pod& pod) {
  PodFilter f;
  f.pod = &pod;
  f.requests = PodRequests(pod);
  f.host_ports = PodHostPorts(pod);
  Taint unschedulable{kTaintNodeUnschedulable, "", TaintEffect::kNoSchedule};
  f.tolerates_unschedulable = ToleratesTaint(pod.tolerations, unschedulable);
  f.has_node_affinity =
      !pod.node_selector.empty() || pod.required_node_affinity.has_value();
  return f;
}

bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (t.effect.has_value() && *t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  switch (t.op) {
    case TolerationOperator::kEqual:
      return t.value == taint.value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool ToleratesTaint(const std::vector<Toleration>& tolerations,
                    const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (ToleratesTaint(t, taint)) return true;
  }
  return false;
}

bool MatchesNodeAffinity(const Pod& pod, const Node& node) {
  for (const auto& [key, value] : pod.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (!pod.required_node_affinity.has_value()) return true;
  for (const NodeSelectorTerm& term : *pod.required_node_affinity) {
    if (MatchesTerm(term, node)) return true;
  }
  return false;
}

bool HostPortsConflict(const std::vector<ContainerPort>& wanted,
                       const std::vector<ContainerPort>& used) {
  static const std::string kAnyIp = "0.0.0.0";
  static const std::string kTcp = "TCP";
  for (const ContainerPort& w : wanted) {
    const std::string& wip = Normalized(w.host_ip, kAnyIp);
    const std::string& wproto = Normalized(w.protocol, kTcp);
    for (const ContainerPort& u : used) {
      if (u.host_port != w.host_port) continue;
      if (Normalized(u.protocol, kTcp) != wproto) continue;
      const std::string& uip = Normalized(u.host_ip, kAnyIp);
      if (wip == kAnyIp || uip == kAnyIp || wip == uip) return true;
    }
  }
  return false;
}

NodeCheck CheckNode(const PodFilter& f, const NodeInfo& info) {
  NodeCheck c;
  const Node& node = info.node;
  const Pod& pod = *f.pod;
  if (!node.ready) {
    c.failures = kFailNotReady;
    return c;
  }
  if (node.unschedulable && !f.tolerates_unschedulable) {
    c.failures = kFailUnschedulable;
    return c;
  }
  if (!pod.node_name.empty() && pod.node_name != node.name) {
    c.failures = kFailNodeName;
    return c;
  }
  for (const Taint& taint : node.taints) {
    if (IsHard(taint) && !ToleratesTaint(pod.tolerations, taint)) {
      c.failures = kFailTaint;
      c.taint = &taint;
      return c;
    }
  }
  if (f.has_node_affinity && !MatchesNodeAffinity(pod, node)) {
    c.failures = kFailAffinity;
    return c;
  }
  if (!f.host_ports.empty() &&
      HostPortsConflict(f.host_ports, info.used_host_ports)) {
    c.failures = kFailPorts;
    return c;
  }
  const Resources& req = f.requests;
  const Resources& alloc = node.allocatable;
  const Resources& used = info.requested;
  if (used.pods + 1 > alloc.pods) c.failures |= kFailTooManyPods;
  if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
    c.failures |= kFailCpu;
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    c.failures |= kFailMemory;
  }
  if (req.ephemeral_storage > 0 &&
      req.ephemeral_storage >
          alloc.ephemeral_storage - used.ephemeral_storage) {
    c.failures |= kFailEphemeralStorage;
  }
  for (size_t i = 0; i < req.scalar.size() && i < 64; ++i) {
    const auto& [name, amount] = req.scalar[i];
    if (amount == 0) continue;
    if (amount > alloc.Scalar(name) - used.Scalar(name)) {
      c.failures |= kFailScalar;
      c.scalars |= uint64_t{1} << i;
    }
  }
  return c;
}

std::vector<std::string> FailureReasons(
    const PodFilter& f, const NodeCheck& c,
    const std::vector<MetricTerm>* metrics) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 12; ++bit) {
    if ((c.failures & (1u << bit)) == 0) continue;
    if ((1u << bit) == kFailTaint) {
      out.push_back(c.taint != nullptr ? TaintReason(*c.taint)
                                       : "node(s) had untolerated taint");
    } else if ((1u << bit) == kFailScalar) {
      for (size_t i = 0; i < f.requests.scalar.size() && i < 64; ++i) {
        if (c.scalars & (uint64_t{1} << i)) {
          out.push_back(
              absl::StrCat("Insufficient ", f.requests.scalar[i].first));
        }
      }
    } else if ((1u << bit) == kFailMissingMetric) {
      out.push_back(MetricReason(metrics, c.metric));
    } else {
      out.push_back(kFixedReasons[bit]);
    }
  }
  return out;
}

void FilterSummary::Reset(const PodFilter* filter,
                          const std::vector<MetricTerm>* metrics) {
  filter_ = filter;
  metrics_config_ = metrics;
  std::fill(std::begin(counts_), std::end(counts_), 0);
  taints_.clear();
  scalars_.clear();
  metrics_.clear();
}

void FilterSummary::Add(const NodeCheck& c) {
  for (int bit = 0; bit < 12; ++bit) {
    if (c.failures & (1u << bit)) ++counts_[bit];
  }
  if ((c.failures & kFailTaint) && c.taint != nullptr) {
    auto it = std::find_if(taints_.begin(), taints_.end(), [&](const auto& e) {
      return e.first->key == c.taint->key && e.first->value == c.taint->value;
    });
    if (it == taints_.end()) {
      taints_.push_back({c.taint, 1});
    } else {
      ++it->second;
    }
  }
  if (c.failures & kFailScalar) {
    for (int i = 0; i < 64; ++i) {
      if (c.scalars & (uint64_t{1} << i)) {
        if (scalars_.size() <= static_cast<size_t>(i)) scalars_.resize(i + 1);
        ++scalars_[i];
      }
    }
  }
  if ((c.failures & kFailMissingMetric) && c.metric >= 0) {
    if (metrics_.size() <= static_cast<size_t>(c.metric)) {
      metrics_.resize(c.metric + 1);
    }
    ++metrics_[c.metric];
  }
}

std::string FilterSummary::Message(int num_nodes) const {
  std::vector<std::string> reasons;
  for (int bit = 0; bit < 12; ++bit) {
    if (counts_[bit] > 0 && kFixedReasons[bit] != nullptr) {
      reasons.push_back(absl::StrCat(counts_[bit], " ", kFixedReasons[bit]));
    }
  }
  for (const auto& [taint, count] : taints_) {
    reasons.push_back(absl::StrCat(count, " ", TaintReason(*taint)));
  }
  for (size_t i = 0; i < scalars_.size(); ++i) {
    if (scalars_[i] > 0 && filter_ != nullptr &&
        i < filter_->requests.scalar.size()) {
      reasons.push_back(absl::StrCat(scalars_[i], " Insufficient ",
                                     filter_->requests.scalar[i].first));
    }
  }
  for (size_t i = 0; i < metrics_.size(); ++i) {
    if (metrics_[i] > 0) {
      reasons.push_back(absl::StrCat(
          metrics_[i], " ", MetricReason(metrics_config_, static_cast<int>(i))));
    }
  }
  std::sort(reasons.begin(), reasons.end());
  std::string msg = absl::StrCat("0/", num_nodes, " nodes are available");
  if (reasons.empty()) return msg + ".";
  msg += ": ";
  constexpr absl::string_view kMore = ", ...";
  for (size_t i = 0; i < reasons.size(); ++i) {
    absl::string_view sep = i == 0 ? "" : ", ";
    // Keep room for the ellipsis or the final period.
    if (msg.size() + sep.size() + reasons[i].size() + kMore.size() + 1 >=
        kMaxMessageBytes) {
      msg += i == 0 ? "..." : std::string(kMore);  // cut: no final period
      return msg;
    }
    absl::StrAppend(&msg, sep, reasons[i]);
  }
  msg += ".";
  return msg;
}

std::string UnsupportedConstraints(const Pod& pod) {
  std::vector<const char*> what;
  if (pod.has_pod_affinity) what.push_back("pod affinity");
  if (pod.has_pod_anti_affinity) what.push_back("pod anti-affinity");
  if (pod.has_topology_spread) what.push_back("topology spread constraints");
  if (pod.has_claim_volumes) {
    what.push_back("volumes that need binding (PersistentVolumeClaim)");
  }
  if (what.empty()) return "";
  return absl::StrCat("pod requires ", absl::StrJoin(what, ", "),
                      ", which this scheduler does not support yet");
}

}  // namespace ms
