#include "kube/decode.h"

#include <simdjson.h>

#include <algorithm>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "model/image_names.h"
#include "model/quantity.h"

namespace ms::kube {
namespace {

namespace od = simdjson::ondemand;

// Decoding throws this (or simdjson's own error) internally; the public
// functions turn both into InvalidArgument.
struct DecodeError {
  std::string message;
};

absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

std::string String(od::value v) { return std::string(std::string_view(v)); }

bool IsNull(od::value& v) { return v.is_null(); }

std::map<std::string, std::string> StringMap(od::value v) {
  std::map<std::string, std::string> out;
  if (IsNull(v)) return out;
  for (od::field f : v.get_object()) {
    std::string key(std::string_view(f.unescaped_key()));
    out.emplace(std::move(key), String(f.value()));
  }
  return out;
}

std::vector<std::string> StringList(od::value v) {
  std::vector<std::string> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) out.push_back(String(item));
  return out;
}

int64_t TimeMs(od::value v) {
  if (IsNull(v)) return 0;
  std::string_view text = v;
  absl::StatusOr<int64_t> ms = ParseTimestampMs(AbslView(text));
  if (!ms.ok()) throw DecodeError{std::string(ms.status().message())};
  return *ms;
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// `n` digits of `text` from `pos` as a number; -1 if one is not a digit.
int Digits(absl::string_view text, size_t pos, size_t n) {
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A resource list such as requests, allocatable or overhead; `names`, when
// given, gets whether cpu and memory are named in it (even as "0").
Resources ResourceList(od::value v, RequestNames* names = nullptr) {
  Resources r;
  if (IsNull(v)) return r;
  for (od::field f : v.get_object()) {
    std::string_view name = f.unescaped_key();
    if (names != nullptr) {
      names->cpu |= name == kResourceCpu;
      names->memory |= name == kResourceMemory;
    }
    std::string_view text = f.value();
    absl::string_view q = AbslView(text);
    absl::StatusOr<int64_t> parsed =
        name == kResourceCpu ? ParseQuantityMilli(q) : ParseQuantityValue(q);
    if (absl::IsOutOfRange(parsed.status())) {
      parsed = absl::StartsWith(q, "-") ? -kMaxQuantity : kMaxQuantity;
    } else if (!parsed.ok()) {
      throw DecodeError{absl::StrCat("resource ", AbslView(name), ": ",
                                     parsed.status().message())};
    }
    *parsed = std::clamp(*parsed, -kMaxQuantity, kMaxQuantity);
    if (name == kResourceCpu) {
      r.milli_cpu = *parsed;
    } else if (name == kResourceMemory) {
      r.memory = *parsed;
    } else if (name == kResourceEphemeralStorage) {
      r.ephemeral_storage = *parsed;
    } else if (name == kResourcePods) {
      r.pods = *parsed;
    } else {
      r.SetScalar(std::string(name), *parsed);
    }
  }
  return r;
}

TaintEffect Effect(std::string_view s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  throw DecodeError{absl::StrCat("unknown taint effect \"", AbslView(s), "\"")};
}

SelectorOperator Operator(std::string_view s) {
  if (s == "In") return SelectorOperator::kIn;
  if (s == "NotIn") return SelectorOperator::kNotIn;
  if (s == "Exists") return SelectorOperator::kExists;
  if (s == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (s == "Gt") return SelectorOperator::kGt;
  if (s == "Lt") return SelectorOperator::kLt;
  throw DecodeError{
      absl::StrCat("unknown node selector operator \"", AbslView(s), "\"")};
}

std::vector<NodeSelectorRequirement> Requirements(od::value v) {
  std::vector<NodeSelectorRequirement> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    NodeSelectorRequirement req;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "key") {
        req.key = String(f.value());
      } else if (key == "operator") {
        req.op = Operator(f.value());
      } else if (key == "values") {
        req.values = StringList(f.value());
      }
    }
    out.push_back(std::move(req));
  }
  return out;
}

NodeSelectorTerm Term(od::value v) {
  NodeSelectorTerm term;
  if (IsNull(v)) return term;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "matchExpressions") {
      term.match_expressions = Requirements(f.value());
    } else if (key == "matchFields") {
      term.match_fields = Requirements(f.value());
    }
  }
  return term;
}

std::vector<NodeSelectorTerm> NodeSelectorTerms(od::value v) {
  std::vector<NodeSelectorTerm> terms;
  for (od::field f : v.get_object()) {
    if (std::string_view(f.unescaped_key()) != "nodeSelectorTerms") continue;
    for (od::value item : f.value().get_array()) {
      terms.push_back(Term(item));
    }
  }
  return terms;
}

// preferredDuringSchedulingIgnoredDuringExecution of node affinity.
std::vector<PreferredNodeTerm> PreferredNodeTerms(od::value v) {
  std::vector<PreferredNodeTerm> terms;
  if (IsNull(v)) return terms;
  for (od::value item : v.get_array()) {
    PreferredNodeTerm term;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "weight") {
        term.weight = static_cast<int32_t>(int64_t(f.value()));
      } else if (key == "preference") {
        term.preference = Term(f.value());
      }
    }
    terms.push_back(std::move(term));
  }
  return terms;
}

LabelOperator LabelOp(std::string_view s) {
  if (s == "In") return LabelOperator::kIn;
  if (s == "NotIn") return LabelOperator::kNotIn;
  if (s == "Exists") return LabelOperator::kExists;
  if (s == "DoesNotExist") return LabelOperator::kDoesNotExist;
  throw DecodeError{
      absl::StrCat("unknown label selector operator \"", AbslView(s), "\"")};
}

// A metav1.LabelSelector; null stays absent (it selects nothing). Values
// are checked as metav1.LabelSelectorAsSelector checks them, so a selector
// kube-scheduler cannot use is refused here too.
std::optional<LabelSelector> Selector(od::value v) {
  if (IsNull(v)) return std::nullopt;
  LabelSelector out;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "matchLabels") {
      out.match_labels = StringMap(f.value());
    } else if (key == "matchExpressions") {
      od::value list = f.value();
      if (IsNull(list)) continue;
      for (od::value item : list.get_array()) {
        LabelRequirement r;
        for (od::field rf : item.get_object()) {
          std::string_view rkey = rf.unescaped_key();
          if (rkey == "key") {
            r.key = String(rf.value());
          } else if (rkey == "operator") {
            r.op = LabelOp(rf.value());
          } else if (rkey == "values") {
            r.values = StringList(rf.value());
          }
        }
        const bool needs_values =
            r.op == LabelOperator::kIn || r.op == LabelOperator::kNotIn;
        if (needs_values == r.values.empty()) {
          throw DecodeError{absl::StrCat(
              "label selector requirement on \"", r.key, "\": ",
              needs_values ? "In and NotIn need values"
                           : "Exists and DoesNotExist take no values")};
        }
        out.match_expressions.push_back(std::move(r));
      }
    }
  }
  return out;
}

PodAffinityTerm AffinityTerm(od::value v) {
  PodAffinityTerm term;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "labelSelector") {
      term.label_selector = Selector(f.value());
    } else if (key == "namespaces") {
      term.namespaces = StringList(f.value());
    } else if (key == "namespaceSelector") {
      term.namespace_selector = Selector(f.value());
    } else if (key == "topologyKey") {
      term.topology_key = String(f.value());
    }
  }
  return term;
}

