// Informer: one kind of object, delivered to handlers as it changes.
//
// Lists the objects (every page), then watches from the list's
// resourceVersion, calling the handlers for each add, update and delete.
// When a watch ends it is resumed from the last resourceVersion seen
// (bookmarks included), so nothing is lost across a broken connection; when
// the server says that version has expired (410) it relists, and the
// difference from what it had seen is delivered as adds, updates and
// deletes. Failures are retried with backoff (1 s doubling to 30 s) and
// logged; the informer never gives up until Stop().
//
// It keeps no copy of the objects, only each one's key, uid and
// resourceVersion: the handlers' owners keep what they need (the cluster
// state, the queue), so 20,000 pods are not held twice. A delete learned
// from a relist therefore hands the handler a tombstone: an object with
// its identity (namespace, name, uid, resourceVersion) and nothing else.
//
// Thread safety: Start() and Stop() from one owner thread; Size(),
// HasSynced() and WaitForSync() from any thread. Handlers run on the
// informer's own thread, one at a time, with no informer lock held.
#ifndef METRICS_SCHEDULER_KUBE_INFORMER_H_
#define METRICS_SCHEDULER_KUBE_INFORMER_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "kube/decode.h"

namespace ms::kube {

// Where an informer gets its objects: a list and a watch from a version.
// KubeClient provides them (PodSource, NodeSource); tests may fake them.
template <typename T>
struct InformerSource {
  std::function<absl::StatusOr<ObjectList<T>>()> list;
  std::function<absl::Status(const std::string& resource_version,
                             const std::function<bool(WatchEvent<T>&)>&,
                             const std::atomic<bool>* cancel)>
      watch;
};

template <typename T>
struct InformerHandlers {
  std::function<void(const T&)> on_add;
  std::function<void(const T&)> on_update;
  // The object as last seen, or a tombstone (see above).
  std::function<void(const T&)> on_delete;
};

// How an informer names an object, and the tombstone it makes for one.
inline std::string KeyOf(const Pod& pod) { return pod.Key(); }
inline std::string KeyOf(const Node& node) { return node.name; }
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Pod* pod);
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Node* node);

