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
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/testenv.h"

namespace ms::kube {
namespace {

using ::ms::testing::WaitFor;
using ::testing::ElementsAre;

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
// out), page by page; each watch delivers the next script's events, then
// ends with its status, having lasted `lasts` on `clock` (if set). With no script left, a
// watch waits until cancelled, as a quiet server's would.
class ScriptedSource {
 public:
  struct Watch {
    std::vector<WatchEvent<Node>> events;
    absl::Status end;
    absl::Duration lasts = absl::ZeroDuration();
  };

  explicit ScriptedSource(FakeClock* clock = nullptr) : clock_(clock) {}

  // A list of one page.
  void AddList(std::vector<Node> nodes, std::string version) {
    AddList({.items = std::move(nodes), .resource_version = std::move(version)});
  }
  void AddList(ObjectList<Node> list) {
    AddPages({std::move(list)}, absl::OkStatus());
  }
  void AddFailedList(absl::Status status) { AddPages({}, std::move(status)); }
  // A list of these pages that then ends with `end` (OK: the list is
  // complete, at the last page's version). Before each page but the first,
  // `before_page` (if set) is called with the page's index.
  void AddPages(std::vector<ObjectList<Node>> pages, absl::Status end) {
    absl::MutexLock lock(&mu_);
    lists_.push_back({std::move(pages), std::move(end)});
  }
  void BeforePage(std::function<void(size_t)> fn) {
    absl::MutexLock lock(&mu_);
    before_page_ = std::move(fn);
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
            [this](const std::function<void(ObjectList<Node>&)>& page)
            -> absl::StatusOr<std::string> {
          List list;
          std::function<void(size_t)> before_page;
          {
            absl::MutexLock lock(&mu_);
            list = lists_.front();
            if (lists_.size() > 1) lists_.pop_front();
            before_page = before_page_;
          }
          std::string version;
          for (size_t i = 0; i < list.pages.size(); ++i) {
            if (i > 0 && before_page) before_page(i);
            version = list.pages[i].resource_version;
            page(list.pages[i]);
          }
          if (!list.end.ok()) return list.end;
          return version;
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
          if (clock_ != nullptr) clock_->Advance(watch.lasts);
          return watch.end;
        },
    };
  }

 private:
  struct List {
    std::vector<ObjectList<Node>> pages;
    absl::Status end;
  };

  FakeClock* const clock_;
  absl::Mutex mu_;
  std::deque<List> lists_ ABSL_GUARDED_BY(mu_);
  std::function<void(size_t)> before_page_ ABSL_GUARDED_BY(mu_);
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

// The waits an informer chose, recorded instead of slept.
class Waits {
 public:
  std::function<void(absl::Duration)> Sleep() {
    return [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      waits_.push_back(d);
    };
  }
  std::vector<absl::Duration> Get() {
    absl::MutexLock lock(&mu_);
    return waits_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Duration> waits_ ABSL_GUARDED_BY(mu_);
};

absl::Duration Ms(int64_t ms) { return absl::Milliseconds(ms); }

// A list is handled page by page: the handlers have seen a page's objects
// before the next page is read, so a whole list is never held at once.
TEST(InformerTest, AListIsDeliveredPageByPage) {
  ScriptedSource source;
  Delivered delivered;
  std::vector<size_t> seen_before_page;  // the informer's thread only
  source.BeforePage([&](size_t) {
    seen_before_page.push_back(delivered.Events().size());
  });
  source.AddPages({{.items = {MakeNode("a", "1"), MakeNode("b", "2")}},
                   {.items = {MakeNode("c", "3")}},
                   {.items = {MakeNode("d", "4")}, .resource_version = "10"}},
                  absl::OkStatus());
  Informer<Node> informer("nodes", source.Source(), delivered.Handlers());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(10)));
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 1; }));
  informer.Stop();  // joins the informer's thread: its writes are visible
  EXPECT_EQ(seen_before_page, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(delivered.Events(),
            (Events{"add a@1", "add b@2", "add c@3", "add d@4"}));
  EXPECT_EQ(source.WatchedFrom(), (Events{"10"}));
  EXPECT_EQ(informer.Size(), 4u);
}