// A podAffinity or podAntiAffinity.
PodAffinityRules AffinityRules(od::value v) {
  PodAffinityRules rules;
  if (IsNull(v)) return rules;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value list = f.value();
    if (IsNull(list)) continue;
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      for (od::value item : list.get_array()) {
        rules.required.push_back(AffinityTerm(item));
      }
    } else if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      for (od::value item : list.get_array()) {
        WeightedPodAffinityTerm weighted;
        for (od::field wf : item.get_object()) {
          std::string_view wkey = wf.unescaped_key();
          if (wkey == "weight") {
            weighted.weight = static_cast<int32_t>(int64_t(wf.value()));
          } else if (wkey == "podAffinityTerm") {
            weighted.term = AffinityTerm(wf.value());
          }
        }
        rules.preferred.push_back(std::move(weighted));
      }
    }
  }
  return rules;
}

// A term that names no namespace and has no namespaceSelector applies to
// its own pod's namespace (known once the whole pod is read).
void ResolveTermNamespaces(Pod& pod) {
  auto resolve = [&](PodAffinityTerm& t) {
    if (t.namespaces.empty() && !t.namespace_selector) {
      t.namespaces.push_back(pod.namespace_);
    }
  };
  for (PodAffinityRules* rules : {&pod.pod_affinity, &pod.pod_anti_affinity}) {
    for (PodAffinityTerm& t : rules->required) resolve(t);
    for (WeightedPodAffinityTerm& t : rules->preferred) resolve(t.term);
  }
}

void Affinity(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "nodeAffinity") {
      if (IsNull(value)) continue;
      for (od::field nf : value.get_object()) {
        std::string_view nkey = nf.unescaped_key();
        od::value terms = nf.value();
        if (nkey == "requiredDuringSchedulingIgnoredDuringExecution") {
          if (!IsNull(terms)) {
            pod.required_node_affinity = NodeSelectorTerms(terms);
          }
        } else if (nkey == "preferredDuringSchedulingIgnoredDuringExecution") {
          pod.preferred_node_affinity = PreferredNodeTerms(terms);
        }
      }
    } else if (key == "podAffinity") {
      pod.pod_affinity = AffinityRules(value);
    } else if (key == "podAntiAffinity") {
      pod.pod_anti_affinity = AffinityRules(value);
    }
  }
}

std::vector<Toleration> Tolerations(od::value v) {
  std::vector<Toleration> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    Toleration t;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (key == "key") {
        t.key = String(value);
      } else if (key == "operator") {
        std::string_view op = value;
        if (op == "Exists") {
          t.op = TolerationOperator::kExists;
        } else if (op == "Equal" || op.empty()) {
          t.op = TolerationOperator::kEqual;
        } else {
          throw DecodeError{
              absl::StrCat("unknown toleration operator \"", AbslView(op), "\"")};
        }
      } else if (key == "value") {
        t.value = String(value);
      } else if (key == "effect") {
        std::string_view effect = value;
        if (!effect.empty()) t.effect = Effect(effect);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Container> Containers(od::value v) {
  std::vector<Container> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    Container c;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (key == "name") {
        c.name = String(value);
      } else if (key == "image") {
        c.image = String(value);
      } else if (key == "resources") {
        for (od::field rf : value.get_object()) {
          if (std::string_view(rf.unescaped_key()) == "requests") {
            c.requests = ResourceList(rf.value(), &c.named);
          }
        }
      } else if (key == "ports") {
        for (od::value port : value.get_array()) {
          ContainerPort p;
          for (od::field pf : port.get_object()) {
            std::string_view pkey = pf.unescaped_key();
            if (pkey == "hostPort") {
              p.host_port = static_cast<int32_t>(int64_t(pf.value()));
            } else if (pkey == "protocol") {
              p.protocol = String(pf.value());
            } else if (pkey == "hostIP") {
              p.host_ip = String(pf.value());
            }
          }
          c.ports.push_back(std::move(p));
        }
      } else if (key == "restartPolicy") {
        c.restart_always = std::string_view(value) == "Always";
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

NodeInclusionPolicy InclusionPolicy(std::string_view s) {
  if (s == "Honor") return NodeInclusionPolicy::kHonor;
  if (s == "Ignore") return NodeInclusionPolicy::kIgnore;
  throw DecodeError{
      absl::StrCat("unknown node inclusion policy \"", AbslView(s), "\"")};
}

// spec.topologySpreadConstraints.
std::vector<TopologySpreadConstraint> TopologySpread(od::value v) {
  std::vector<TopologySpreadConstraint> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    TopologySpreadConstraint c;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (IsNull(value)) continue;
      if (key == "maxSkew") {
        c.max_skew = static_cast<int32_t>(int64_t(value));
      } else if (key == "topologyKey") {
        c.topology_key = String(value);
      } else if (key == "whenUnsatisfiable") {
        std::string_view action = value;
        if (action == "DoNotSchedule") {
          c.when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
        } else if (action == "ScheduleAnyway") {
          c.when_unsatisfiable = UnsatisfiableAction::kScheduleAnyway;
        } else {
          throw DecodeError{absl::StrCat("unknown whenUnsatisfiable \"",
                                         AbslView(action), "\"")};
        }
      } else if (key == "labelSelector") {
        c.label_selector = Selector(value);
      } else if (key == "minDomains") {
        c.min_domains = static_cast<int32_t>(int64_t(value));
      } else if (key == "nodeAffinityPolicy") {
        c.node_affinity_policy = InclusionPolicy(value);
      } else if (key == "nodeTaintsPolicy") {
        c.node_taints_policy = InclusionPolicy(value);
      } else if (key == "matchLabelKeys") {
        c.match_label_keys = StringList(value);
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

// metadata.ownerReferences: the one with controller: true, if any.
std::optional<ControllerRef> Controller(od::value v) {
  if (IsNull(v)) return std::nullopt;
  for (od::value item : v.get_array()) {
    ControllerRef ref;
    bool controller = false;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (key == "apiVersion") {
        ref.api_version = String(value);
      } else if (key == "kind") {
        ref.kind = String(value);
      } else if (key == "name") {
        ref.name = String(value);
      } else if (key == "uid") {
        ref.uid = String(value);
      } else if (key == "controller") {
        controller = !IsNull(value) && bool(value);
      }
    }
    if (controller) return ref;
  }
  return std::nullopt;
}

// An inline disk's fields (InlineDisk), from its volume source.
InlineDisk Disk(InlineDisk::Kind kind, od::value v) {
  InlineDisk d{.kind = kind};
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "pdName" || key == "volumeID" || key == "iqn" ||
        key == "image") {
      d.id = String(value);
    } else if (key == "pool") {
      d.pool = String(value);
    } else if (key == "monitors") {
      d.monitors = StringList(value);
    } else if (key == "readOnly") {
      d.read_only = !IsNull(value) && bool(value);
    }
  }
  return d;
}

// spec.volumes: the claims of persistentVolumeClaim volumes, and of generic
// ephemeral ones (named after the volume here; PodFrom prefixes the pod's
// name once it is known); the inline disks.
void Volumes(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  for (od::value item : v.get_array()) {
    std::string volume;
    std::optional<PodClaim> claim;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (IsNull(value)) continue;
      if (key == "name") {
        volume = String(value);
      } else if (key == "persistentVolumeClaim") {
        claim = PodClaim{};
        for (od::field cf : value.get_object()) {
          if (std::string_view(cf.unescaped_key()) == "claimName") {
            claim->name = String(cf.value());
          }
        }
      } else if (key == "ephemeral") {
        claim = PodClaim{.ephemeral = true};
      } else if (key == "gcePersistentDisk") {
        pod.inline_disks.push_back(
            Disk(InlineDisk::Kind::kGcePersistentDisk, value));
      } else if (key == "awsElasticBlockStore") {
        pod.inline_disks.push_back(
            Disk(InlineDisk::Kind::kAwsElasticBlockStore, value));
      } else if (key == "iscsi") {
        pod.inline_disks.push_back(Disk(InlineDisk::Kind::kIscsi, value));
      } else if (key == "rbd") {
        pod.inline_disks.push_back(Disk(InlineDisk::Kind::kRbd, value));
      }
    }
    if (!claim) continue;
    if (claim->ephemeral) claim->name = std::move(volume);
    pod.claims.push_back(std::move(*claim));
  }
}

// Whether `v` is a list with at least one item.
bool NonEmptyList(od::value v) {
  if (IsNull(v)) return false;
  od::array list = v.get_array();
  const bool empty = list.is_empty();
  return !empty;
}

// spec.resources: the pod-level requests kube-scheduler takes instead of
// the containers' sum (cpu, memory, hugepages-*; anything else there is
// ignored, as IsSupportedPodLevelResource does).
void PodLevelRequests(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    if (std::string_view(f.unescaped_key()) != "requests") continue;
    Resources all = ResourceList(f.value(), &pod.pod_requests_named);
    Resources supported{.milli_cpu = all.milli_cpu, .memory = all.memory};
    for (const auto& [name, value] : all.scalar) {
      if (absl::StartsWith(name, "hugepages-")) {
        supported.SetScalar(name, value);
      }
    }
    if (pod.pod_requests_named.cpu || pod.pod_requests_named.memory ||
        !supported.scalar.empty()) {
      pod.pod_requests = std::move(supported);
    }
  }
}

void PodMetadata(od::value v, Pod& pod) {
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "name") {
      pod.name = String(value);
    } else if (key == "namespace") {
      pod.namespace_ = String(value);
    } else if (key == "uid") {
      pod.uid = String(value);
    } else if (key == "resourceVersion") {
      pod.resource_version = String(value);
    } else if (key == "labels") {
      pod.labels = StringMap(value);
    } else if (key == "deletionTimestamp") {
      pod.deleting = !IsNull(value);
    } else if (key == "ownerReferences") {
      pod.controller = Controller(value);
    } else if (key == "creationTimestamp") {
      pod.creation_time_ms = TimeMs(value);
    }
  }
}

