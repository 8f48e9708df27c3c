#include "bench/quality/trace.h"

#include <map>
#include <set>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ms::quality {
namespace {

void ExpectSameTrace(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.duration_s, b.duration_s);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeSpec &x = a.nodes[i], &y = b.nodes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.cores, y.cores);
    EXPECT_EQ(x.memory_gib, y.memory_gib);
    EXPECT_EQ(x.speed, y.speed);
    EXPECT_EQ(x.background_cores, y.background_cores);
    EXPECT_EQ(x.burst_cores, y.burst_cores);
    EXPECT_EQ(x.burst_period_s, y.burst_period_s);
    EXPECT_EQ(x.burst_duty, y.burst_duty);
    EXPECT_EQ(x.degrade_at_s, y.degrade_at_s);
    EXPECT_EQ(x.degrade_factor, y.degrade_factor);
  }
  ASSERT_EQ(a.pods.size(), b.pods.size());
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const PodSpec &x = a.pods[i], &y = b.pods[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.arrival_s, y.arrival_s);
    EXPECT_EQ(x.cpu_request, y.cpu_request);
    EXPECT_EQ(x.memory_request_gib, y.memory_request_gib);
    EXPECT_EQ(x.usage, y.usage);
    EXPECT_EQ(x.warmup_s, y.warmup_s);
    EXPECT_EQ(x.duration_s, y.duration_s);
    EXPECT_EQ(x.io, y.io);
    EXPECT_EQ(x.scheduler, y.scheduler);
    EXPECT_EQ(x.owner, y.owner);
  }
}

TEST(TraceTest, EveryShippedTraceSurvivesItsJsonLines) {
  for (TraceKind kind : kAllTraceKinds) {
    SCOPED_TRACE(TraceKindName(kind));
    Trace t = GenerateTrace(kind, {.seed = 7});
    EXPECT_EQ(ParseTraceKind(TraceKindName(kind)).value(), kind);
    absl::StatusOr<Trace> back = ParseTrace(WriteTrace(t), "t.jsonl");
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameTrace(t, *back);
  }
}

TEST(TraceTest, APodsOwnerIsWrittenOnlyWhenItHasOne) {
  const std::string text =
      "{\"kind\":\"node\",\"name\":\"n1\"}\n"
      "{\"kind\":\"pod\",\"name\":\"a\",\"owner\":\"web\"}\n"
      "{\"kind\":\"pod\",\"name\":\"b\"}\n";
  absl::StatusOr<Trace> t = ParseTrace(text, "t.jsonl");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->pods[0].owner, "web");
  EXPECT_EQ(t->pods[1].owner, "");
  const std::string written = WriteTrace(*t);
  EXPECT_TRUE(absl::StrContains(
      written, "{\"kind\":\"pod\",\"name\":\"a\",\"owner\":\"web\"}\n"))
      << written;
  EXPECT_TRUE(absl::StrContains(written, "{\"kind\":\"pod\",\"name\":\"b\"}\n"))
      << written;
  ExpectSameTrace(*t, ParseTrace(written, "t.jsonl").value());
  EXPECT_EQ(
      ParseTrace("{\"kind\":\"pod\",\"name\":\"a\",\"owner\":1}", "t.jsonl")
          .status()
          .message(),
      "t.jsonl:1: field owner: not a string");
}

TEST(TraceTest, ASeedGivesOneTrace) {
  GenerateOptions options{.seed = 3};
  Trace a = GenerateTrace(TraceKind::kHeterogeneous, options);
  Trace b = GenerateTrace(TraceKind::kHeterogeneous, options);
  ExpectSameTrace(a, b);
  options.seed = 4;
  Trace c = GenerateTrace(TraceKind::kHeterogeneous, options);
  EXPECT_NE(WriteTrace(a), WriteTrace(c));
  // The raw output of std::mt19937_64 is fixed by the standard, and the
  // generator draws only from it: seed 3 gives these figures with any
  // standard library (a change to the generator changes the traces users
  // compare against, and must say so).
  EXPECT_EQ(a.pods.size(), 174u);
  EXPECT_DOUBLE_EQ(a.pods[0].arrival_s, 1.4754063923726584);
  EXPECT_DOUBLE_EQ(a.pods[0].usage, 0.2);
  EXPECT_DOUBLE_EQ(a.pods[0].duration_s, 120.58913266000931);
}

