// Informer: one kind of object, delivered to handlers as it changes.
//
// Lists the objects, then watches from the list's resourceVersion, calling
// the handlers for each add, update and delete.
// When a watch ends it is resumed from the last resourceVersion seen
// (bookmarks included), so nothing is lost across a broken connection; when
// the server says that version has expired (410) it relists, and the
// difference from what it had seen is delivered as adds, updates and
// deletes. The informer never gives up until Stop().
//
// Backoff, as client-go's reflector does it: before each retry of a failed
// list or watch, and before the relist that a 410 asks for, it waits
// 800 ms doubling up to 30 s, each wait stretched by a random jitter of up
// to 100 % (so between 30 and 60 s at worst), so that a fleet of
// schedulers does not hammer a recovering apiserver in step. A watch that
// ends at once with nothing delivered counts as a failure. The backoff
// starts again from 800 ms after a watch that delivered events.
//
// An object the decoder refuses (see RejectedObject in kube/decode.h) does
// not stop the others: it is reported to `on_reject` and logged, once per
// version of the object however often it is listed again, and whatever
// was delivered of that object before stays as it was (no update, no
// delete) until a version that decodes arrives or it is deleted.
//
// It keeps no copy of the objects, only each one's key, uid and
// resourceVersion: the handlers' owners keep what they need (the cluster
// state, the queue), so 20,000 pods are not held twice. A list is handled
// page by page as each is decoded (the handlers see a page's objects
// before the next page is read), so a whole list is never held at once
// either; a list that fails part way keeps what its pages delivered, and
// the next list compares against that. A delete learned
// from a relist therefore hands the handler a tombstone: an object with
// its identity (namespace, name, uid, resourceVersion) and nothing else;
// so does a watch's DELETED event (kube/decode.h decodes no more of it).
//
// Thread safety: Start(), Cancel() and Stop() from one owner thread; Size(),
// HasSynced() and WaitForSync() from any thread. Handlers run on the
// informer's own thread, one at a time, with no informer lock held.
#ifndef METRICS_SCHEDULER_KUBE_INFORMER_H_
#define METRICS_SCHEDULER_KUBE_INFORMER_H_

#include <algorithm>
#include <atomic>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/logging.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "kube/decode.h"

namespace ms::kube {

// Where an informer gets its objects: a list and a watch from a version.
// KubeClient provides them (PodSource, NodeSource); tests may fake them.
template <typename T>
struct InformerSource {
  // Lists every object, handing each page to `page` as soon as it is
  // decoded (its items may be moved from); returns the list's
  // resourceVersion.
  std::function<absl::StatusOr<std::string>(
      const std::function<void(ObjectList<T>&)>& page)>
      list;
  std::function<absl::Status(const std::string& resource_version,
                             const std::function<bool(WatchEvent<T>&)>&,
                             const std::atomic<bool>* cancel)>
      watch;
};

template <typename T>
struct InformerHandlers {
  std::function<void(const T&)> on_add;
  std::function<void(const T&)> on_update;
  // A tombstone: the object's identity only (see above).
  std::function<void(const T&)> on_delete;
  // An object version the decoder refused; called once per version.
  std::function<void(const RejectedObject&)> on_reject;
};

// How an informer waits between attempts (see above). The defaults are
// client-go's; tests inject `random`, `sleep` and `clock` to observe the
// waits chosen without waiting.
struct InformerOptions {
  absl::Duration initial_backoff = absl::Milliseconds(800);
  absl::Duration max_backoff = absl::Seconds(30);
  // Each wait is the backoff times (1 + jitter * r), r uniform in [0, 1).
  double jitter = 1.0;
  // A watch that ends sooner than this with no event counts as a failure.
  absl::Duration min_watch = absl::Seconds(1);
  // r; null: a random generator of the informer's own.
  std::function<double()> random;
  // Waits `d`; null: waits `d` or until Stop(), whichever comes first.
  std::function<void(absl::Duration d)> sleep;
  // Times the watches; null: the real clock.
  const Clock* clock = nullptr;
  // The kind's API group may not be served (turned off on the apiserver):
  // a list answered 404 then counts as synced with no objects, is logged
  // once, and is tried again every max_backoff.
  bool absent_is_empty = false;
};

// How an informer names an object, and the tombstone it makes for one.
inline std::string KeyOf(const Pod& pod) { return pod.Key(); }
inline std::string KeyOf(const Node& node) { return node.name; }
inline std::string KeyOf(const Namespace& ns) { return ns.name; }
inline std::string KeyOf(const Workload& w) {
  return w.namespace_ + "/" + w.name;
}
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Pod* pod);
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Node* node);
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Namespace* ns);
inline std::string KeyOf(const PersistentVolumeClaim& c) { return c.Key(); }
inline std::string KeyOf(const PodDisruptionBudget& b) { return b.Key(); }
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   PodDisruptionBudget* budget);
inline std::string KeyOf(const PersistentVolume& v) { return v.name; }
inline std::string KeyOf(const StorageClass& c) { return c.name; }
inline std::string KeyOf(const CsiNode& n) { return n.name; }
inline std::string KeyOf(const CsiDriver& d) { return d.name; }
inline std::string KeyOf(const DeviceClass& c) { return c.name; }
inline std::string KeyOf(const CsiStorageCapacity& c) { return c.Key(); }
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   CsiStorageCapacity* capacity);
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version,
                   PersistentVolumeClaim* claim);