void PodSpec(od::value v, Pod& pod) {
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "schedulerName") {
      pod.scheduler_name = String(value);
    } else if (key == "nodeName") {
      pod.node_name = String(value);
    } else if (key == "priority") {
      pod.priority = static_cast<int32_t>(int64_t(value));
    } else if (key == "preemptionPolicy") {
      pod.never_preempts = !IsNull(value) && String(value) == "Never";
    } else if (key == "nodeSelector") {
      pod.node_selector = StringMap(value);
    } else if (key == "affinity") {
      Affinity(value, pod);
    } else if (key == "tolerations") {
      pod.tolerations = Tolerations(value);
    } else if (key == "containers") {
      pod.containers = Containers(value);
    } else if (key == "initContainers") {
      pod.init_containers = Containers(value);
    } else if (key == "overhead") {
      pod.overhead = ResourceList(value);
    } else if (key == "resources") {
      PodLevelRequests(value, pod);
    } else if (key == "schedulingGates") {
      pod.scheduling_gated = NonEmptyList(value);
    } else if (key == "resourceClaims") {
      pod.has_resource_claims = NonEmptyList(value);
    } else if (key == "topologySpreadConstraints") {
      pod.topology_spread = TopologySpread(value);
    } else if (key == "volumes") {
      Volumes(value, pod);
    }
  }
}

PodPhase Phase(std::string_view s) {
  if (s == "Pending") return PodPhase::kPending;
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

// status.containerStatuses[] or initContainerStatuses[]: the resources of
// each container that reports any (in-place resize), appended to `out`.
void ContainerStatuses(od::value v, std::vector<ContainerResourceStatus>& out) {
  if (IsNull(v)) return;
  for (od::value item : v.get_array()) {
    ContainerResourceStatus status;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (key == "name") {
        status.name = String(value);
      } else if (key == "allocatedResources") {
        if (!IsNull(value)) {
          status.allocated = ResourceList(value, &status.named);
        }
      } else if (key == "resources") {
        if (IsNull(value)) continue;
        status.actual.emplace();
        for (od::field rf : value.get_object()) {
          if (std::string_view(rf.unescaped_key()) != "requests") continue;
          status.actual = ResourceList(rf.value(), &status.named);
        }
      }
    }
    // Without status.resources kube-scheduler charges the spec alone.
    if (status.actual) out.push_back(std::move(status));
  }
}

// The conditions kube-scheduler reads, the first of each type deciding:
// PodResizePending with reason Infeasible (IsPodResizeInfeasible), and
// DisruptionTarget True with reason PreemptionByScheduler
// (podTerminatingByPreemption).
void PodConditions(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  std::optional<bool> infeasible, preempted;
  for (od::value cond : v.get_array()) {
    std::string type, status, reason;
    for (od::field f : cond.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (IsNull(value)) continue;
      if (key == "type") type = String(value);
      if (key == "status") status = String(value);
      if (key == "reason") reason = String(value);
    }
    if (type == "PodResizePending" && !infeasible) {
      infeasible = reason == "Infeasible";
    }
    if (type == "DisruptionTarget" && !preempted) {
      preempted = status == "True" && reason == "PreemptionByScheduler";
    }
  }
  pod.resize_infeasible = infeasible.value_or(false);
  pod.preempted = preempted.value_or(false);
}

void PodStatus(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "phase") {
      pod.phase = Phase(f.value());
    } else if (key == "nominatedNodeName") {
      od::value value = f.value();
      if (!IsNull(value)) pod.nominated_node_name = String(value);
    } else if (key == "conditions") {
      PodConditions(f.value(), pod);
    } else if (key == "startTime") {
      od::value value = f.value();
      if (!IsNull(value)) pod.start_time_ms = TimeMs(value);
    } else if (key == "containerStatuses" || key == "initContainerStatuses") {
      ContainerStatuses(f.value(), pod.container_statuses);
    }
  }
}

Pod PodFrom(od::value v) {
  Pod pod;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      PodMetadata(f.value(), pod);
    } else if (key == "spec") {
      PodSpec(f.value(), pod);
    } else if (key == "status") {
      PodStatus(f.value(), pod);
    }
  }
  ResolveTermNamespaces(pod);
  for (PodClaim& claim : pod.claims) {
    if (claim.ephemeral) claim.name = absl::StrCat(pod.name, "-", claim.name);
  }
  return pod;
}