TEST(TraceTest, ALineThatIsWrongIsNamedWithItsField) {
  auto error = [](const std::string& text) {
    absl::StatusOr<Trace> t = ParseTrace(text, "mine.jsonl");
    EXPECT_FALSE(t.ok());
    return std::string(t.status().message());
  };
  const std::string node = "{\"kind\":\"node\",\"name\":\"n1\"}\n";
  EXPECT_EQ(error(node + "{\"kind\":\"pod\",\"name\":\"p\",\"usage\":\"x\"}"),
            "mine.jsonl:2: field usage: not a number");
  EXPECT_EQ(error(node + "{\"kind\":\"pod\",\"name\":\"p\",\"usgae\":1}"),
            "mine.jsonl:2: unknown field usgae");
  EXPECT_EQ(error(node + "\n{\"kind\":\"pdo\"}"),
            "mine.jsonl:3: unknown kind pdo");
  EXPECT_EQ(error(node + "{\"kind\":\"trace\"}"),
            "mine.jsonl:2: \"trace\" must be the first line");
  EXPECT_EQ(error("{\"kind\":\"node\",\"name\":\"n1\",\"cores\":-1}"),
            "mine.jsonl:1: field cores: must be a number >= 0");
  EXPECT_EQ(error("{\"kind\":\"node\",\"name\":\"n1\",\"speed\":0}"),
            "mine.jsonl:1: node n1: cores and speed must be > 0");
  EXPECT_EQ(error(node + "{\"kind\":\"pod\",\"name\":\"a\",\"arrival_s\":5}\n"
                         "{\"kind\":\"pod\",\"name\":\"b\",\"arrival_s\":4}"),
            "mine.jsonl:3: pod b: arrival_s before the line above's");
  EXPECT_EQ(error("{\"kind\":\"trace\"}"), "mine.jsonl: no node");
  EXPECT_EQ(error("[1]"), "mine.jsonl:1: not a JSON object");
  EXPECT_EQ(error("{\"name\":\"n\"}"), "mine.jsonl:1: no \"kind\" string");
}

// Little's law over a trace: the mean demand of its pods on the fleet.
double MeanLoad(const Trace& t) {
  double work = 0, capacity = 0;
  for (const PodSpec& p : t.pods) work += p.usage * p.duration_s;
  for (const NodeSpec& n : t.nodes) {
    capacity += n.cores * n.speed - n.background_cores -
                n.burst_cores * (n.burst_period_s > 0 ? n.burst_duty : 0);
  }
  return work / (t.duration_s * capacity);
}

