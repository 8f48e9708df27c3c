#include "scheduler/cycle/cluster_watch.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ms {

template <typename T>
void ClusterWatch::Add(
    const std::string& name, const std::string& part,
    kube::InformerSource<T> source,
    std::function<void(const T&, bool deleted)> on_change,
    std::function<void(const kube::RejectedObject&)> on_reject,
    kube::InformerOptions options) {
  LivenessMonitor::Part& busy_part = liveness_.Register(part);
  auto handler = [this, &busy_part, on_change](bool deleted) {
    return [this, &busy_part, on_change, deleted](const T& object) {
      LivenessMonitor::Busy busy(liveness_, busy_part);
      on_change(object, deleted);
    };
  };
  auto informer = std::make_shared<kube::Informer<T>>(
      name, std::move(source),
      kube::InformerHandlers<T>{.on_add = handler(false),
                                .on_update = handler(false),
                                .on_delete = handler(true),
                                .on_reject = std::move(on_reject)},
      std::move(options));
  informers_.push_back({.start = [informer] { informer->Start(); },
                        .cancel = [informer] { informer->Cancel(); },
                        .stop = [informer] { informer->Stop(); },
                        .synced =
                            [informer](absl::Duration wait) {
                              return informer->WaitForSync(wait);
                            }});
}

ClusterWatch::ClusterWatch(kube::KubeClient& client, const Config& config,
                           Scheduler& scheduler, Shadow* shadow,
                           LivenessMonitor& liveness, Registry& registry)
    : liveness_(liveness),
      rejected_(registry.AddCounter(
          "metrics_scheduler_objects_rejected_total",
          "Objects from the apiserver this scheduler could not decode, by "
          "resource (each version once).",
          {"resource"})) {
  // A series for each resource watched, from the start.
  for (const char* resource :
       {"pods", "nodes", "namespaces", "poddisruptionbudgets",
        "persistentvolumeclaims", "persistentvolumes", "storageclasses",
        "csinodes", "csidrivers", "csistoragecapacities", "deviceclasses"}) {
    rejected_.With({resource});
  }
  for (WorkloadKind kind : kWorkloadKinds) {
    rejected_.With({kube::WorkloadResource(kind)});
  }
  WatchCluster(client, config, scheduler);
  WatchPending(client, config, scheduler, shadow);
}

void ClusterWatch::Count(const kube::RejectedObject& rejected) {
  rejected_.With({rejected.resource}).Inc();
}

