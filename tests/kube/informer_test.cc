// The informer against a scripted source (at our InformerSource interface):
// what each list and watch delivers to the handlers, resuming, relisting,
// and the tombstones of a relist. Against a real kube-apiserver:
// tests/kube/client_integration_test.cc.
#include "kube/informer.h"

#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

using ::ms::testing::WaitFor;

Node MakeNode(const std::string& name, const std::string& version) {
  Node n;
  n.name = name;
  n.uid = "uid-" + name;
  n.resource_version = version;
  n.allocatable.milli_cpu = 1000;
  n.labels["zone"] = "a";
  return n;
}

WatchEvent<Node> Event(WatchEventType type, const Node& node) {
  return {.type = type, .object = node, .resource_version = node.resource_version};
}

// Each list answers the next list added (the last one again once they run
// out); each watch delivers the next script's events, then ends with its
// status. With no script left, a watch waits until cancelled, as a quiet
// server's would.
class ScriptedSource {
 public:
  struct Watch {
    std::vector<WatchEvent<Node>> events;
    absl::Status end;
  };

  void AddList(std::vector<Node> nodes, std::string version) {
    absl::MutexLock lock(&mu_);
    lists_.push_back(
        {.items = std::move(nodes), .resource_version = std::move(version)});
  }
  void AddWatch(Watch watch) {
    absl::MutexLock lock(&mu_);
    watches_.push_back(std::move(watch));
  }
  // The resourceVersion each watch started from.
  std::vector<std::string> WatchedFrom() {
    absl::MutexLock lock(&mu_);
    return watched_from_;
  }

  InformerSource<Node> Source() {
    return {
        .list =
            [this]() -> absl::StatusOr<ObjectList<Node>> {
          absl::MutexLock lock(&mu_);
          ObjectList<Node> list = lists_.front();
          if (lists_.size() > 1) lists_.pop_front();
          return list;
        },
        .watch =
            [this](const std::string& version,
                   const std::function<bool(WatchEvent<Node>&)>& on_event,
                   const std::atomic<bool>* cancel) -> absl::Status {
          Watch watch;
          bool scripted;
          {
            absl::MutexLock lock(&mu_);
            watched_from_.push_back(version);
            scripted = !watches_.empty();
            if (scripted) {
              watch = std::move(watches_.front());
              watches_.pop_front();
            }
          }
          if (!scripted) {
            while (!cancel->load()) absl::SleepFor(absl::Milliseconds(5));
            return absl::CancelledError("stopped");
          }
          for (WatchEvent<Node>& e : watch.events) on_event(e);
          return watch.end;
        },
    };
  }

 private:
  absl::Mutex mu_;
  std::deque<ObjectList<Node>> lists_ ABSL_GUARDED_BY(mu_);
  std::deque<Watch> watches_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> watched_from_ ABSL_GUARDED_BY(mu_);
};

// What the handlers were given, in order.
class Delivered {
 public:
  InformerHandlers<Node> Handlers() {
    return {.on_add = [this](const Node& n) { Record("add", n); },
            .on_update = [this](const Node& n) { Record("update", n); },
            .on_delete = [this](const Node& n) { Record("delete", n); }};
  }
  std::vector<std::string> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<Node> Deleted() {
    absl::MutexLock lock(&mu_);
    return deleted_;
  }

 private:
  void Record(const std::string& what, const Node& n) {
    absl::MutexLock lock(&mu_);
    events_.push_back(absl::StrCat(what, " ", n.name, "@", n.resource_version));
    if (what == "delete") deleted_.push_back(n);
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::vector<Node> deleted_ ABSL_GUARDED_BY(mu_);
};

using Events = std::vector<std::string>;

TEST(InformerTest, ListThenWatchDeliversAddsUpdatesAndDeletes) {
  ScriptedSource source;
  source.AddList({MakeNode("a", "1"), MakeNode("b", "2")}, "10");
  source.AddWatch({.events = {Event(WatchEventType::kModified, MakeNode("a", "11")),
                              Event(WatchEventType::kAdded, MakeNode("c", "12")),
                              Event(WatchEventType::kDeleted, MakeNode("b", "13")),
                              // Never seen: nothing to delete.
                              Event(WatchEventType::kDeleted, MakeNode("x", "14"))},
                   .end = absl::OkStatus()});
  Delivered delivered;
  Informer<Node> informer("nodes", source.Source(), delivered.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(10)));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events().size() == 5; }));
  EXPECT_EQ(delivered.Events(), (Events{"add a@1", "add b@2", "update a@11",
                                        "add c@12", "delete b@13"}));
  // A watch delete hands over the object as last seen, in full.
  EXPECT_EQ(delivered.Deleted().at(0).allocatable.milli_cpu, 1000);
  EXPECT_EQ(informer.Size(), 2u);
  // The watch that ended was resumed from the last version it delivered.
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 2; }));
  EXPECT_EQ(source.WatchedFrom(), (Events{"10", "14"}));
  EXPECT_EQ(informer.Lists(), 1);
  informer.Stop();
}

TEST(InformerTest, AnExpiredVersionRelistsAndDeliversTheDifference) {
  ScriptedSource source;
  source.AddList({MakeNode("a", "1"), MakeNode("b", "2"), MakeNode("c", "3")},
                 "10");
  source.AddWatch({.events = {}, .end = absl::OutOfRangeError("too old")});
  // The relist finds a unchanged, b changed, c gone and d new.
  source.AddList({MakeNode("a", "1"), MakeNode("b", "20"), MakeNode("d", "21")},
                 "30");
  Delivered delivered;
  Informer<Node> informer("nodes", source.Source(), delivered.Handlers());
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return informer.Lists() == 2; }));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events().size() == 6; }));
  EXPECT_EQ(delivered.Events(),
            (Events{"add a@1", "add b@2", "add c@3",  // first list
                    "update b@20", "add d@21", "delete c@3"}));
  // What was deleted while no watch ran is known by identity only.
  Node tombstone = delivered.Deleted().at(0);
  EXPECT_EQ(tombstone.name, "c");
  EXPECT_EQ(tombstone.uid, "uid-c");
  EXPECT_EQ(tombstone.allocatable.milli_cpu, 0);
  EXPECT_TRUE(tombstone.labels.empty());
  EXPECT_EQ(informer.Size(), 3u);
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 2; }));
  EXPECT_EQ(source.WatchedFrom(), (Events{"10", "30"}));
  informer.Stop();
}

TEST(InformerTest, PodTombstonesCarryNamespaceAndName) {
  Pod pod;
  MakeTombstone("shop/web-1", "u1", "7", &pod);
  EXPECT_EQ(pod.namespace_, "shop");
  EXPECT_EQ(pod.name, "web-1");
  EXPECT_EQ(pod.uid, "u1");
  EXPECT_EQ(pod.resource_version, "7");
  EXPECT_EQ(pod.Key(), "shop/web-1");
  EXPECT_TRUE(pod.containers.empty());
}

}  // namespace
}  // namespace ms::kube
