#include "kube/informer.h"

namespace ms::kube {

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Pod* pod) {
  size_t slash = key.find('/');
  pod->namespace_ = key.substr(0, slash);
  pod->name = slash == std::string::npos ? "" : key.substr(slash + 1);
  pod->uid = uid;
  pod->resource_version = resource_version;
}

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Node* node) {
  node->name = key;
  node->uid = uid;
  node->resource_version = resource_version;
}

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Namespace* ns) {
  ns->name = key;
  ns->uid = uid;
  ns->resource_version = resource_version;
}

namespace {

// A namespaced object's tombstone, from its "namespace/name" key.
template <typename T>
void NamespacedTombstone(const std::string& key, const std::string& uid,
                         const std::string& resource_version, T* object) {
  const size_t slash = key.find('/');
  object->namespace_ = key.substr(0, slash);
  object->name = slash == std::string::npos ? key : key.substr(slash + 1);
  object->uid = uid;
  object->resource_version = resource_version;
}

}  // namespace

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Workload* w) {
  NamespacedTombstone(key, uid, resource_version, w);
}

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   PersistentVolumeClaim* claim) {
  NamespacedTombstone(key, uid, resource_version, claim);
}

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   PodDisruptionBudget* budget) {
  NamespacedTombstone(key, uid, resource_version, budget);
}

namespace {

// A source over a cluster-wide path and the resource's decoders.
template <typename T>
InformerSource<T> PathSource(
    KubeClient& client, std::string path,
    absl::StatusOr<ObjectList<T>> (*list)(absl::string_view),
    absl::StatusOr<WatchEvent<T>> (*watch)(absl::string_view)) {
  return {
      .list =
          [&client, path, list](const std::function<void(ObjectList<T>&)>& page) {
            return client.List<T>(path, {}, list, page);
          },
      .watch = [&client, path, watch](
                   const std::string& rv,
                   const std::function<bool(WatchEvent<T>&)>& fn,
                   const std::atomic<bool>* cancel) {
        return client.Watch<T>(path, {}, rv, fn, watch, cancel);
      },
  };
}

}  // namespace

InformerSource<PersistentVolumeClaim> ClaimSource(KubeClient& client) {
  return PathSource<PersistentVolumeClaim>(client,
                                           kClaimsPath,
                                           DecodeClaimList,
                                           DecodeClaimWatchEvent);
}

InformerSource<PersistentVolume> VolumeSource(KubeClient& client) {
  return PathSource<PersistentVolume>(client, kVolumesPath,
                                      DecodeVolumeList, DecodeVolumeWatchEvent);
}

InformerSource<StorageClass> StorageClassSource(KubeClient& client) {
  return PathSource<StorageClass>(client,
                                  kStorageClassesPath,
                                  DecodeStorageClassList,
                                  DecodeStorageClassWatchEvent);
}

InformerSource<CsiNode> CsiNodeSource(KubeClient& client) {
  return PathSource<CsiNode>(client, kCsiNodesPath,
                             DecodeCsiNodeList, DecodeCsiNodeWatchEvent);
}

InformerSource<Pod> PodSource(KubeClient& client, ListOptions options) {
  return {
      .list =
          [&client, options](
              const std::function<void(ObjectList<Pod>&)>& page) {
            return client.ListPods(options, page);
          },
      .watch =
          [&client, options](const std::string& rv,
                             const std::function<bool(WatchEvent<Pod>&)>& fn,
                             const std::atomic<bool>* cancel) {
            return client.WatchPods(options, rv, fn, cancel);
          },
  };
}

InformerSource<Node> NodeSource(KubeClient& client, ListOptions options) {
  return {
      .list =
          [&client, options](
              const std::function<void(ObjectList<Node>&)>& page) {
            return client.ListNodes(options, page);
          },
      .watch =
          [&client, options](const std::string& rv,
                             const std::function<bool(WatchEvent<Node>&)>& fn,
                             const std::atomic<bool>* cancel) {
            return client.WatchNodes(options, rv, fn, cancel);
          },
  };
}

InformerSource<Namespace> NamespaceSource(KubeClient& client,
                                          ListOptions options) {
  return {
      .list =
          [&client, options](
              const std::function<void(ObjectList<Namespace>&)>& page) {
            return client.ListNamespaces(options, page);
          },
      .watch = [&client, options](
                   const std::string& rv,
                   const std::function<bool(WatchEvent<Namespace>&)>& fn,
                   const std::atomic<bool>* cancel) {
        return client.WatchNamespaces(options, rv, fn, cancel);
      },
  };
}

InformerSource<Workload> WorkloadSource(KubeClient& client, WorkloadKind kind,
                                        ListOptions options) {
  return {
      .list =
          [&client, kind, options](
              const std::function<void(ObjectList<Workload>&)>& page) {
            return client.ListWorkloads(kind, options, page);
          },
      .watch = [&client, kind, options](
                   const std::string& rv,
                   const std::function<bool(WatchEvent<Workload>&)>& fn,
                   const std::atomic<bool>* cancel) {
        return client.WatchWorkloads(kind, options, rv, fn, cancel);
      },
  };
}

InformerSource<PodDisruptionBudget> BudgetSource(KubeClient& client) {
  return PathSource<PodDisruptionBudget>(client, kBudgetsPath,
                                         DecodeBudgetList,
                                         DecodeBudgetWatchEvent);
}

}  // namespace ms::kube
