// The storage objects the volume plugins read (model/volumes.h):
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// CSIDrivers and CSIStorageCapacities.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kube/decode_core.h"
#include "model/volumes.h"

namespace ms::kube {
namespace decode_internal {
namespace {

// Storage objects (model/volumes.h).

constexpr char kAnnStorageClass[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kAnnBindCompleted[] = "pv.kubernetes.io/bind-completed";
constexpr char kAnnSelectedNode[] = "volume.kubernetes.io/selected-node";

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
  c.storage_class =
      annotated_class ? *annotated_class : spec_class.value_or("");
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
              node.drivers.insert(name);
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

CsiDriver CsiDriverFrom(od::value v) {
  CsiDriver driver;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        Identity(mf.unescaped_key(), mf.value(), driver);
      }
    } else if (key == "spec" && !IsNull(value)) {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        od::value sv = sf.value();
        if (IsNull(sv)) continue;
        if (skey == "preventPodSchedulingIfMissing") {
          driver.prevent_scheduling_if_missing = bool(sv);
        } else if (skey == "storageCapacity") {
          driver.storage_capacity = bool(sv);
        }
      }
    }
  }
  return driver;
}

// The quantity of storage `field`, in bytes.
int64_t Bytes(od::value v, std::string_view field) {
  absl::StatusOr<int64_t> parsed = SaturatedQuantity(v, /*milli=*/false);
  if (!parsed.ok()) {
    throw DecodeError{
        absl::StrCat(AbslView(field), ": ", parsed.status().message())};
  }
  return *parsed;
}

CsiStorageCapacity CapacityFrom(od::value v) {
  CsiStorageCapacity c;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "namespace") {
          c.namespace_ = String(mf.value());
        } else {
          Identity(mkey, mf.value(), c);
        }
      }
    } else if (IsNull(value)) {
      continue;
    } else if (key == "storageClassName") {
      c.storage_class = String(value);
    } else if (key == "nodeTopology") {
      c.node_topology = Selector(value);
    } else if (key == "capacity") {
      c.capacity = Bytes(value, key);
    } else if (key == "maximumVolumeSize") {
      c.maximum_volume_size = Bytes(value, key);
    }
  }
  return c;
}

}  // namespace

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

template <>
struct Codec<CsiStorageCapacity> {
  static CsiStorageCapacity From(od::value v,
                                 const DecodeContext<CsiStorageCapacity>&) {
    return CapacityFrom(v);
  }
  static const char* Resource(const DecodeContext<CsiStorageCapacity>&) {
    return "csistoragecapacities";
  }
  static std::string ListName(const DecodeContext<CsiStorageCapacity>&) {
    return "CSIStorageCapacityList";
  }
};

template <>
struct Codec<CsiDriver> {
  static CsiDriver From(od::value v, const DecodeContext<CsiDriver>&) {
    return CsiDriverFrom(v);
  }
  static const char* Resource(const DecodeContext<CsiDriver>&) {
    return "csidrivers";
  }
  static std::string ListName(const DecodeContext<CsiDriver>&) {
    return "CSIDriverList";
  }
};

}  // namespace decode_internal

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
template absl::StatusOr<ObjectList<CsiStorageCapacity>> DecodeList(
    absl::string_view, const DecodeContext<CsiStorageCapacity>&);
template absl::StatusOr<WatchEvent<CsiStorageCapacity>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<CsiStorageCapacity>&);
template absl::StatusOr<ObjectList<CsiDriver>> DecodeList(
    absl::string_view, const DecodeContext<CsiDriver>&);
template absl::StatusOr<WatchEvent<CsiDriver>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<CsiDriver>&);

}  // namespace ms::kube
