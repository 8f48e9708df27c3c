// Informer: a local, eventually consistent copy of one kind of object.
//
// Lists the objects (every page), then watches from the list's
// resourceVersion, keeping a map from key to object and calling the handlers
// for each add, update and delete. When a watch ends it is resumed from the
// last resourceVersion seen (bookmarks included), so nothing is lost across a
// broken connection; when the server says that version has expired (410) it
// relists, and the difference between the old copy and the new list is
// delivered as adds, updates and deletes. Failures are retried with backoff
// (1 s doubling to 30 s) and logged; the informer never gives up until
// Stop().
//
// An optional `transform` is applied to every object as it arrives, before
// it is stored or handed to a handler: an informer that needs only part of
// each object (say, a pod's requests) keeps only that part in memory.
//
// Thread safety: Start() and Stop() from one owner thread; Get(), List(),
// HasSynced() and WaitForSync() from any thread. Handlers run on the
// informer's own thread, one at a time, with no informer lock held: they may
// call Get() and List().
#ifndef METRICS_SCHEDULER_KUBE_INFORMER_H_
#define METRICS_SCHEDULER_KUBE_INFORMER_H_

#include <atomic>
#include <functional>
#include <optional>
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
  std::function<void(const T& old_object, const T& new_object)> on_update;
  std::function<void(const T&)> on_delete;
};

template <typename T>
class Informer {
 public:
  using KeyFn = std::function<std::string(const T&)>;
  using TransformFn = std::function<void(T&)>;

  Informer(std::string name, InformerSource<T> source,
           InformerHandlers<T> handlers, KeyFn key,
           TransformFn transform = nullptr)
      : name_(std::move(name)),
        source_(std::move(source)),
        handlers_(std::move(handlers)),
        key_(std::move(key)),
        transform_(std::move(transform)) {}
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

  std::optional<T> Get(const std::string& key) const {
    absl::MutexLock lock(&mu_);
    auto it = store_.find(key);
    if (it == store_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<T> List() const {
    absl::MutexLock lock(&mu_);
    std::vector<T> out;
    out.reserve(store_.size());
    for (const auto& [key, object] : store_) out.push_back(object);
    return out;
  }

  size_t Size() const {
    absl::MutexLock lock(&mu_);
    return store_.size();
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
        if (transform_) {
          for (T& item : list->items) transform_(item);
        }
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
    if (transform_ && (event.type == WatchEventType::kAdded ||
                       event.type == WatchEventType::kModified ||
                       event.type == WatchEventType::kDeleted)) {
      transform_(event.object);
    }
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

  void Upsert(T object) {
    std::string key = key_(object);
    std::optional<T> old;
    {
      absl::MutexLock lock(&mu_);
      auto [it, inserted] = store_.try_emplace(key, object);
      if (!inserted) {
        old = std::move(it->second);
        it->second = object;
      }
    }
    if (old) {
      if (handlers_.on_update) handlers_.on_update(*old, object);
    } else if (handlers_.on_add) {
      handlers_.on_add(object);
    }
  }

  void Remove(const T& object) {
    std::string key = key_(object);
    bool existed;
    {
      absl::MutexLock lock(&mu_);
      existed = store_.erase(key) > 0;
    }
    if (existed && handlers_.on_delete) handlers_.on_delete(object);
  }

  // Makes the store equal to `items`, delivering the difference.
  void Replace(std::vector<T> items) {
    std::unordered_map<std::string, T> fresh;
    fresh.reserve(items.size());
    for (T& item : items) {
      std::string key = key_(item);
      fresh.emplace(std::move(key), std::move(item));
    }
    std::unordered_map<std::string, T> old;
    {
      absl::MutexLock lock(&mu_);
      old.swap(store_);
      store_.swap(fresh);  // no copy: a relist of 20,000 pods is megabytes
    }
    // This thread is the store's only writer, so it may read it unlocked.
    for (const auto& [key, object] : store_) {
      auto it = old.find(key);
      if (it == old.end()) {
        if (handlers_.on_add) handlers_.on_add(object);
      } else if (it->second.resource_version != object.resource_version) {
        if (handlers_.on_update) handlers_.on_update(it->second, object);
      }
    }
    for (const auto& [key, object] : old) {
      if (!store_.contains(key) && handlers_.on_delete) {
        handlers_.on_delete(object);
      }
    }
  }

  const std::string name_;
  const InformerSource<T> source_;
  const InformerHandlers<T> handlers_;
  const KeyFn key_;
  const TransformFn transform_;

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, T> store_ ABSL_GUARDED_BY(mu_);
  absl::Notification synced_;
  absl::Notification stopping_;
  std::atomic<bool> cancel_{false};
  std::atomic<int> lists_{0};
  std::thread thread_;
};

// Sources over a KubeClient, which must outlive the informer.
InformerSource<Pod> PodSource(KubeClient& client, ListOptions options);
InformerSource<Node> NodeSource(KubeClient& client, ListOptions options);

inline std::string PodKey(const Pod& pod) { return pod.Key(); }
inline std::string NodeKey(const Node& node) { return node.name; }

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_INFORMER_H_