void NodeStatus(od::value v, Node& node) {
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "allocatable") {
      node.allocatable = ResourceList(value);
    } else if (key == "conditions") {
      if (IsNull(value)) continue;
      for (od::value cond : value.get_array()) {
        std::string type, status;
        for (od::field cf : cond.get_object()) {
          std::string_view ckey = cf.unescaped_key();
          if (ckey == "type") type = String(cf.value());
          if (ckey == "status") status = String(cf.value());
        }
        if (type == "Ready") node.ready = status == "True";
      }
    } else if (key == "images") {
      if (IsNull(value)) continue;
      for (od::value image : value.get_array()) {
        // The size may come after the names: take both, then intern.
        int64_t size = 0;
        std::vector<std::string_view> names;
        for (od::field imf : image.get_object()) {
          std::string_view ikey = imf.unescaped_key();
          od::value iv = imf.value();
          if (ikey == "sizeBytes" && !IsNull(iv)) {
            size = int64_t(iv);
          } else if (ikey == "names" && !IsNull(iv)) {
            for (od::value name : iv.get_array()) {
              names.push_back(std::string_view(name));
            }
          }
        }
        for (std::string_view name : names) {
          node.images.push_back(InternImageName(AbslView(name), size));
        }
      }
    } else if (key == "addresses") {
      if (IsNull(value)) continue;
      for (od::value addr : value.get_array()) {
        NodeAddress a;
        for (od::field af : addr.get_object()) {
          std::string_view akey = af.unescaped_key();
          if (akey == "type") a.type = String(af.value());
          if (akey == "address") a.address = String(af.value());
        }
        node.addresses.push_back(std::move(a));
      }
    }
  }
}

Namespace NamespaceFrom(od::value v) {
  Namespace ns;
  for (od::field f : v.get_object()) {
    if (std::string_view(f.unescaped_key()) != "metadata") continue;
    for (od::field mf : f.value().get_object()) {
      std::string_view key = mf.unescaped_key();
      if (key == "name") {
        ns.name = String(mf.value());
      } else if (key == "uid") {
        ns.uid = String(mf.value());
      } else if (key == "resourceVersion") {
        ns.resource_version = String(mf.value());
      } else if (key == "labels") {
        ns.labels = StringMap(mf.value());
      }
    }
  }
  return ns;
}

// A Service, ReplicaSet, StatefulSet or ReplicationController: its
// identity and spec.selector.
Workload WorkloadFrom(od::value v, WorkloadKind kind) {
  Workload w;
  w.kind = kind;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "name") {
          w.name = String(mf.value());
        } else if (mkey == "namespace") {
          w.namespace_ = String(mf.value());
        } else if (mkey == "uid") {
          w.uid = String(mf.value());
        } else if (mkey == "resourceVersion") {
          w.resource_version = String(mf.value());
        }
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        if (std::string_view(sf.unescaped_key()) != "selector") continue;
        od::value selector = sf.value();
        if (IsNull(selector)) continue;
        if (kind == WorkloadKind::kService ||
            kind == WorkloadKind::kReplicationController) {
          w.selector = LabelSelector{.match_labels = StringMap(selector)};
        } else {
          w.selector = Selector(selector);
        }
      }
    }
  }
  return w;
}

// Storage objects (model/volumes.h).

constexpr char kAnnStorageClass[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kAnnBindCompleted[] = "pv.kubernetes.io/bind-completed";
constexpr char kAnnSelectedNode[] = "volume.kubernetes.io/selected-node";

// The identity fields of metadata; false when `key` is not one of them.
template <typename T>
bool Identity(std::string_view key, od::value value, T& object) {
  if (key == "name") {
    object.name = String(value);
  } else if (key == "uid") {
    object.uid = String(value);
  } else if (key == "resourceVersion") {
    object.resource_version = String(value);
  } else {
    return false;
  }
  return true;
}

uint8_t AccessModes(od::value v) {
  uint8_t modes = 0;
  for (const std::string& m : StringList(v)) {
    if (m == "ReadWriteOnce") {
      modes |= kReadWriteOnce;
    } else if (m == "ReadOnlyMany") {
      modes |= kReadOnlyMany;
    } else if (m == "ReadWriteMany") {
      modes |= kReadWriteMany;
    } else if (m == "ReadWriteOncePod") {
      modes |= kReadWriteOncePod;
    } else {
      throw DecodeError{absl::StrCat("unknown access mode \"", m, "\"")};
    }
  }
  return modes;
}

VolumeMode VolumeModeOf(od::value v) {
  if (IsNull(v)) return VolumeMode::kFilesystem;
  std::string_view s = v;
  if (s == "Filesystem") return VolumeMode::kFilesystem;
  if (s == "Block") return VolumeMode::kBlock;
  throw DecodeError{absl::StrCat("unknown volume mode \"", AbslView(s), "\"")};
}

// `storage` of a resource list, in bytes.
int64_t Storage(od::value v) { return ResourceList(v).Scalar("storage"); }

// The beta storage-class annotation, which wins over spec.storageClassName
// on claims and volumes alike.
std::optional<std::string> AnnotatedClass(
    const std::map<std::string, std::string>& annotations) {
  auto it = annotations.find(kAnnStorageClass);
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

std::string OptionalString(od::value v) {
  return IsNull(v) ? std::string() : String(v);
}

PodDisruptionBudget BudgetFrom(od::value v) {
  PodDisruptionBudget b;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (IsNull(value)) continue;
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        od::value mv = mf.value();
        if (Identity(mkey, mv, b)) continue;
        if (mkey == "namespace") b.namespace_ = String(mv);
      }
    } else if (key == "spec") {
      for (od::field sf : value.get_object()) {
        if (std::string_view(sf.unescaped_key()) == "selector") {
          b.selector = Selector(sf.value());
        }
      }
    } else if (key == "status") {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        od::value sv = sf.value();
        if (IsNull(sv)) continue;
        if (skey == "disruptionsAllowed") {
          b.disruptions_allowed = static_cast<int32_t>(int64_t(sv));
        } else if (skey == "disruptedPods") {
          for (od::field pf : sv.get_object()) {
            b.disrupted_pods.emplace_back(std::string_view(pf.unescaped_key()));
          }
        }
      }
    }
  }
  return b;
}