// Cluster-scoped objects: PersistentVolume, StorageClass, CsiNode,
// CsiDriver, DeviceClass.
template <typename T>
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, T* object) {
  object->name = key;
  object->uid = uid;
  object->resource_version = resource_version;
}
// A workload's tombstone has no kind: its informer knows it.
void MakeTombstone(const std::string& key, const std::string& uid,
                   const std::string& resource_version, Workload* w);

template <typename T>
class Informer {
 public:
  Informer(std::string name, InformerSource<T> source,
           InformerHandlers<T> handlers, InformerOptions options = {})
      : name_(std::move(name)),
        source_(std::move(source)),
        handlers_(std::move(handlers)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock
                                         : RealClock::Get()) {}
  ~Informer() { Stop(); }
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  // Asks the informer's thread to stop and returns at once. A watch in
  // progress notices within about a second (libcurl's progress callback),
  // so an owner of several informers cancels them all before stopping
  // any: they end together instead of one after another. Idempotent.
  void Cancel() {
    if (!stopping_.HasBeenNotified()) stopping_.Notify();
    cancel_.store(true);
  }

  // Stops watching and joins the informer's thread. Idempotent.
  void Stop() {
    Cancel();
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
    std::string resource_version;
    while (!stopping_.HasBeenNotified()) {
      if (resource_version.empty()) {
        Relist relist;
        {
          absl::MutexLock lock(&mu_);
          relist.old = seen_;
        }
        absl::StatusOr<std::string> version = source_.list(
            [&](ObjectList<T>& page) { ApplyPage(relist, page); });
        if (!version.ok()) {
          KeepPages(relist);
          if (options_.absent_is_empty && absl::IsNotFound(version.status())) {
            if (!synced_.HasBeenNotified()) {
              LOG(WARNING) << name_ << ": not served by the apiserver, taken "
                           << "as empty (retried every " << options_.max_backoff
                           << "): " << version.status();
              synced_.Notify();
            }
            Wait(options_.max_backoff);
            continue;
          }
          BackOff("list failed", version.status());
          continue;
        }
        resource_version = *version;
        FinishRelist(relist);
        lists_.fetch_add(1);
        if (!synced_.HasBeenNotified()) synced_.Notify();
        MS_VLOG(1) << name_ << ": listed " << Size()
                   << " objects at version " << resource_version;
      }
      int events = 0;
      absl::Time start = clock_.Now();
      absl::Status status = source_.watch(
          resource_version,
          [&](WatchEvent<T>& event) {
            ++events;
            Apply(event);
            if (!event.resource_version.empty()) {
              resource_version = event.resource_version;
            }
            return true;
          },
          &cancel_);
      if (stopping_.HasBeenNotified()) break;
      if (events > 0) backoff_ = absl::ZeroDuration();
      if (absl::IsOutOfRange(status)) {
        resource_version.clear();
        BackOff("version expired, relisting", status);
      } else if (!status.ok()) {
        BackOff("watch failed, resuming", status);
      } else if (events == 0 && clock_.Now() - start < options_.min_watch) {
        BackOff("watch ended at once with nothing, resuming", status);
      } else {
        MS_VLOG(2) << name_ << ": watch ended, resuming at "
                   << resource_version;
      }
    }
  }

  // Waits the next backoff, jittered, and logs why.
  void BackOff(absl::string_view what, const absl::Status& status) {
    backoff_ = backoff_ == absl::ZeroDuration()
                   ? options_.initial_backoff
                   : std::min(backoff_ * 2, options_.max_backoff);
    absl::Duration wait = backoff_ * (1 + options_.jitter * Random());
    if (absl::IsOutOfRange(status)) {
      LOG(INFO) << name_ << ": " << what << " in " << wait << ": "
                << status.message();
    } else {
      LOG(WARNING) << name_ << ": " << what << " in " << wait << ": "
                   << status;
    }
    Wait(wait);
  }

  void Wait(absl::Duration d) {
    if (options_.sleep) {
      options_.sleep(d);
    } else {
      stopping_.WaitForNotificationWithTimeout(d);
    }
  }

  double Random() {
    if (options_.random) return options_.random();
    return std::uniform_real_distribution<double>(0, 1)(rng_);
  }

  void Apply(WatchEvent<T>& event) {
    switch (event.type) {
      case WatchEventType::kAdded:
      case WatchEventType::kModified:
        if (event.rejected) {
          NoteRejected(*event.rejected);
        } else {
          rejected_.erase(KeyOf(event.object));
          Upsert(std::move(event.object));
        }
        break;
      case WatchEventType::kDeleted:
        rejected_.erase(KeyOf(event.object));
        Remove(event.object);
        break;
      case WatchEventType::kBookmark:
      case WatchEventType::kError:
        break;
    }
  }

