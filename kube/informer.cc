#include "kube/informer.h"

namespace ms::kube {

InformerSource<Pod> PodSource(KubeClient& client, ListOptions options) {
  return {
      .list = [&client, options] { return client.ListPods(options); },
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
      .list = [&client, options] { return client.ListNodes(options); },
      .watch =
          [&client, options](const std::string& rv,
                             const std::function<bool(WatchEvent<Node>&)>& fn,
                             const std::atomic<bool>* cancel) {
            return client.WatchNodes(options, rv, fn, cancel);
          },
  };
}

}  // namespace ms::kube