PersistentVolumeClaim ClaimFrom(od::value v) {
  PersistentVolumeClaim c;
  std::optional<std::string> annotated_class, spec_class;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        od::value mv = mf.value();
        if (Identity(mkey, mv, c)) continue;
        if (mkey == "namespace") {
          c.namespace_ = String(mv);
        } else if (mkey == "deletionTimestamp") {
          c.deleting = !IsNull(mv);
        } else if (mkey == "ownerReferences") {
          std::optional<ControllerRef> owner = Controller(mv);
          if (owner) c.controller_uid = owner->uid;
        } else if (mkey == "annotations") {
          std::map<std::string, std::string> a = StringMap(mv);
          annotated_class = AnnotatedClass(a);
          c.bind_completed = a.contains(kAnnBindCompleted);
          if (auto it = a.find(kAnnSelectedNode); it != a.end()) {
            c.selected_node = it->second;
          }
        }
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        od::value sv = sf.value();
        if (skey == "storageClassName") {
          if (!IsNull(sv)) spec_class = String(sv);
        } else if (skey == "volumeName") {
          c.volume_name = OptionalString(sv);
        } else if (skey == "accessModes") {
          c.access_modes = AccessModes(sv);
        } else if (skey == "selector") {
          c.selector = Selector(sv);
        } else if (skey == "resources" && !IsNull(sv)) {
          for (od::field rf : sv.get_object()) {
            if (std::string_view(rf.unescaped_key()) == "requests") {
              c.storage_request = Storage(rf.value());
            }
          }
        } else if (skey == "volumeMode") {
          c.volume_mode = VolumeModeOf(sv);
        } else if (skey == "volumeAttributesClassName") {
          c.volume_attributes_class = OptionalString(sv);
        }
      }
    } else if (key == "status" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        if (std::string_view(sf.unescaped_key()) != "phase") continue;
        std::string phase = OptionalString(sf.value());
        c.phase = phase == "Bound"  ? ClaimPhase::kBound
                  : phase == "Lost" ? ClaimPhase::kLost
                                    : ClaimPhase::kPending;
      }
    }
  }
  c.storage_class = annotated_class ? *annotated_class
                                    : spec_class.value_or("");
  return c;
}

PersistentVolume VolumeFrom(od::value v) {
  PersistentVolume pv;
  std::optional<std::string> annotated_class;
  std::string spec_class;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        od::value mv = mf.value();
        if (Identity(mkey, mv, pv)) continue;
        if (mkey == "labels") {
          pv.labels = StringMap(mv);
        } else if (mkey == "deletionTimestamp") {
          pv.deleting = !IsNull(mv);
        } else if (mkey == "annotations") {
          annotated_class = AnnotatedClass(StringMap(mv));
        }
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        od::value sv = sf.value();
        if (skey == "storageClassName") {
          spec_class = OptionalString(sv);
        } else if (skey == "claimRef" && !IsNull(sv)) {
          ClaimRef ref;
          for (od::field cf : sv.get_object()) {
            std::string_view ckey = cf.unescaped_key();
            if (ckey == "namespace") ref.namespace_ = String(cf.value());
            if (ckey == "name") ref.name = String(cf.value());
            if (ckey == "uid") ref.uid = String(cf.value());
          }
          pv.claim_ref = std::move(ref);
        } else if (skey == "capacity") {
          pv.capacity = Storage(sv);
        } else if (skey == "accessModes") {
          pv.access_modes = AccessModes(sv);
        } else if (skey == "volumeMode") {
          pv.volume_mode = VolumeModeOf(sv);
        } else if (skey == "volumeAttributesClassName") {
          pv.volume_attributes_class = OptionalString(sv);
        } else if (skey == "nodeAffinity" && !IsNull(sv)) {
          for (od::field nf : sv.get_object()) {
            od::value required = nf.value();
            if (std::string_view(nf.unescaped_key()) == "required" &&
                !IsNull(required)) {
              pv.node_affinity = NodeSelectorTerms(required);
            }
          }
        } else if (skey == "csi" && !IsNull(sv)) {
          for (od::field cf : sv.get_object()) {
            std::string_view ckey = cf.unescaped_key();
            if (ckey == "driver") pv.csi_driver = String(cf.value());
            if (ckey == "volumeHandle") pv.csi_handle = String(cf.value());
          }
        }
      }
    } else if (key == "status" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        if (std::string_view(sf.unescaped_key()) != "phase") continue;
        std::string phase = OptionalString(sf.value());
        pv.phase = phase == "Available"  ? VolumePhase::kAvailable
                   : phase == "Bound"    ? VolumePhase::kBound
                   : phase == "Released" ? VolumePhase::kReleased
                   : phase == "Failed"   ? VolumePhase::kFailed
                                         : VolumePhase::kPending;
      }
    }
  }
  pv.storage_class = annotated_class ? *annotated_class : spec_class;
  return pv;
}

StorageClass StorageClassFrom(od::value v) {
  StorageClass sc;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        Identity(mf.unescaped_key(), mf.value(), sc);
      }
    } else if (key == "provisioner") {
      sc.provisioner = OptionalString(value);
    } else if (key == "volumeBindingMode") {
      std::string mode = OptionalString(value);
      if (mode == "Immediate") {
        sc.binding_mode = BindingMode::kImmediate;
      } else if (mode == "WaitForFirstConsumer") {
        sc.binding_mode = BindingMode::kWaitForFirstConsumer;
      } else if (!mode.empty()) {
        throw DecodeError{
            absl::StrCat("unknown volumeBindingMode \"", mode, "\"")};
      }
    } else if (key == "allowedTopologies" && !IsNull(value)) {
      for (od::value term : value.get_array()) {
        TopologySelectorTerm t;
        for (od::field tf : term.get_object()) {
          if (std::string_view(tf.unescaped_key()) != "matchLabelExpressions") {
            continue;
          }
          od::value list = tf.value();
          if (IsNull(list)) continue;
          for (od::value req : list.get_array()) {
            std::pair<std::string, std::vector<std::string>> r;
            for (od::field rf : req.get_object()) {
              std::string_view rkey = rf.unescaped_key();
              if (rkey == "key") r.first = String(rf.value());
              if (rkey == "values") r.second = StringList(rf.value());
            }
            t.push_back(std::move(r));
          }
        }
        sc.allowed_topologies.push_back(std::move(t));
      }
    }
  }
  return sc;
}

CsiNode CsiNodeFrom(od::value v) {
  CsiNode node;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        Identity(mf.unescaped_key(), mf.value(), node);
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        if (std::string_view(sf.unescaped_key()) != "drivers") continue;
        od::value drivers = sf.value();
        if (IsNull(drivers)) continue;
        for (od::value d : drivers.get_array()) {
          std::string name;
          std::optional<int64_t> count;
          for (od::field df : d.get_object()) {
            std::string_view dkey = df.unescaped_key();
            od::value dv = df.value();
            if (dkey == "name") {
              name = String(dv);
            } else if (dkey == "allocatable" && !IsNull(dv)) {
              for (od::field af : dv.get_object()) {
                od::value c = af.value();
                if (std::string_view(af.unescaped_key()) == "count" &&
                    !IsNull(c)) {
                  count = int64_t(c);
                }
              }
            }
          }
          if (count) node.attach_limits[name] = *count;
        }
      }
    }
  }
  return node;
}

Node NodeFrom(od::value v, const std::vector<std::string>& annotations) {
  Node node;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "name") {
          node.name = String(mf.value());
        } else if (mkey == "uid") {
          node.uid = String(mf.value());
        } else if (mkey == "resourceVersion") {
          node.resource_version = String(mf.value());
        } else if (mkey == "labels") {
          node.labels = StringMap(mf.value());
        } else if (mkey == "annotations" && !annotations.empty()) {
          od::value all = mf.value();
          if (IsNull(all)) continue;
          for (od::field af : all.get_object()) {
            std::string_view akey = af.unescaped_key();
            if (absl::c_linear_search(annotations, akey)) {
              node.annotations.emplace(akey, String(af.value()));
            }
          }
        }
      }
    } else if (key == "spec") {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        if (skey == "unschedulable") {
          node.unschedulable = bool(sf.value());
        } else if (skey == "taints") {
          od::value taints = sf.value();
          if (IsNull(taints)) continue;
          for (od::value item : taints.get_array()) {
            Taint t;
            for (od::field tf : item.get_object()) {
              std::string_view tkey = tf.unescaped_key();
              if (tkey == "key") t.key = String(tf.value());
              if (tkey == "value") t.value = String(tf.value());
              if (tkey == "effect") t.effect = Effect(tf.value());
            }
            node.taints.push_back(std::move(t));
          }
        }
      }
    } else if (key == "status") {
      NodeStatus(value, node);
    }
  }
  return node;
}