void ClusterWatch::WatchCluster(kube::KubeClient& client, const Config& config,
                                Scheduler& scheduler) {
  auto count = [this](const kube::RejectedObject& r) { Count(r); };
  // Namespaces' labels, for pod affinity terms' namespaceSelector.
  Add<Namespace>(
      "namespaces", "namespaces informer", kube::NamespaceSource(client, {}),
      [&scheduler](const Namespace& n, bool deleted) {
        deleted ? scheduler.OnNamespaceDeleted(n) : scheduler.OnNamespace(n);
      },
      count);
  // Services, ReplicaSets, StatefulSets, ReplicationControllers: their
  // selectors, for the pods that get the default topology spread.
  for (WorkloadKind kind : kWorkloadKinds) {
    const std::string resource = kube::WorkloadResource(kind);
    Add<Workload>(
        resource, resource + " informer",
        kube::WorkloadSource(client, kind, {}),
        [&scheduler, kind](const Workload& w, bool deleted) {
          if (!deleted) return scheduler.OnWorkload(w);
          Workload gone = w;
          gone.kind = kind;  // tombstones have none
          scheduler.OnWorkloadDeleted(gone);
        },
        count);
  }
  // Any scheduler's pods waiting on the room a preemption freed for them.
  Add<Pod>(
      "nominated pods", "nominated pods informer",
      kube::PodSource(client, {.field_selector = kube::kNominatedPodsSelector}),
      [&scheduler](const Pod& p, bool deleted) {
        scheduler.OnNominatedPod(p, deleted);
      },
      count);
  // PodDisruptionBudgets, for preemption.
  Add<PodDisruptionBudget>(
      "poddisruptionbudgets", "poddisruptionbudgets informer",
      kube::BudgetSource(client),
      [&scheduler](const PodDisruptionBudget& b, bool deleted) {
        scheduler.OnBudget(b, deleted);
      },
      count);
  // PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
  // CSIDrivers, CSIStorageCapacities: for the volume plugins.
  auto storage = [&scheduler](const auto& object, bool deleted) {
    scheduler.OnStorage(object, deleted);
  };
  Add<PersistentVolumeClaim>("persistentvolumeclaims",
                             "persistentvolumeclaims informer",
                             kube::ClaimSource(client), storage, count);
  Add<PersistentVolume>("persistentvolumes", "persistentvolumes informer",
                        kube::VolumeSource(client), storage, count);
  Add<StorageClass>("storageclasses", "storageclasses informer",
                    kube::StorageClassSource(client), storage, count);
  Add<CsiNode>("csinodes", "csinodes informer", kube::CsiNodeSource(client),
               storage, count);
  Add<CsiDriver>("csidrivers", "csidrivers informer",
                 kube::CsiDriverSource(client), storage, count);
  Add<CsiStorageCapacity>("csistoragecapacities",
                          "csistoragecapacities informer",
                          kube::CapacitySource(client), storage, count);
  // DeviceClasses: the extended resources dynamic resource allocation
  // provides. A cluster with resource.k8s.io turned off has none.
  Add<DeviceClass>("deviceclasses", "deviceclasses informer",
                   kube::DeviceClassSource(client),
                   [&scheduler](const DeviceClass& c, bool deleted) {
                     scheduler.OnDeviceClass(c, deleted);
                   },
                   count, {.absent_is_empty = true});
  Add<Node>(
      "nodes", "nodes informer",
      kube::NodeSource(client, {.node_annotations = NodeAnnotationKeys(config)},
                       [&scheduler](std::string_view name, uint64_t digest,
                                    std::vector<uint32_t>& images) {
                         return scheduler.state().KnownImages(name, digest,
                                                              images);
                       }),
      [&scheduler](const Node& n, bool deleted) {
        deleted ? scheduler.OnNodeDeleted(n) : scheduler.OnNode(n);
      },
      count);
  Add<Pod>(
      "assigned pods", "assigned pods informer",
      kube::PodSource(client,
                      {.field_selector = "spec.nodeName!=,status.phase!="
                                         "Succeeded,status.phase!=Failed"}),
      [&scheduler](const Pod& p, bool deleted) {
        deleted ? scheduler.OnAssignedPodDeleted(p)
                : scheduler.OnAssignedPod(p);
      },
      count);
}

void ClusterWatch::WatchPending(kube::KubeClient& client, const Config& config,
                                Scheduler& scheduler, Shadow* shadow) {
  const std::vector<std::string> pending_of =
      shadow != nullptr ? std::vector<std::string>{shadow->watched()}
                        : SchedulerNames(config);
  for (const std::string& name : pending_of) {
    const std::string part =
        pending_of.size() == 1
            ? std::string("pending pods informer")
            : absl::StrCat("pending pods informer (", name, ")");
    const std::string selector =
        shadow != nullptr
            ? absl::StrCat("spec.schedulerName=", name)
            : absl::StrCat("spec.schedulerName=", name, ",spec.nodeName=");
    Add<Pod>(
        "pending pods", part,
        kube::PodSource(client, {.field_selector = selector}),
        [&scheduler, shadow](const Pod& p, bool deleted) {
          if (shadow != nullptr) {
            deleted ? shadow->OnPodDeleted(p) : shadow->OnPod(p);
          } else {
            deleted ? scheduler.OnPendingPodDeleted(p)
                    : scheduler.OnPendingPod(p);
          }
        },
        [this, &scheduler, shadow](const kube::RejectedObject& r) {
          Count(r);
          if (shadow == nullptr) scheduler.OnPendingPodRejected(r);
        });
  }
}

ClusterWatch::~ClusterWatch() { Stop(); }

void ClusterWatch::Start() {
  for (Entry& e : informers_) e.start();
}

bool ClusterWatch::Synced(absl::Duration wait) {
  for (Entry& e : informers_) {
    if (!e.synced(wait)) return false;
  }
  return true;
}

void ClusterWatch::Stop() {
  // The pending pods first: no pod is queued once the stop has begun.
  for (auto it = informers_.rbegin(); it != informers_.rend(); ++it) {
    it->cancel();
  }
  for (auto it = informers_.rbegin(); it != informers_.rend(); ++it) {
    it->stop();
  }
}

}  // namespace ms