  // Reports a refused object version, unless it was reported already.
  void NoteRejected(const RejectedObject& rejected) {
    std::string key = rejected.Key();
    std::string version =
        absl::StrCat(rejected.resource_version, "\n", rejected.error);
    auto [it, inserted] = rejected_.try_emplace(key, version);
    if (!inserted) {
      if (it->second == version) return;
      it->second = version;
    }
    LOG(WARNING) << name_ << ": refused " << rejected.resource << " " << key
                 << " (uid " << rejected.uid << ") at version "
                 << rejected.resource_version << ": " << rejected.error;
    if (handlers_.on_reject) handlers_.on_reject(rejected);
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

  // A list in progress: what was seen before it, and what its pages have
  // shown so far.
  struct Relist {
    std::unordered_map<std::string, Seen> old;
    std::unordered_map<std::string, Seen> fresh;
    // The refused objects' entries of rejected_, as this list refused them.
    std::unordered_map<std::string, std::string> rejected;
  };

  // Delivers the difference between what was seen and one page of a list.
  // A refused object keeps what was seen of it before, if anything.
  void ApplyPage(Relist& relist, ObjectList<T>& page) {
    for (const RejectedObject& r : page.rejected) {
      const std::string key = r.Key();
      auto it = relist.old.find(key);
      if (it != relist.old.end()) relist.fresh.insert(*it);
      NoteRejected(r);
      relist.rejected[key] = rejected_[key];
    }
    for (T& item : page.items) {
      std::string key = KeyOf(item);
      auto it = relist.old.find(key);
      if (it == relist.old.end()) {
        if (handlers_.on_add) handlers_.on_add(item);
      } else if (it->second.resource_version != item.resource_version) {
        if (handlers_.on_update) handlers_.on_update(item);
      }
      relist.fresh.insert_or_assign(
          std::move(key), Seen{item.uid, item.resource_version});
      item = T();  // handled: give its memory back as the page is walked
    }
  }

  // The list is complete: remembers what it showed and delivers the
  // deletes of what it did not.
  void FinishRelist(Relist& relist) {
    {
      absl::MutexLock lock(&mu_);
      seen_.swap(relist.fresh);
    }
    // Forget refusals of objects that are gone or decode now.
    rejected_.swap(relist.rejected);
    // This thread is the only writer of seen_, so it may read it unlocked.
    for (const auto& [key, was] : relist.old) {
      if (seen_.contains(key) || !handlers_.on_delete) continue;
      T tombstone;
      MakeTombstone(key, was.uid, was.resource_version, &tombstone);
      handlers_.on_delete(tombstone);
    }
  }

  // The list failed part way: what its pages delivered is remembered over
  // what was seen before (nothing is deleted), for the next list to
  // compare against.
  void KeepPages(Relist& relist) {
    absl::MutexLock lock(&mu_);
    for (auto& [key, seen] : relist.fresh) {
      seen_.insert_or_assign(key, std::move(seen));
    }
  }

  const std::string name_;
  const InformerSource<T> source_;
  const InformerHandlers<T> handlers_;
  const InformerOptions options_;
  const Clock& clock_;

  // Only the informer's thread touches these.
  absl::Duration backoff_;  // the last wait's base; zero: none since reset
  std::mt19937_64 rng_{std::random_device{}()};
  // The refused objects by key, each with the version and error reported.
  std::unordered_map<std::string, std::string> rejected_;

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
// `known_images`: as DecodeContext<Node>'s (what the handlers' owner holds).
InformerSource<Node> NodeSource(
    KubeClient& client, ListOptions options,
    decltype(DecodeContext<Node>::known_images) known_images = {});
InformerSource<Namespace> NamespaceSource(KubeClient& client,
                                          ListOptions options);
InformerSource<Workload> WorkloadSource(KubeClient& client, WorkloadKind kind,
                                        ListOptions options);
// PersistentVolumeClaims in every namespace, PersistentVolumes,
// StorageClasses, CSINodes, CSIDrivers.
InformerSource<PersistentVolumeClaim> ClaimSource(KubeClient& client);
InformerSource<PersistentVolume> VolumeSource(KubeClient& client);
InformerSource<StorageClass> StorageClassSource(KubeClient& client);
InformerSource<CsiNode> CsiNodeSource(KubeClient& client);
InformerSource<CsiDriver> CsiDriverSource(KubeClient& client);
// CSIStorageCapacities in every namespace.
InformerSource<CsiStorageCapacity> CapacitySource(KubeClient& client);
// DeviceClasses.
InformerSource<DeviceClass> DeviceClassSource(KubeClient& client);
// PodDisruptionBudgets in every namespace.
InformerSource<PodDisruptionBudget> BudgetSource(KubeClient& client);

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_INFORMER_H_