// Runs `fn` and turns any decoding failure into InvalidArgument.
template <typename Fn>
auto Guard(absl::string_view what, Fn fn) -> absl::StatusOr<decltype(fn())> {
  try {
    return fn();
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", what, ": ", e.what()));
  } catch (const DecodeError& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", what, ": ", e.message));
  }
}

// simdjson's parser is not thread-safe and costly to build: one per thread.
od::parser& Parser() {
  thread_local od::parser parser;
  return parser;
}

// A second one, for the objects of a list decoded one by one while the
// list's own document is still being iterated with Parser().
od::parser& ItemParser() {
  thread_local od::parser parser;
  return parser;
}

// A parser keeps the buffers of the largest document it has read, for the
// life of its thread. A page of a list (megabytes: 500 Nodes with their
// images) is far larger than any watch event the same informer thread
// reads afterwards, so once a page is decoded its buffers are given back.
void ReleaseLargeParsers() {
  constexpr size_t kKeep = size_t{1} << 20;
  if (Parser().capacity() > kKeep) Parser() = od::parser();
  if (ItemParser().capacity() > kKeep) ItemParser() = od::parser();
}

// How the list and watch core decodes one kind T:
//   static T From(od::value object, const DecodeContext<T>& context);
//       the object's decoder: throws DecodeError (or simdjson's error) when
//       it refuses the object
//   static const char* Resource(const DecodeContext<T>& context);
//       the resource's name, for RejectedObject ("pods")
//   static std::string ListName(const DecodeContext<T>& context);
//       what a list that fails to decode is called in the error ("PodList")
// Specialised below, for each kind.
template <typename T>
struct Codec;

// Decodes one object; on failure returns false and says why in `error`.
template <typename T>
bool TryFrom(od::value v, const DecodeContext<T>& context, T& out,
             std::string& error) {
  try {
    out = Codec<T>::From(v, context);
    return true;
  } catch (const simdjson::simdjson_error& e) {
    error = e.what();
  } catch (const DecodeError& e) {
    error = e.message;
  }
  return false;
}

// What can be read of a refused object's identity: metadata's name,
// namespace, uid and resourceVersion, each when it is a string. Skips
// everything else; throws only when the JSON itself is malformed.
RejectedObject IdentityFrom(od::value v, const char* resource) {
  RejectedObject r;
  r.resource = resource;
  od::object object;
  if (v.get_object().get(object) != simdjson::SUCCESS) return r;
  for (od::field f : object) {
    if (std::string_view(f.unescaped_key()) != "metadata") continue;
    od::object metadata;
    if (f.value().get_object().get(metadata) != simdjson::SUCCESS) continue;
    for (od::field mf : metadata) {
      std::string_view key = mf.unescaped_key();
      std::string_view text;
      if (mf.value().get_string().get(text) != simdjson::SUCCESS) continue;
      if (key == "name") r.name = std::string(text);
      if (key == "namespace") r.namespace_ = std::string(text);
      if (key == "uid") r.uid = std::string(text);
      if (key == "resourceVersion") r.resource_version = std::string(text);
    }
  }
  return r;
}

// The tombstone of a refused object: its identity and nothing else (no
// namespace for the cluster-scoped kinds).
template <typename T>
void IdentityInto(const RejectedObject& r, T& object) {
  if constexpr (requires { object.namespace_; }) {
    object.namespace_ = r.namespace_;
  }
  object.name = r.name;
  object.uid = r.uid;
  object.resource_version = r.resource_version;
}

// Iterates a list's document, handing each item to `item(value, list)`.
template <typename T, typename Item>
ObjectList<T> ListFrom(od::document& doc, Item item) {
  ObjectList<T> list;
  for (od::field f : doc.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "resourceVersion") list.resource_version = String(mf.value());
        if (mkey == "continue") list.continue_token = String(mf.value());
      }
    } else if (key == "items") {
      if (IsNull(value)) continue;
      for (od::value v : value.get_array()) item(v, list);
    }
  }
  return list;
}

WatchEventType EventType(std::string_view type) {
  if (type == "ADDED") return WatchEventType::kAdded;
  if (type == "MODIFIED") return WatchEventType::kModified;
  if (type == "DELETED") return WatchEventType::kDeleted;
  if (type == "BOOKMARK") return WatchEventType::kBookmark;
  if (type == "ERROR") return WatchEventType::kError;
  throw DecodeError{absl::StrCat("unknown event type \"", AbslView(type), "\"")};
}

absl::Status ErrorStatus(long http_status,  // NOLINT(runtime/int)
                         const std::string& reason, std::string message) {
  if (message.empty()) message = absl::StrCat("HTTP ", http_status);
  std::string text = reason.empty()
                         ? absl::StrCat("HTTP ", http_status, ": ", message)
                         : absl::StrCat("HTTP ", http_status, " ", reason,
                                        ": ", message);
  return absl::Status(CodeForHttpStatus(http_status, reason), text);
}

// Thrown out of a watch event's first pass when the decoder refuses the
// event's object (not the event itself).
struct ObjectRefused {
  std::string message;
};

// Fills `event` from its "object", once the event's type is known: an ERROR
// carries a Status, a BOOKMARK only a resourceVersion, a DELETED only the
// object's identity (a tombstone: handlers of a delete read no more, and a
// pod leaving the pending pods' field selector when it is bound is one
// DELETED per pod scheduled), the others a T.
template <typename T>
void EventObject(od::value object, const DecodeContext<T>& context,
                 WatchEvent<T>& event) {
  if (event.type == WatchEventType::kError) {
    int64_t code = 0;
    std::string reason, message;
    for (od::field f : object.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "code") code = f.value();
      if (key == "reason") reason = String(f.value());
      if (key == "message") message = String(f.value());
    }
    event.error = ErrorStatus(code, reason, std::move(message));
  } else if (event.type == WatchEventType::kBookmark) {
    for (od::field f : object.get_object()) {
      if (std::string_view(f.unescaped_key()) != "metadata") continue;
      for (od::field mf : f.value().get_object()) {
        if (std::string_view(mf.unescaped_key()) == "resourceVersion") {
          event.resource_version = String(mf.value());
        }
      }
    }
  } else if (event.type == WatchEventType::kDeleted) {
    IdentityInto(IdentityFrom(object, ""), event.object);
    event.resource_version = event.object.resource_version;
  } else {
    std::string error;
    if (!TryFrom(object, context, event.object, error)) {
      throw ObjectRefused{std::move(error)};
    }
    event.resource_version = event.object.resource_version;
  }
}

