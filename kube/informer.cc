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

void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   CsiStorageCapacity* capacity) {
  NamespacedTombstone(key, uid, resource_version, capacity);
}

namespace {

// A source listing and watching `path` with `options`, decoding with
// `context`.
template <typename T>
InformerSource<T> KindSource(KubeClient& client, std::string path,
                             ListOptions options,
                             DecodeContext<T> context = {}) {
  return {
      .list =
          [&client, path, options,
           context](const std::function<void(ObjectList<T>&)>& page) {
            return client.List<T>(path, options, context, page);
          },
      .watch =
          [&client, path, options, context](
              const std::string& rv,
              const std::function<bool(WatchEvent<T>&)>& fn,
              const std::atomic<bool>* cancel) {
            return client.Watch<T>(path, options, context, rv, fn, cancel);
          },
  };
}

}  // namespace

InformerSource<Pod> PodSource(KubeClient& client, ListOptions options) {
  return KindSource<Pod>(client, kPodsPath, std::move(options));
}

InformerSource<Node> NodeSource(
    KubeClient& client, ListOptions options,
    decltype(DecodeContext<Node>::known_images) known_images) {
  DecodeContext<Node> context{.annotations = options.node_annotations,
                              .known_images = std::move(known_images)};
  return KindSource<Node>(client, kNodesPath, std::move(options),
                          std::move(context));
}

InformerSource<Namespace> NamespaceSource(KubeClient& client,
                                          ListOptions options) {
  return KindSource<Namespace>(client, kNamespacesPath, std::move(options));
}

InformerSource<Workload> WorkloadSource(KubeClient& client, WorkloadKind kind,
                                        ListOptions options) {
  return KindSource<Workload>(client, WorkloadPath(kind), std::move(options),
                              kind);
}

InformerSource<PodDisruptionBudget> BudgetSource(KubeClient& client) {
  return KindSource<PodDisruptionBudget>(client, kBudgetsPath, {});
}

InformerSource<PersistentVolumeClaim> ClaimSource(KubeClient& client) {
  return KindSource<PersistentVolumeClaim>(client, kClaimsPath, {});
}

InformerSource<PersistentVolume> VolumeSource(KubeClient& client) {
  return KindSource<PersistentVolume>(client, kVolumesPath, {});
}

InformerSource<StorageClass> StorageClassSource(KubeClient& client) {
  return KindSource<StorageClass>(client, kStorageClassesPath, {});
}

InformerSource<CsiNode> CsiNodeSource(KubeClient& client) {
  return KindSource<CsiNode>(client, kCsiNodesPath, {});
}

InformerSource<CsiDriver> CsiDriverSource(KubeClient& client) {
  return KindSource<CsiDriver>(client, kCsiDriversPath, {});
}

InformerSource<CsiStorageCapacity> CapacitySource(KubeClient& client) {
  return KindSource<CsiStorageCapacity>(client, kCapacitiesPath, {});
}

InformerSource<DeviceClass> DeviceClassSource(KubeClient& client) {
  return KindSource<DeviceClass>(client, kDeviceClassesPath, {});
}

}  // namespace ms::kube