// A list that fails part way keeps what its pages delivered and deletes
// nothing; the next list is compared against that: unchanged objects are
// not delivered again, and only what it lacks is deleted.
TEST(InformerTest, AListThatFailsPartWayKeepsItsPages) {
  ScriptedSource source;
  source.AddList({MakeNode("a", "1"), MakeNode("b", "2"), MakeNode("c", "3")},
                 "10");
  source.AddWatch({.events = {}, .end = absl::OutOfRangeError("too old")});
  // b changed and e is new in the first page; then the list breaks.
  source.AddPages({{.items = {MakeNode("b", "20"), MakeNode("e", "21")}}},
                  absl::UnavailableError("connection reset"));
  // The complete list: a gone, b and e as delivered, c unchanged.
  source.AddList({MakeNode("b", "20"), MakeNode("c", "3"), MakeNode("e", "21")},
                 "30");
  Delivered delivered;
  Waits waits;
  Informer<Node> informer("nodes", source.Source(), delivered.Handlers(),
                          {.sleep = waits.Sleep()});
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 2; }));
  informer.Stop();
  EXPECT_EQ(delivered.Events(),
            (Events{"add a@1", "add b@2", "add c@3",  // first list
                    "update b@20", "add e@21",        // the broken list
                    "delete a@1"}));                  // the complete one
  EXPECT_EQ(informer.Size(), 3u);
  EXPECT_EQ(informer.Lists(), 2);
  EXPECT_EQ(source.WatchedFrom(), (Events{"10", "30"}));
}

TEST(InformerBackoffTest, FailuresAndRelistsBackOffWithJitterAndEventsReset) {
  FakeClock clock;
  ScriptedSource source(&clock);
  for (int i = 0; i < 3; ++i) {
    source.AddFailedList(absl::UnavailableError("connection refused"));
  }
  source.AddList({MakeNode("a", "1")}, "10");
  source.AddWatch({.events = {}, .end = absl::OutOfRangeError("too old")});
  source.AddList({MakeNode("a", "1")}, "20");
  source.AddWatch({.events = {Event(WatchEventType::kAdded, MakeNode("b", "21"))},
                   .end = absl::UnavailableError("connection reset")});
  // Ends at once with nothing: a failure, as client-go's "very short watch".
  source.AddWatch({.events = {}, .end = absl::OkStatus()});
  // A quiet watch that the server ended after its timeout: resumed at once.
  source.AddWatch({.events = {}, .end = absl::OkStatus(),
                   .lasts = absl::Minutes(5)});
  source.AddWatch({.events = {}, .end = absl::UnavailableError("reset")});
  Waits waits;
  Delivered delivered;
  Informer<Node> informer("nodes", source.Source(), delivered.Handlers(),
                          {.random = [] { return 0.5; },
                           .sleep = waits.Sleep(),
                           .clock = &clock});
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 6; }));
  // Each wait is the backoff (800 ms doubling) times 1 + 1.0 * 0.5.
  EXPECT_THAT(waits.Get(),
              ElementsAre(Ms(1200), Ms(2400), Ms(4800),  // three failed lists
                          Ms(9600),                      // the 410's relist
                          // The watch that delivered b reset the backoff.
                          Ms(1200),   // its failure
                          Ms(2400),   // the watch that ended at once
                          Ms(4800)));  // the failure after the quiet watch
  EXPECT_EQ(informer.Lists(), 2);
  EXPECT_EQ(source.WatchedFrom(),
            (Events{"10", "20", "21", "21", "21", "21"}));
  informer.Stop();
}

// A kind whose API group is not served (404): with absent_is_empty the
// informer counts as synced with nothing and asks again every max_backoff,
// delivering the objects once the group is served; without it, a 404 is a
// failure like any other and the informer never syncs on it.
TEST(InformerBackoffTest, AnUnservedKindIsEmptyAndAskedAgain) {
  ScriptedSource source;
  source.AddFailedList(absl::NotFoundError("the server could not find it"));
  source.AddFailedList(absl::NotFoundError("the server could not find it"));
  source.AddList({MakeNode("a", "1")}, "10");
  Waits waits;
  Delivered delivered;
  Informer<Node> informer("deviceclasses", source.Source(),
                          delivered.Handlers(),
                          {.max_backoff = absl::Seconds(30),
                           .sleep = waits.Sleep(),
                           .absent_is_empty = true});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return delivered.Events() == Events{"add a@1"}; }));
  EXPECT_EQ(waits.Get(), (std::vector<absl::Duration>{absl::Seconds(30),
                                                      absl::Seconds(30)}));
  informer.Stop();

  ScriptedSource strict;
  strict.AddFailedList(absl::NotFoundError("the server could not find it"));
  Waits strict_waits;
  Informer<Node> other("nodes", strict.Source(), delivered.Handlers(),
                       {.sleep = strict_waits.Sleep()});
  other.Start();
  ASSERT_TRUE(WaitFor([&] { return strict_waits.Get().size() >= 3; }));
  EXPECT_FALSE(other.HasSynced());
  other.Stop();
}