// The event whose object was refused, read again for its type and what
// can be read of the object's identity.
template <typename T>
WatchEvent<T> RefusedEvent(const simdjson::padded_string& padded,
                           const char* resource, std::string error) {
  WatchEvent<T> event;
  RejectedObject rejected;
  od::document doc = Parser().iterate(padded);
  for (od::field f : doc.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "type") event.type = EventType(f.value());
    if (key == "object") rejected = IdentityFrom(f.value(), resource);
  }
  rejected.resource = resource;
  rejected.error = std::move(error);
  IdentityInto(rejected, event.object);
  event.resource_version = rejected.resource_version;
  if (event.type != WatchEventType::kDeleted) {
    event.rejected = std::move(rejected);
  }
  return event;
}

template <>
struct Codec<Pod> {
  static Pod From(od::value v, const DecodeContext<Pod>&) { return PodFrom(v); }
  static const char* Resource(const DecodeContext<Pod>&) { return "pods"; }
  static std::string ListName(const DecodeContext<Pod>&) { return "PodList"; }
};

template <>
struct Codec<Node> {
  static Node From(od::value v, const DecodeContext<Node>& context) {
    return NodeFrom(v, context.annotations);
  }
  static const char* Resource(const DecodeContext<Node>&) { return "nodes"; }
  static std::string ListName(const DecodeContext<Node>&) { return "NodeList"; }
};

template <>
struct Codec<Namespace> {
  static Namespace From(od::value v, const DecodeContext<Namespace>&) {
    return NamespaceFrom(v);
  }
  static const char* Resource(const DecodeContext<Namespace>&) {
    return "namespaces";
  }
  static std::string ListName(const DecodeContext<Namespace>&) {
    return "NamespaceList";
  }
};

template <>
struct Codec<Workload> {
  static Workload From(od::value v, const DecodeContext<Workload>& context) {
    return WorkloadFrom(v, context.kind);
  }
  static const char* Resource(const DecodeContext<Workload>& context) {
    return WorkloadResource(context.kind);
  }
  static std::string ListName(const DecodeContext<Workload>& context) {
    return absl::StrCat(WorkloadResource(context.kind), " list");
  }
};

template <>
struct Codec<PodDisruptionBudget> {
  static PodDisruptionBudget From(od::value v,
                                  const DecodeContext<PodDisruptionBudget>&) {
    return BudgetFrom(v);
  }
  static const char* Resource(const DecodeContext<PodDisruptionBudget>&) {
    return "poddisruptionbudgets";
  }
  static std::string ListName(const DecodeContext<PodDisruptionBudget>&) {
    return "PodDisruptionBudgetList";
  }
};

template <>
struct Codec<PersistentVolumeClaim> {
  static PersistentVolumeClaim From(
      od::value v, const DecodeContext<PersistentVolumeClaim>&) {
    return ClaimFrom(v);
  }
  static const char* Resource(const DecodeContext<PersistentVolumeClaim>&) {
    return "persistentvolumeclaims";
  }
  static std::string ListName(const DecodeContext<PersistentVolumeClaim>&) {
    return "PersistentVolumeClaimList";
  }
};

template <>
struct Codec<PersistentVolume> {
  static PersistentVolume From(od::value v,
                               const DecodeContext<PersistentVolume>&) {
    return VolumeFrom(v);
  }
  static const char* Resource(const DecodeContext<PersistentVolume>&) {
    return "persistentvolumes";
  }
  static std::string ListName(const DecodeContext<PersistentVolume>&) {
    return "PersistentVolumeList";
  }
};

template <>
struct Codec<StorageClass> {
  static StorageClass From(od::value v, const DecodeContext<StorageClass>&) {
    return StorageClassFrom(v);
  }
  static const char* Resource(const DecodeContext<StorageClass>&) {
    return "storageclasses";
  }
  static std::string ListName(const DecodeContext<StorageClass>&) {
    return "StorageClassList";
  }
};

template <>
struct Codec<CsiNode> {
  static CsiNode From(od::value v, const DecodeContext<CsiNode>&) {
    return CsiNodeFrom(v);
  }
  static const char* Resource(const DecodeContext<CsiNode>&) {
    return "csinodes";
  }
  static std::string ListName(const DecodeContext<CsiNode>&) {
    return "CSINodeList";
  }
};

}  // namespace

// A list in one pass; when that fails, again one object at a time, so that
// the objects the decoder refuses are reported and the others kept. (After
// a failure in the middle of an object the iterator's position is not to be
// trusted, so each object is copied out and decoded on its own; this costs
// a second pass only for the rare list that holds a refused object.)
template <typename T>
absl::StatusOr<ObjectList<T>> DecodeList(absl::string_view json,
                                         const DecodeContext<T>& context) {
  const std::string what = Codec<T>::ListName(context);
  simdjson::padded_string padded(json.data(), json.size());
  absl::StatusOr<ObjectList<T>> list = Guard(what, [&] {
    od::document doc = Parser().iterate(padded);
    return ListFrom<T>(doc, [&](od::value v, ObjectList<T>& out) {
      out.items.push_back(Codec<T>::From(v, context));
    });
  });
  if (list.ok()) {
    ReleaseLargeParsers();
    return list;
  }
  list = Guard(what, [&] {
    od::document doc = Parser().iterate(padded);
    return ListFrom<T>(doc, [&](od::value v, ObjectList<T>& out) {
      od::object json_object = v.get_object();
      std::string_view raw = json_object.raw_json();
      simdjson::padded_string item(raw.data(), raw.size());
      T object;
      std::string error;
      {
        od::document item_doc = ItemParser().iterate(item);
        if (TryFrom(item_doc.get_value(), context, object, error)) {
          out.items.push_back(std::move(object));
          return;
        }
      }
      od::document item_doc = ItemParser().iterate(item);
      RejectedObject rejected =
          IdentityFrom(item_doc.get_value(), Codec<T>::Resource(context));
      rejected.error = std::move(error);
      out.rejected.push_back(std::move(rejected));
    });
  });
  ReleaseLargeParsers();
  return list;
}

// A watch event: its type, then its object (EventObject). When the object
// is refused, the event is read again for what can be read of it
// (RefusedEvent).
template <typename T>
absl::StatusOr<WatchEvent<T>> DecodeWatchEvent(
    absl::string_view line, const DecodeContext<T>& context) {
  simdjson::padded_string padded(line.data(), line.size());
  try {
    return Guard("watch event", [&] {
      WatchEvent<T> event;
      bool have_type = false;
      bool have_object = false;
      bool object_first = false;
      {
        od::document doc = Parser().iterate(padded);
        for (od::field f : doc.get_object()) {
          std::string_view key = f.unescaped_key();
          if (key == "type") {
            event.type = EventType(f.value());
            have_type = true;
          } else if (key == "object") {
            have_object = true;
            // The apiserver sends the type first, so the object is decoded
            // in the same pass; otherwise in a second pass below.
            if (have_type) {
              EventObject(f.value(), context, event);
            } else {
              object_first = true;
            }
          }
        }
      }
      if (!have_type) throw DecodeError{"event has no type"};
      if (!have_object) throw DecodeError{"event has no object"};
      if (object_first) {
        od::document doc = Parser().iterate(padded);
        for (od::field f : doc.get_object()) {
          if (std::string_view(f.unescaped_key()) == "object") {
            EventObject(f.value(), context, event);
          }
        }
      }
      return event;
    });
  } catch (ObjectRefused& refused) {
    return Guard("watch event", [&] {
      return RefusedEvent<T>(padded, Codec<T>::Resource(context),
                             std::move(refused.message));
    });
  }
}