TEST(TraceTest, TheShippedTracesAreWhatTheyAreNamedFor) {
  GenerateOptions options{.seed = 11, .duration_s = 600, .nodes = 8};
  for (TraceKind kind : kAllTraceKinds) {
    SCOPED_TRACE(TraceKindName(kind));
    Trace t = GenerateTrace(kind, options);
    EXPECT_EQ(t.nodes.size(), 8u);
    // Shifting's pods outlast it (below).
    if (kind != TraceKind::kShifting) {
      EXPECT_NEAR(MeanLoad(t), options.target_load, 0.15);
    }
    for (const PodSpec& p : t.pods) {
      EXPECT_LT(p.arrival_s, options.duration_s);
      EXPECT_GT(p.duration_s, 0);
    }
  }
  Trace het = GenerateTrace(TraceKind::kHeterogeneous, options);
  std::set<double> speeds;
  int noisy = 0;
  for (const NodeSpec& n : het.nodes) {
    speeds.insert(n.speed);
    noisy += n.burst_cores > 0;
  }
  EXPECT_EQ(speeds, (std::set<double>{0.5, 1, 1.5}));
  EXPECT_EQ(noisy, 1);

  for (const NodeSpec& n :
       GenerateTrace(TraceKind::kIdentical, options).nodes) {
    EXPECT_EQ(n.speed, 1);
    EXPECT_EQ(n.background_cores, 0);
  }

  int degrading = 0;
  for (const NodeSpec& n :
       GenerateTrace(TraceKind::kDegrading, options).nodes) {
    if (n.degrade_at_s == 200) ++degrading;
  }
  EXPECT_EQ(degrading, 1);

  Trace other = GenerateTrace(TraceKind::kOtherScheduler, options);
  int theirs = 0;
  for (const PodSpec& p : other.pods)
    theirs += p.scheduler == "default-scheduler";
  EXPECT_NEAR(static_cast<double>(theirs) / other.pods.size(), 0.4, 0.1);
  // The same pods as heterogeneous's, some given to the other scheduler:
  // the policy's own pods compare between the two.
  Trace heterogeneous = GenerateTrace(TraceKind::kHeterogeneous, options);
  ASSERT_EQ(other.pods.size(), heterogeneous.pods.size());
  for (size_t i = 0; i < other.pods.size(); ++i) {
    PodSpec mine = other.pods[i];
    mine.scheduler.clear();
    EXPECT_EQ(WriteTrace({.pods = {mine}}),
              WriteTrace({.pods = {heterogeneous.pods[i]}}));
  }

  // Far from requests: two heavy owners (3x), two light (0.2x), alike.
  std::map<std::string, int> pods_of;
  for (const PodSpec& p :
       GenerateTrace(TraceKind::kFarFromRequests, options).pods) {
    const double ratio = p.owner.rfind("heavy-", 0) == 0 ? 3 : 0.2;
    EXPECT_EQ(p.usage, ratio * p.cpu_request) << p.name << " " << p.owner;
    ++pods_of[p.owner];
  }
  ASSERT_EQ(pods_of.size(), 4u);
  EXPECT_EQ(pods_of.begin()->first, "heavy-1");
  EXPECT_EQ(pods_of.rbegin()->first, "light-2");
  for (const auto& [owner, pods] : pods_of) {
    EXPECT_GE(pods, 20) << owner;
  }
  for (TraceKind kind : kAllTraceKinds) {
    if (kind == TraceKind::kFarFromRequests || kind == TraceKind::kShifting) {
      continue;
    }
    for (const PodSpec& p : GenerateTrace(kind, options).pods) {
      EXPECT_EQ(p.owner, "") << TraceKindName(kind);
    }
  }

  // Shifting: identical nodes filled to 45 % over the first 25 % of the
  // trace with pods that outlast it; a quarter, the surge workloads',
  // triple their usage at 30 % of it (180 s of 600).
  Trace shifting = GenerateTrace(TraceKind::kShifting, options);
  int surge = 0;
  double cores = 0;
  for (const PodSpec& p : shifting.pods) {
    EXPECT_LT(p.arrival_s, 150);
    EXPECT_GT(p.duration_s, 600);
    cores += p.usage;
    if (p.owner.rfind("surge-", 0) == 0) {
      ++surge;
      EXPECT_EQ(p.shift_at_s, 180);
      EXPECT_EQ(p.shift_factor, 3);
    } else {
      EXPECT_EQ(p.owner.rfind("steady-", 0), 0u) << p.owner;
      EXPECT_EQ(p.shift_factor, 1);
    }
  }
  EXPECT_NEAR(cores / 64, 0.45, 0.1);
  EXPECT_NEAR(static_cast<double>(surge) / shifting.pods.size(), 0.25, 0.1);

  // Bursts: pods arrive in groups within 2 s, far apart.
  Trace bursts = GenerateTrace(TraceKind::kBursts, options);
  int gaps = 0;
  for (size_t i = 1; i < bursts.pods.size(); ++i) {
    double gap = bursts.pods[i].arrival_s - bursts.pods[i - 1].arrival_s;
    EXPECT_TRUE(gap <= 2 || gap >= 40) << gap;
    gaps += gap >= 40;
  }
  EXPECT_EQ(gaps, 600 / 45);
}

}  // namespace
}  // namespace ms::quality