template <typename T>
class Informer {
 public:
  Informer(std::string name, InformerSource<T> source,
           InformerHandlers<T> handlers)
      : name_(std::move(name)),
        source_(std::move(source)),
        handlers_(std::move(handlers)) {}
  ~Informer() { Stop(); }
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  // Stops watching and joins the informer's thread. Idempotent.
  void Stop() {
    if (!stopping_.HasBeenNotified()) stopping_.Notify();
    cancel_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  bool HasSynced() const { return synced_.HasBeenNotified(); }
  // True once the first list has been applied, false on timeout.
  bool WaitForSync(absl::Duration timeout) const {
    return synced_.WaitForNotificationWithTimeout(timeout);
  }

  // How many objects exist, as far as the informer has seen.
  size_t Size() const {
    absl::MutexLock lock(&mu_);
    return seen_.size();
  }

  // How many times the informer listed (1 after the first sync); tests use
  // it to tell a resumed watch from a relist.
  int Lists() const { return lists_.load(); }

 private:
  void Run() {
    absl::Duration backoff = absl::Seconds(1);
    std::string resource_version;
    while (!stopping_.HasBeenNotified()) {
      if (resource_version.empty()) {
        absl::StatusOr<ObjectList<T>> list = source_.list();
        if (!list.ok()) {
          LOG(WARNING) << name_ << ": list failed, retrying in " << backoff
                       << ": " << list.status();
          Sleep(backoff);
          backoff = std::min(backoff * 2, absl::Seconds(30));
          continue;
        }
        resource_version = list->resource_version;
        Replace(std::move(list->items));
        lists_.fetch_add(1);
        if (!synced_.HasBeenNotified()) synced_.Notify();
        VLOG(1) << name_ << ": listed " << Size() << " objects at version "
                << resource_version;
      }
      absl::Status status = source_.watch(
          resource_version,
          [&](WatchEvent<T>& event) {
            Apply(event);
            if (!event.resource_version.empty()) {
              resource_version = event.resource_version;
            }
            return true;
          },
          &cancel_);
      if (stopping_.HasBeenNotified()) break;
      if (status.ok()) {
        backoff = absl::Seconds(1);
        VLOG(2) << name_ << ": watch ended, resuming at " << resource_version;
        continue;
      }
      if (absl::IsOutOfRange(status)) {
        LOG(INFO) << name_ << ": version " << resource_version
                  << " expired, relisting: " << status.message();
        resource_version.clear();
        continue;
      }
      LOG(WARNING) << name_ << ": watch failed, resuming in " << backoff
                   << ": " << status;
      Sleep(backoff);
      backoff = std::min(backoff * 2, absl::Seconds(30));
    }
  }

  void Sleep(absl::Duration d) { stopping_.WaitForNotificationWithTimeout(d); }

  void Apply(WatchEvent<T>& event) {
    switch (event.type) {
      case WatchEventType::kAdded:
      case WatchEventType::kModified:
        Upsert(std::move(event.object));
        break;
      case WatchEventType::kDeleted:
        Remove(event.object);
        break;
      case WatchEventType::kBookmark:
      case WatchEventType::kError:
        break;
    }
  }

  // What the informer remembers of an object.
  struct Seen {
    std::string uid;
    std::string resource_version;
  };

  void Upsert(T object) {
    std::string key = KeyOf(object);
    bool existed;
    {
      absl::MutexLock lock(&mu_);
      auto [it, inserted] =
          seen_.insert_or_assign(std::move(key), Seen{object.uid,
                                                      object.resource_version});
      existed = !inserted;
    }
    if (existed) {
      if (handlers_.on_update) handlers_.on_update(object);
    } else if (handlers_.on_add) {
      handlers_.on_add(object);
    }
  }

  void Remove(const T& object) {
    bool existed;
    {
      absl::MutexLock lock(&mu_);
      existed = seen_.erase(KeyOf(object)) > 0;
    }
    if (existed && handlers_.on_delete) handlers_.on_delete(object);
  }

  // Delivers the difference between what was seen and `items`, the whole
  // list, and remembers `items`.
  void Replace(std::vector<T> items) {
    std::unordered_map<std::string, Seen> fresh;
    fresh.reserve(items.size());
    for (const T& item : items) {
      fresh.emplace(KeyOf(item), Seen{item.uid, item.resource_version});
    }
    std::unordered_map<std::string, Seen> old;
    {
      absl::MutexLock lock(&mu_);
      old.swap(seen_);
      seen_.swap(fresh);
    }
    for (T& item : items) {
      auto it = old.find(KeyOf(item));
      if (it == old.end()) {
        if (handlers_.on_add) handlers_.on_add(item);
      } else if (it->second.resource_version != item.resource_version) {
        if (handlers_.on_update) handlers_.on_update(item);
      }
      item = T();  // handled: give its memory back as the list is walked
    }
    // This thread is the only writer of seen_, so it may read it unlocked.
    for (const auto& [key, was] : old) {
      if (seen_.contains(key) || !handlers_.on_delete) continue;
      T tombstone;
      MakeTombstone(key, was.uid, was.resource_version, &tombstone);
      handlers_.on_delete(tombstone);
    }
  }

  const std::string name_;
  const InformerSource<T> source_;
  const InformerHandlers<T> handlers_;

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Seen> seen_ ABSL_GUARDED_BY(mu_);
  absl::Notification synced_;
  absl::Notification stopping_;
  std::atomic<bool> cancel_{false};
  std::atomic<int> lists_{0};
  std::thread thread_;
};

// Sources over a KubeClient, which must outlive the informer.
InformerSource<Pod> PodSource(KubeClient& client, ListOptions options);
InformerSource<Node> NodeSource(KubeClient& client, ListOptions options);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_INFORMER_H_