template absl::StatusOr<ObjectList<Pod>> DecodeList(absl::string_view,
                                                    const DecodeContext<Pod>&);
template absl::StatusOr<WatchEvent<Pod>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Pod>&);
template absl::StatusOr<ObjectList<Node>> DecodeList(
    absl::string_view, const DecodeContext<Node>&);
template absl::StatusOr<WatchEvent<Node>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Node>&);
template absl::StatusOr<ObjectList<Namespace>> DecodeList(
    absl::string_view, const DecodeContext<Namespace>&);
template absl::StatusOr<WatchEvent<Namespace>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Namespace>&);
template absl::StatusOr<ObjectList<Workload>> DecodeList(
    absl::string_view, const DecodeContext<Workload>&);
template absl::StatusOr<WatchEvent<Workload>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Workload>&);
template absl::StatusOr<ObjectList<PodDisruptionBudget>> DecodeList(
    absl::string_view, const DecodeContext<PodDisruptionBudget>&);
template absl::StatusOr<WatchEvent<PodDisruptionBudget>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<PodDisruptionBudget>&);
template absl::StatusOr<ObjectList<PersistentVolumeClaim>> DecodeList(
    absl::string_view, const DecodeContext<PersistentVolumeClaim>&);
template absl::StatusOr<WatchEvent<PersistentVolumeClaim>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<PersistentVolumeClaim>&);
template absl::StatusOr<ObjectList<PersistentVolume>> DecodeList(
    absl::string_view, const DecodeContext<PersistentVolume>&);
template absl::StatusOr<WatchEvent<PersistentVolume>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<PersistentVolume>&);
template absl::StatusOr<ObjectList<StorageClass>> DecodeList(
    absl::string_view, const DecodeContext<StorageClass>&);
template absl::StatusOr<WatchEvent<StorageClass>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<StorageClass>&);
template absl::StatusOr<ObjectList<CsiNode>> DecodeList(
    absl::string_view, const DecodeContext<CsiNode>&);
template absl::StatusOr<WatchEvent<CsiNode>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<CsiNode>&);

absl::StatusOr<int64_t> ParseTimestampMs(absl::string_view text) {
  // The apiserver's own form, UTC with or without a fraction:
  // 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.000000Z, read by hand
  // (cctz's general parser was about 2 % of the scheduler's CPU per pod);
  // anything else goes to the general parser.
  if (text.size() >= 20 && text.back() == 'Z' && text[4] == '-' &&
      text[7] == '-' && text[10] == 'T' && text[13] == ':' &&
      text[16] == ':' && (text.size() == 20 || text[19] == '.')) {
    int year = Digits(text, 0, 4), month = Digits(text, 5, 2),
        day = Digits(text, 8, 2), hour = Digits(text, 11, 2),
        minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
    size_t fraction = text.size() == 20 ? 0 : text.size() - 21;
    int millis = 0;
    if (fraction > 0 && fraction <= 9) {
      int digits = Digits(text, 20, fraction);
      int scale = 1;
      for (size_t i = fraction; i < 9; ++i) scale *= 10;
      millis = digits < 0 ? -1 : digits * scale / 1000000;
    }
    static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    int month_days = month >= 1 && month <= 12
                         ? kMonthDays[month - 1] + (month == 2 && leap)
                         : 0;
    if (year >= 0 && day >= 1 && day <= month_days &&
        hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 &&
        second >= 0 && second <= 59 && fraction <= 9 && millis >= 0) {
      int64_t days = DaysFromCivil(year, month, day);
      return ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000 +
             millis;
    }
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad timestamp \"", text, "\""));
  }
  return absl::ToUnixMillis(t);
}

absl::StatusOr<Pod> DecodePod(absl::string_view json) {
  simdjson::padded_string padded(json.data(), json.size());
  return Guard("Pod", [&] {
    od::document doc = Parser().iterate(padded);
    return PodFrom(doc.get_value());
  });
}

absl::StatusOr<Node> DecodeNode(absl::string_view json,
                                const std::vector<std::string>& annotations) {
  simdjson::padded_string padded(json.data(), json.size());
  return Guard("Node", [&] {
    od::document doc = Parser().iterate(padded);
    return NodeFrom(doc.get_value(), annotations);
  });
}

absl::StatusOr<Lease> DecodeLease(absl::string_view json) {
  simdjson::padded_string padded(json.data(), json.size());
  return Guard("Lease", [&] {
    od::document doc = Parser().iterate(padded);
    Lease lease;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "metadata") {
        for (od::field mf : f.value().get_object()) {
          std::string_view mkey = mf.unescaped_key();
          if (mkey == "name") lease.name = String(mf.value());
          if (mkey == "namespace") lease.namespace_ = String(mf.value());
          if (mkey == "resourceVersion") {
            lease.resource_version = String(mf.value());
          }
        }
      } else if (key == "spec") {
        for (od::field sf : f.value().get_object()) {
          std::string_view skey = sf.unescaped_key();
          od::value value = sf.value();
          if (IsNull(value)) continue;
          if (skey == "holderIdentity") {
            lease.holder_identity = String(value);
          } else if (skey == "leaseDurationSeconds") {
            lease.lease_duration_seconds = static_cast<int32_t>(int64_t(value));
          } else if (skey == "leaseTransitions") {
            lease.lease_transitions = static_cast<int32_t>(int64_t(value));
          } else if (skey == "acquireTime") {
            lease.acquire_time = absl::FromUnixMillis(TimeMs(value));
          } else if (skey == "renewTime") {
            lease.renew_time = absl::FromUnixMillis(TimeMs(value));
          }
        }
      }
    }
    return lease;
  });
}

const char* WorkloadResource(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kService:
      return "services";
    case WorkloadKind::kReplicaSet:
      return "replicasets";
    case WorkloadKind::kStatefulSet:
      return "statefulsets";
    case WorkloadKind::kReplicationController:
      return "replicationcontrollers";
  }
  return "";
}

const char* WorkloadPath(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kService:
      return "/api/v1/services";
    case WorkloadKind::kReplicaSet:
      return "/apis/apps/v1/replicasets";
    case WorkloadKind::kStatefulSet:
      return "/apis/apps/v1/statefulsets";
    case WorkloadKind::kReplicationController:
      return "/api/v1/replicationcontrollers";
  }
  return "";
}

absl::StatusCode CodeForHttpStatus(long http_status,  // NOLINT(runtime/int)
                                   absl::string_view reason) {
  switch (http_status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      // Creating what exists, versus a write that lost a race (a stale
      // resourceVersion, a pod already bound).
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;  // resourceVersion expired
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (http_status >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

absl::Status DecodeErrorStatus(long http_status,  // NOLINT(runtime/int)
                               absl::string_view body) {
  std::string reason;
  std::string message;
  simdjson::padded_string padded(body.data(), body.size());
  try {
    od::document doc = Parser().iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "reason") reason = String(f.value());
      if (key == "message") message = String(f.value());
    }
  } catch (const simdjson::simdjson_error&) {
    message = std::string(body.substr(0, 512));
  }
  return ErrorStatus(http_status, reason, std::move(message));
}

}  // namespace ms::kube