TEST(InformerBackoffTest, BackoffIsCappedAndJitterOnlyStretchesIt) {
  for (double r : {0.0, 0.999}) {
    ScriptedSource source;
    for (int i = 0; i < 9; ++i) {
      source.AddFailedList(absl::UnavailableError("down"));
    }
    source.AddList({}, "10");
    Waits waits;
    Informer<Node> informer("nodes", source.Source(), {},
                            {.random = [r] { return r; },
                             .sleep = waits.Sleep()});
    informer.Start();
    ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
    std::vector<absl::Duration> base = {Ms(800),   Ms(1600),  Ms(3200),
                                        Ms(6400),  Ms(12800), Ms(25600),
                                        Ms(30000), Ms(30000), Ms(30000)};
    std::vector<absl::Duration> want;
    for (absl::Duration d : base) want.push_back(d * (1 + r));
    EXPECT_EQ(waits.Get(), want) << "r=" << r;
    informer.Stop();
  }
}

TEST(InformerBackoffTest, DefaultJitterWaitsBetweenOnceAndTwiceTheBackoff) {
  ScriptedSource source;
  for (int i = 0; i < 6; ++i) {
    source.AddFailedList(absl::UnavailableError("down"));
  }
  source.AddList({}, "10");
  Waits waits;
  Informer<Node> informer("nodes", source.Source(), {},
                          {.sleep = waits.Sleep()});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
  std::vector<absl::Duration> got = waits.Get();
  ASSERT_EQ(got.size(), 6u);
  absl::Duration base = Ms(800);
  for (absl::Duration d : got) {
    EXPECT_GE(d, base);
    EXPECT_LT(d, 2 * base);
    base *= 2;
  }
  informer.Stop();
}

// What an informer reported as refused, as "NAME@VERSION".
class Rejections {
 public:
  std::function<void(const RejectedObject&)> Handler() {
    return [this](const RejectedObject& r) {
      absl::MutexLock lock(&mu_);
      got_.push_back(absl::StrCat(r.name, "@", r.resource_version));
    };
  }
  std::vector<std::string> Get() {
    absl::MutexLock lock(&mu_);
    return got_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> got_ ABSL_GUARDED_BY(mu_);
};

RejectedObject Refused(const std::string& name, const std::string& version) {
  return {.resource = "nodes",
          .name = name,
          .uid = "uid-" + name,
          .resource_version = version,
          .error = "unknown taint effect \"NoScheduleSoon\""};
}

WatchEvent<Node> RefusedEvent(WatchEventType type, const std::string& name,
                              const std::string& version) {
  WatchEvent<Node> e{.type = type, .resource_version = version,
                     .rejected = Refused(name, version)};
  e.object.name = name;
  e.object.resource_version = version;
  return e;
}

// A refused version leaves what was delivered before as it was, through
// watches and relists, and is reported once.
TEST(InformerTest, ARefusedVersionKeepsWhatWasDeliveredAndIsReportedOnce) {
  ScriptedSource source;
  source.AddList({MakeNode("a", "1"), MakeNode("b", "2")}, "10");
  source.AddWatch(
      {.events = {RefusedEvent(WatchEventType::kModified, "a", "11"),
                  RefusedEvent(WatchEventType::kAdded, "x", "12")},
       .end = absl::OutOfRangeError("too old")});
  // The relist finds the same refused versions, and b.
  source.AddList({.items = {MakeNode("b", "2")},
                  .rejected = {Refused("a", "11"), Refused("x", "12")},
                  .resource_version = "20"});
  Waits waits;
  Delivered delivered;
  Rejections rejections;
  InformerHandlers<Node> handlers = delivered.Handlers();
  handlers.on_reject = rejections.Handler();
  Informer<Node> informer("nodes", source.Source(), handlers,
                          {.sleep = waits.Sleep()});
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return source.WatchedFrom().size() == 2; }));
  EXPECT_EQ(informer.Lists(), 2);
  EXPECT_EQ(delivered.Events(), (Events{"add a@1", "add b@2"}));
  EXPECT_EQ(rejections.Get(), (Events{"a@11", "x@12"}));
  EXPECT_EQ(informer.Size(), 2u);  // a as delivered, and b
  EXPECT_EQ(source.WatchedFrom(), (Events{"10", "20"}));
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
