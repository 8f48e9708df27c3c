// Pods: the fields placement reads (model/pod.h).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kube/decode_core.h"
#include "model/metrics.h"
#include "model/node_features.h"

namespace ms::kube {
namespace decode_internal {
namespace {

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
          throw DecodeError{absl::StrCat("unknown toleration operator \"",
                                         AbslView(op), "\"")};
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

// Whether `v` is a list with at least one item.
bool NonEmptyList(od::value v) {
  if (IsNull(v)) return false;
  od::array list = v.get_array();
  const bool empty = list.is_empty();
  return !empty;
}

// The node features a container's spec needs (model/node_features.h): a
// restart rule restarting every container, a volume mount with bind mount
// options.
uint32_t ContainerFeature(std::string_view key, od::value value) {
  uint32_t out = 0;
  if (IsNull(value)) return out;
  if (key == "restartPolicyRules") {
    for (od::value rule : value.get_array()) {
      for (od::field rf : rule.get_object()) {
        if (std::string_view(rf.unescaped_key()) == "action" &&
            String(rf.value()) == "RestartAllContainers") {
          out |= kFeatureRestartAllContainers;
        }
      }
    }
  } else if (key == "volumeMounts") {
    for (od::value mount : value.get_array()) {
      for (od::field mf : mount.get_object()) {
        if (std::string_view(mf.unescaped_key()) == "bindMountOptions" &&
            NonEmptyList(mf.value())) {
          out |= kFeatureVolumeBindMountOptions;
        }
      }
    }
  }
  return out;
}

// spec.ephemeralContainers: only what they need of the node.
uint32_t EphemeralContainerFeatures(od::value v) {
  uint32_t out = 0;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "volumeMounts") out |= ContainerFeature(key, f.value());
    }
  }
  return out;
}

// spec.containers or initContainers; what they need of the node is added
// to *features.
std::vector<Container> Containers(od::value v, uint32_t* features) {
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
          const std::string_view rkey = rf.unescaped_key();
          if (rkey == "requests") {
            c.requests = ResourceList(rf.value(), &c.named);
          } else if (rkey == "limits") {
            c.limits = ResourceList(rf.value());
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
      } else if (key == "restartPolicyRules" || key == "volumeMounts") {
        *features |= ContainerFeature(key, value);
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
// name once it is known); the inline disks; whether any keeps data on the
// node (emptyDir, hostPath).
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
      } else if (key == "emptyDir" || key == "hostPath") {
        pod.local_storage = true;
      } else if (key == "image") {
        std::string& reference = pod.image_volumes.emplace_back();
        for (od::field imf : value.get_object()) {
          if (std::string_view(imf.unescaped_key()) == "reference") {
            reference = String(imf.value());
          }
        }
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

// spec.resources: the pod-level requests kube-scheduler takes instead of
// the containers' sum (cpu, memory, hugepages-*; anything else there is
// ignored, as IsSupportedPodLevelResource does), and the limits.
void PodLevelResources(od::value v, Pod& pod) {
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    const std::string_view key = f.unescaped_key();
    if (key == "limits") {
      pod.pod_limits = ResourceList(f.value());
      continue;
    }
    if (key != "requests") continue;
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

// The annotations: estimate.metrics-scheduler.io/<metric>, by metric, into
// pod.estimates, and whether kubernetes.io/config.mirror is there; the
// others are not kept.
void Annotations(od::value v, Pod& pod) {
  std::map<std::string, std::string>& out = pod.estimates;
  out.clear();
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "kubernetes.io/config.mirror") {
      pod.mirror = true;
      continue;
    }
    constexpr std::string_view kPrefix = kEstimateAnnotationPrefix;
    if (key.size() > kPrefix.size() && key.substr(0, kPrefix.size()) == kPrefix) {
      out.emplace(std::string(key.substr(kPrefix.size())), String(f.value()));
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
    } else if (key == "annotations") {
      Annotations(value, pod);
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
  bool host_network = false;
  bool no_host_users = false;  // hostUsers: false (a user namespace)
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
      pod.containers = Containers(value, &pod.required_features);
    } else if (key == "initContainers") {
      pod.init_containers = Containers(value, &pod.required_features);
    } else if (key == "ephemeralContainers") {
      pod.required_features |= EphemeralContainerFeatures(value);
    } else if (key == "hostNetwork") {
      host_network = !IsNull(value) && bool(value);
    } else if (key == "hostUsers") {
      no_host_users = !IsNull(value) && !bool(value);
    } else if (key == "overhead") {
      pod.overhead = ResourceList(value);
    } else if (key == "resources") {
      PodLevelResources(value, pod);
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
  if (host_network && no_host_users) {
    pod.required_features |= kFeatureUserNamespacesHostNetwork;
  }
}

PodPhase Phase(std::string_view s) {
  if (s == "Pending") return PodPhase::kPending;
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

// A status's resources (ResourceRequirements): its requests into `actual`
// (with which of cpu and memory they name); `without_requests` when it is
// set but has none.
void StatusResources(od::value v, std::optional<Resources>& actual,
                     RequestNames& named, bool& without_requests) {
  if (IsNull(v)) return;
  for (od::field f : v.get_object()) {
    if (std::string_view(f.unescaped_key()) != "requests") continue;
    od::value requests = f.value();
    if (!IsNull(requests)) actual = ResourceList(requests, &named);
  }
  without_requests = !actual.has_value();
}

// status.containerStatuses[] or initContainerStatuses[]: the resources of
// each container that reports any (allocatedResources or resources; in-place
// resize), appended to `out`.
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
          status.allocated = ResourceList(value, &status.allocated_named);
        }
      } else if (key == "resources") {
        StatusResources(value, status.actual, status.actual_named,
                        status.resources_without_requests);
      }
    }
    // One that reports neither is charged as one with no status.
    if (status.allocated || status.reports_resources()) {
      out.push_back(std::move(status));
    }
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
    } else if (key == "allocatedResources") {
      // The pod-level ones (kubelets from 1.36).
      od::value value = f.value();
      PodResourceStatus& status = pod.resource_status;
      if (!IsNull(value)) {
        status.allocated = ResourceList(value, &status.allocated_named);
      }
    } else if (key == "resources") {
      PodResourceStatus& status = pod.resource_status;
      StatusResources(f.value(), status.actual, status.actual_named,
                      status.resources_without_requests);
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

}  // namespace

template <>
struct Codec<Pod> {
  static Pod From(od::value v, const DecodeContext<Pod>&) { return PodFrom(v); }
  static const char* Resource(const DecodeContext<Pod>&) { return "pods"; }
  static std::string ListName(const DecodeContext<Pod>&) { return "PodList"; }
};

}  // namespace decode_internal

template absl::StatusOr<ObjectList<Pod>> DecodeList(absl::string_view,
                                                    const DecodeContext<Pod>&);
template absl::StatusOr<WatchEvent<Pod>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Pod>&);

absl::StatusOr<Pod> DecodePod(absl::string_view json) {
  return decode_internal::DecodeObject<Pod>(json, "Pod");
}

}  // namespace ms::kube
