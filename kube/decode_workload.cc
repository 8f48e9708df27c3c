// Namespaces, the workloads topology spreading selects by (Services,
// ReplicaSets, StatefulSets, ReplicationControllers) and
// PodDisruptionBudgets, listed and watched; and the Lease of leader
// election, decoded alone.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "kube/decode_core.h"
#include "model/disruption_budget.h"
#include "model/topology_spread.h"

namespace ms::kube {
namespace decode_internal {
namespace {

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

// A Lease's document (its root, read as the apiserver's own answer).
Lease LeaseFrom(od::document& doc) {
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
}

}  // namespace

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

}  // namespace decode_internal

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

absl::StatusOr<Lease> DecodeLease(absl::string_view json) {
  simdjson::padded_string padded(json.data(), json.size());
  return decode_internal::Guard("Lease", [&] {
    simdjson::ondemand::document doc =
        decode_internal::Parser().iterate(padded);
    return decode_internal::LeaseFrom(doc);
  });
}

absl::StatusOr<std::string> DecodeGitVersion(absl::string_view json) {
  simdjson::padded_string padded(json.data(), json.size());
  return decode_internal::Guard("version", [&] {
    simdjson::ondemand::document doc =
        decode_internal::Parser().iterate(padded);
    return std::string(std::string_view(doc["gitVersion"]));
  });
}

}  // namespace ms::kube
