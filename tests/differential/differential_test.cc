// kube-scheduler as the oracle: random scenarios (scenario.h) are placed by
// the default-profile plugins of the kube-scheduler release `testenv` is
// built from (`testenv oracle`, Go, the same k8s.io/kubernetes module as
// the control plane; `make test-versions` runs each supported release) and
// by our decoder, ClusterState and Decide, following that release's rules
// (`testenv version`); on every node the filter verdicts and
// reasons must agree, each plugin's normalised score must agree within 1
// point, and the node we pick must be one of those kube-scheduler ranks
// best (the pod's nominated node, when it fits: kube-scheduler tries it
// first and looks no further). When no node fits, preemption (our
// scoring/preemption.h, kube-scheduler's DefaultPreemption as a dry run)
// must agree: with no candidate, on the message; else our node must be one
// kube-scheduler could pick (its last tie-break is Go map order), with the
// same victims in the same order and the same number of
// PodDisruptionBudget violations; and the FailedScheduling message (filter
// summary and preemption message) must be kube-scheduler's FitError's.
//
// Victims are compared in order, not as sets: kube-scheduler orders them
// by importance with sort.Slice, which up to 12 elements is an insertion
// sort, as stable as our std::stable_sort, and the preemption part of the
// scenarios adds no pod to a node past 12 (scenario.cc; the others rarely
// get there); so even pods of equal importance come in one order on both
// sides, and which of them is reprieved first (which decides the victims)
// is the same.
//
// It prints what the scenarios covered, and checks (over 1,000 scenarios
// or more) that each volume plugin rejected some pods or nodes, that
// nominated pods (counted on their node as kube-scheduler counts them)
// left some of their nodes too full and others feasible, and that
// preemption found candidates, counted budget violations, and refused for
// each of its reasons.
//
// MS_DIFF_SCENARIOS (default 1000) scenarios from seed MS_DIFF_SEED
// (default 1), plus every seed in regression_seeds.txt. A disagreement
// prints the seed, what differs and the scenario (the first MS_DIFF_SHOW,
// default 5).
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/decode.h"
#include "model/kube_version.h"
#include "scheduler/cycle/cluster_state.h"
#include "tests/differential/scenario.h"
#include "tests/testing/paths.h"

namespace ms::differential {
namespace {

// A node as one side sees it.
struct Verdict {
  bool feasible = false;
  std::string reasons;  // ", "-joined, when infeasible
  // Score plugins that scored, by kube-scheduler's plugin name.
  std::map<std::string, double> scores;
  std::string plugin;  // kube-scheduler's only: the one that rejected it
};

// A node preemption could make room on: its victims ("namespace/name",
// most important first) and the budgets their eviction would exceed.
struct Candidate {
  std::vector<std::string> victims;
  int64_t violations = 0;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// What preemption would take, as one side sees it.
struct PreemptionVerdict {
  std::string message;  // "preemption: ..." when it cannot help, else ""
  // Ours: the node we chose. kube-scheduler's: every node it found.
  std::map<std::string, Candidate> candidates;
  // kube-scheduler's only: the node it picks and those tied with it.
  std::vector<std::string> best;
  std::string failed_scheduling;  // the FailedScheduling message
};

struct Result {
  std::map<std::string, Verdict> nodes;
  std::map<std::string, double> weights;  // kube-scheduler's only
  std::string winner;                     // ours only
  std::string error;
  // kube-scheduler's only: the PreFilter plugin that rejected the pod.
  std::string pre_filter_rejection;
  // When no node fits.
  std::optional<PreemptionVerdict> preemption;
  std::string nominated_node;  // ours only: the pod's nominatedNodeName
};

// Our terms under kube-scheduler's plugin names.
const std::map<std::string, std::string>& PluginOfTerm() {
  static const auto* m = new std::map<std::string, std::string>{
      {"leastAllocated", "NodeResourcesFit"},
      {"balancedAllocation", "NodeResourcesBalancedAllocation"},
      {"interPodAffinity", "InterPodAffinity"},
      {"podTopologySpread", "PodTopologySpread"},
      {"nodeAffinity", "NodeAffinity"},
      {"taintToleration", "TaintToleration"},
      {"imageLocality", "ImageLocality"},
      {"volumeBinding", "VolumeBinding"},
  };
  return *m;
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  uint64_t out = 0;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : fallback;
}

// The release of the oracle's kube-scheduler (`testenv version`), whose
// rules our side follows too.
KubeVersion OracleVersion() {
  static const KubeVersion* v = [] {
    const char* bin = std::getenv("TESTENV_BIN");
    if (bin == nullptr) {
      ADD_FAILURE() << "TESTENV_BIN is not set: run through ctest";
      return new KubeVersion{};
    }
    const std::string out =
        absl::StrCat(::testing::TempDir(), "/testenv-version-", getpid());
    const std::string cmd = absl::StrCat(bin, " version > ", out);
    if (std::system(cmd.c_str()) != 0) {
      ADD_FAILURE() << cmd << " failed";
      return new KubeVersion{};
    }
    const std::string text(
        absl::StripAsciiWhitespace(ms::testing::ReadFileOrDie(out)));
    std::remove(out.c_str());
    absl::StatusOr<KubeVersion> parsed = ParseKubeVersion(text);
    if (!parsed.ok()) {
      ADD_FAILURE() << parsed.status();
      return new KubeVersion{};
    }
    std::printf("the oracle is kube-scheduler %s\n", text.c_str());
    return new KubeVersion(*parsed);
  }();
  return *v;
}

std::string ListJson(const std::vector<std::string>& items) {
  return absl::StrCat(R"({"metadata":{"resourceVersion":"1"},"items":[)",
                      absl::StrJoin(items, ","), "]}");
}

// Our side: the objects through the decoder into a ClusterState, one
// decision with its explanation.
Result Ours(const Scenario& s) {
  Result out;
  ClusterState state(RealClock::Get(), OracleVersion(), absl::Seconds(30));
  for (const std::string& json : s.nodes) {
    absl::StatusOr<Node> node = kube::DecodeNode(json);
    if (!node.ok()) return {.error = node.status().ToString()};
    state.UpsertNode(*node);
  }
  absl::StatusOr<kube::ObjectList<Namespace>> namespaces =
      kube::DecodeList<Namespace>(ListJson(s.namespaces));
  if (!namespaces.ok()) return {.error = namespaces.status().ToString()};
  for (const Namespace& ns : namespaces->items) state.UpsertNamespace(ns);
  for (const auto& [kind, items] :
       {std::pair{WorkloadKind::kService, &s.services},
        std::pair{WorkloadKind::kReplicaSet, &s.replica_sets},
        std::pair{WorkloadKind::kStatefulSet, &s.stateful_sets},
        std::pair{WorkloadKind::kReplicationController,
                  &s.replication_controllers}}) {
    absl::StatusOr<kube::ObjectList<Workload>> list =
        kube::DecodeList<Workload>(ListJson(*items), kind);
    if (!list.ok()) return {.error = list.status().ToString()};
    for (const Workload& w : list->items) state.UpsertWorkload(w);
  }
  // Storage, before the pods that use it.
  absl::StatusOr<kube::ObjectList<StorageClass>> classes =
      kube::DecodeList<StorageClass>(ListJson(s.storage_classes));
  if (!classes.ok()) return {.error = classes.status().ToString()};
  for (const StorageClass& c : classes->items) state.UpsertStorageClass(c);
  absl::StatusOr<kube::ObjectList<PersistentVolume>> volumes =
      kube::DecodeList<PersistentVolume>(ListJson(s.volumes));
  if (!volumes.ok()) return {.error = volumes.status().ToString()};
  for (const PersistentVolume& v : volumes->items) state.UpsertVolume(v);
  absl::StatusOr<kube::ObjectList<PersistentVolumeClaim>> claims =
      kube::DecodeList<PersistentVolumeClaim>(ListJson(s.claims));
  if (!claims.ok()) return {.error = claims.status().ToString()};
  for (const PersistentVolumeClaim& c : claims->items) state.UpsertClaim(c);
  absl::StatusOr<kube::ObjectList<CsiNode>> csi_nodes =
      kube::DecodeList<CsiNode>(ListJson(s.csi_nodes));
  if (!csi_nodes.ok()) return {.error = csi_nodes.status().ToString()};
  for (const CsiNode& n : csi_nodes->items) state.UpsertCsiNode(n);
  absl::StatusOr<kube::ObjectList<CsiDriver>> csi_drivers =
      kube::DecodeList<CsiDriver>(ListJson(s.csi_drivers));
  if (!csi_drivers.ok()) return {.error = csi_drivers.status().ToString()};
  for (const CsiDriver& d : csi_drivers->items) state.UpsertCsiDriver(d);
  absl::StatusOr<kube::ObjectList<CsiStorageCapacity>> capacities =
      kube::DecodeList<CsiStorageCapacity>(ListJson(s.capacities));
  if (!capacities.ok()) return {.error = capacities.status().ToString()};
  for (const CsiStorageCapacity& c : capacities->items) {
    state.UpsertCapacity(c);
  }
  for (const std::string& json : s.placed) {
    absl::StatusOr<Pod> pod = kube::DecodePod(json);
    if (!pod.ok()) return {.error = pod.status().ToString()};
    state.UpsertAssignedPod(*pod);
  }
  for (const std::string& json : s.nominated) {
    absl::StatusOr<Pod> pod = kube::DecodePod(json);
    if (!pod.ok()) return {.error = pod.status().ToString()};
    state.UpsertNominatedPod(*pod);
  }
  absl::StatusOr<kube::ObjectList<PodDisruptionBudget>> budgets =
      kube::DecodeList<PodDisruptionBudget>(ListJson(s.budgets));
  if (!budgets.ok()) return {.error = budgets.status().ToString()};
  if (!budgets->rejected.empty()) {
    return {.error = absl::StrCat("budget refused: ",
                                  budgets->rejected[0].error)};
  }
  for (const PodDisruptionBudget& b : budgets->items) state.UpsertBudget(b);
  absl::StatusOr<Pod> pod = kube::DecodePod(s.pod);
  if (!pod.ok()) return {.error = pod.status().ToString()};
  out.nominated_node = pod->nominated_node_name;
  ScoringConfig config;  // kube-scheduler's weights, no metrics
  config.builtins[BuiltinTerm::kRecentPlacements] = 0;
  config.kube = OracleVersion();
  Workspace workspace;
  Decision d = state.DecideAndAssume({.pod = &*pod,
                                      .config = &config,
                                      .explain = true,
                                      .preempt = true,
                                      .seed = s.seed},
                                     workspace, &out.winner);
  if (d.preemption) {
    PreemptionVerdict& p = out.preemption.emplace();
    p.message = d.preemption->message;
    p.failed_scheduling = d.filter_summary;
    if (d.preemption->ok()) {
      Candidate& c = p.candidates[d.explanation->nodes.at(
          static_cast<size_t>(d.preemption->node_index)).node];
      for (const auto& v : d.preemption->victims) {
        c.victims.push_back(absl::StrCat(v->namespace_, "/", v->name));
      }
      c.violations = d.preemption->budget_violations;
    }
  }
  for (const NodeExplanation& n : d.explanation->nodes) {
    Verdict v{.feasible = n.feasible, .reasons = n.filter_reason};
    for (const TermResult& t : n.terms) {
      auto plugin = PluginOfTerm().find(std::string(t.name));
      if (plugin == PluginOfTerm().end() || t.state == TermState::kUnused) {
        continue;
      }
      v.scores[plugin->second] = t.score;
    }
    out.nodes[n.node] = std::move(v);
  }
  return out;
}

// kube-scheduler's side: one line of `testenv oracle` output.
Result Theirs(std::string_view line) {
  Result out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) {
    return {.error = absl::StrCat("unparsable oracle line: ", std::string(line))};
  }
  std::string_view error;
  if (doc["error"].get(error) == simdjson::SUCCESS) {
    return {.error = std::string(error)};
  }
  std::string_view code, plugin;
  if (doc["preFilter"]["code"].get(code) == simdjson::SUCCESS &&
      code != "Success" && code != "Skip" &&
      doc["preFilter"]["plugin"].get(plugin) == simdjson::SUCCESS) {
    out.pre_filter_rejection = std::string(plugin);
  }
  simdjson::dom::object weights;
  if (doc["weights"].get(weights) == simdjson::SUCCESS) {
    for (auto [plugin, w] : weights) {
      out.weights[std::string(plugin)] = double(int64_t(w));
    }
  }
  for (auto [name, node] : simdjson::dom::object(doc["nodes"])) {
    Verdict v;
    v.feasible = bool(node["feasible"]);
    if (v.feasible) {
      simdjson::dom::object scores;
      if (node["scores"].get(scores) == simdjson::SUCCESS) {
        for (auto [plugin, score] : scores) {
          v.scores[std::string(plugin)] = double(int64_t(score));
        }
      }
    } else {
      std::string_view rejecting;
      if (node["plugin"].get(rejecting) == simdjson::SUCCESS) {
        v.plugin = std::string(rejecting);
      }
      std::vector<std::string> reasons;
      simdjson::dom::array list;
      if (node["reasons"].get(list) == simdjson::SUCCESS) {
        for (simdjson::dom::element r : list) {
          reasons.emplace_back(std::string_view(r));
        }
      }
      v.reasons = absl::StrJoin(reasons, ", ");
    }
    out.nodes[std::string(name)] = std::move(v);
  }
  simdjson::dom::object preemption;
  if (doc["preemption"].get(preemption) == simdjson::SUCCESS) {
    PreemptionVerdict& p = out.preemption.emplace();
    p.message = std::string(std::string_view(preemption["message"]));
    p.failed_scheduling =
        std::string(std::string_view(preemption["failedScheduling"]));
    for (auto [node, c] : simdjson::dom::object(preemption["candidates"])) {
      Candidate& candidate = p.candidates[std::string(node)];
      for (simdjson::dom::element v : simdjson::dom::array(c["victims"])) {
        candidate.victims.emplace_back(std::string_view(v));
      }
      candidate.violations = int64_t(c["pdbViolations"]);
    }
    for (simdjson::dom::element b : simdjson::dom::array(preemption["best"])) {
      p.best.emplace_back(std::string_view(b));
    }
  }
  return out;
}

// Runs the oracle over the scenarios; one output line per scenario.
std::vector<std::string> RunOracle(const std::vector<Scenario>& scenarios) {
  const char* bin = std::getenv("TESTENV_BIN");
  if (bin == nullptr) {
    ADD_FAILURE() << "TESTENV_BIN is not set: run through ctest";
    return {};
  }
  const std::string dir = ::testing::TempDir();
  const std::string in = absl::StrCat(dir, "/differential-", getpid(), ".in");
  const std::string out = absl::StrCat(dir, "/differential-", getpid(), ".out");
  {
    std::ofstream f(in);
    for (const Scenario& s : scenarios) f << s.OracleLine() << "\n";
  }
  const std::string cmd =
      absl::StrCat(bin, " oracle < ", in, " > ", out, " 2> ", out, ".err");
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    ADD_FAILURE() << cmd << " exited " << rc << ": "
                  << ms::testing::ReadFileOrDie(out + ".err");
    return {};
  }
  std::vector<std::string> lines =
      absl::StrSplit(ms::testing::ReadFileOrDie(out), '\n', absl::SkipEmpty());
  std::remove(in.c_str());
  std::remove(out.c_str());
  std::remove((out + ".err").c_str());
  return lines;
}

std::string Describe(const std::string& node, const Candidate& c) {
  return absl::StrCat(node, " evicting [", absl::StrJoin(c.victims, " "),
                      "] with ", c.violations, " budget violation(s)");
}

// Preemption: run by both sides or neither; with no candidate the same
// message, else our node one of kube-scheduler's best with its victims
// (in order) and violations; and the FailedScheduling message.
void ComparePreemption(const Result& ours, const Result& theirs,
                       std::vector<std::string>& diffs) {
  if (ours.preemption.has_value() != theirs.preemption.has_value()) {
    diffs.push_back(absl::StrCat(
        "preemption: run by ", ours.preemption ? "us" : "kube-scheduler",
        " only (", ours.preemption ? ours.preemption->message
                                   : theirs.preemption->message, ")"));
    return;
  }
  if (!theirs.preemption) return;
  const PreemptionVerdict& o = *ours.preemption;
  PreemptionVerdict k = *theirs.preemption;
  // From 1.37 a found candidate is named in the message ("found a
  // potential placement for pod on node N, ..."): the oracle names the
  // first of the tied best, kube-scheduler any of them; so may we.
  if (!o.candidates.empty() && k.best.size() > 1 &&
      absl::c_linear_search(k.best, o.candidates.begin()->first)) {
    const std::string theirs_named = absl::StrCat("on node ", k.best[0], ",");
    const std::string ours_named =
        absl::StrCat("on node ", o.candidates.begin()->first, ",");
    for (std::string* text : {&k.message, &k.failed_scheduling}) {
      if (size_t at = text->find(theirs_named); at != std::string::npos) {
        text->replace(at, theirs_named.size(), ours_named);
      }
    }
  }
  if (o.message != k.message) {
    diffs.push_back(absl::StrCat("preemption message: ours \"", o.message,
                                 "\", kube-scheduler \"", k.message, "\""));
  }
  if (!o.candidates.empty() && !k.candidates.empty()) {
    const auto& [node, c] = *o.candidates.begin();
    auto theirs_there = k.candidates.find(node);
    if (std::find(k.best.begin(), k.best.end(), node) == k.best.end()) {
      diffs.push_back(absl::StrCat(
          "preemption: ours ", Describe(node, c), "; kube-scheduler's best ",
          absl::StrJoin(k.best, " "), ": ",
          Describe(k.best[0], k.candidates.at(k.best[0])),
          theirs_there == k.candidates.end()
              ? absl::StrCat(", and not a candidate on ", node)
              : absl::StrCat(", and on ", node, ": ",
                             Describe(node, theirs_there->second))));
    } else if (c != theirs_there->second) {
      diffs.push_back(absl::StrCat("preemption: ours ", Describe(node, c),
                                   "; kube-scheduler ",
                                   Describe(node, theirs_there->second)));
    }
  } else if (!o.candidates.empty() || !k.candidates.empty()) {
    diffs.push_back(absl::StrCat(
        "preemption: ",
        o.candidates.empty()
            ? "no candidate for us"
            : absl::StrCat("ours ", Describe(o.candidates.begin()->first,
                                             o.candidates.begin()->second)),
        "; kube-scheduler ",
        k.candidates.empty()
            ? "no candidate"
            : absl::StrCat("best ", absl::StrJoin(k.best, " "), ": ",
                           Describe(k.best[0], k.candidates.at(k.best[0])))));
  }
  if (o.failed_scheduling != k.failed_scheduling) {
    diffs.push_back(absl::StrCat("FailedScheduling: ours \"",
                                 o.failed_scheduling, "\", kube-scheduler \"",
                                 k.failed_scheduling, "\""));
  }
}

// What differs between the two sides; empty when they agree.
std::vector<std::string> Compare(const Result& ours, const Result& theirs) {
  std::vector<std::string> diffs;
  if (!ours.error.empty() || !theirs.error.empty()) {
    return {absl::StrCat("errors: ours \"", ours.error, "\", kube-scheduler \"",
                         theirs.error, "\"")};
  }
  // The pod's nominated node fits: kube-scheduler's evaluateNominatedNode
  // takes it without filtering (or scoring) the others, which we report
  // "not considered".
  auto nominated = theirs.nodes.find(ours.nominated_node);
  const bool nominated_fits =
      nominated != theirs.nodes.end() && nominated->second.feasible;
  std::vector<std::string> feasible;
  for (const auto& [name, k] : theirs.nodes) {
    auto it = ours.nodes.find(name);
    if (it == ours.nodes.end()) {
      diffs.push_back(absl::StrCat(name, ": not in our explanation"));
      continue;
    }
    const Verdict& o = it->second;
    if (nominated_fits && name != ours.nominated_node && k.feasible &&
        o.reasons.starts_with("not considered: the pod's nominated node")) {
      continue;
    }
    if (o.feasible != k.feasible) {
      diffs.push_back(absl::StrCat(name, ": feasible ours ", o.feasible,
                                   " (", o.reasons, "), kube-scheduler ",
                                   k.feasible, " (", k.reasons, ")"));
    } else if (!k.feasible && o.reasons != k.reasons) {
      diffs.push_back(absl::StrCat(name, ": reasons ours \"", o.reasons,
                                   "\", kube-scheduler \"", k.reasons, "\""));
    } else if (k.feasible) {
      feasible.push_back(name);
    }
  }
  if (nominated_fits) {
    if (ours.winner != ours.nominated_node) {
      diffs.push_back(absl::StrCat("winner: ours \"", ours.winner,
                                   "\", the pod's nominated node ",
                                   ours.nominated_node, " fits"));
    }
    feasible.clear();  // we scored the nominated node alone
  }
  // Scores, per plugin we implement. A plugin one side skips must score
  // every node alike on the other (it cannot change the ranking).
  for (const auto& [term, plugin] : PluginOfTerm()) {
    std::vector<std::string> only_one_side;
    for (const std::string& name : feasible) {
      const Verdict& o = ours.nodes.at(name);
      const Verdict& k = theirs.nodes.at(name);
      auto os = o.scores.find(plugin);
      auto ks = k.scores.find(plugin);
      if (os != o.scores.end() && ks != k.scores.end()) {
        if (std::abs(os->second - ks->second) > 1) {
          diffs.push_back(absl::StrCat(name, ": ", plugin, " ours ",
                                       os->second, ", kube-scheduler ",
                                       ks->second));
        }
      } else if (os != o.scores.end() || ks != k.scores.end()) {
        only_one_side.push_back(absl::StrCat(
            os != o.scores.end() ? os->second : ks->second));
      }
    }
    if (!only_one_side.empty() &&
        std::count(only_one_side.begin(), only_one_side.end(),
                   only_one_side[0]) !=
            static_cast<long>(only_one_side.size())) {  // NOLINT
      diffs.push_back(absl::StrCat(plugin, ": scored by one side only, unevenly (",
                                   absl::StrJoin(only_one_side, " "), ")"));
    }
  }
  // The pick: our node must have kube-scheduler's best total.
  if (nominated_fits) {
    // Checked above.
  } else if (feasible.empty() != ours.winner.empty()) {
    diffs.push_back(absl::StrCat("winner: ours \"", ours.winner, "\" with ",
                                 feasible.size(), " feasible"));
  } else if (!feasible.empty() && diffs.empty()) {
    auto total = [&](const std::string& name) {
      double sum = 0;
      for (const auto& [plugin, score] : theirs.nodes.at(name).scores) {
        auto w = theirs.weights.find(plugin);
        sum += score * (w == theirs.weights.end() ? 1 : w->second);
      }
      return sum;
    };
    double best = 0;
    for (const std::string& name : feasible) best = std::max(best, total(name));
    if (total(ours.winner) != best) {
      diffs.push_back(absl::StrCat("winner: ours ", ours.winner, " totals ",
                                   total(ours.winner), " for kube-scheduler, ",
                                   "whose best is ", best));
    }
  }
  if (diffs.empty()) ComparePreemption(ours, theirs, diffs);
  return diffs;
}

// The volume plugins, by kube-scheduler's names.
bool IsVolumePlugin(std::string_view plugin) {
  return plugin == "VolumeRestrictions" || plugin == "NodeVolumeLimits" ||
         plugin == "VolumeBinding" || plugin == "VolumeZone";
}

// A reason with the names it quotes left out, to count reasons by kind.
std::string Unnamed(std::string_view reason) {
  if (reason.starts_with("PVC ") &&
      reason.find(" was not created for pod ") != std::string_view::npos) {
    return "PVC ... was not created for pod ... (pod is not owner)";
  }
  std::string out;
  bool quoted = false;
  for (char c : reason) {
    if (c == '"') {
      quoted = !quoted;
      out += quoted ? "\"." : "..\"";
    } else if (!quoted) {
      out += c;
    }
  }
  return out;
}

// What the scenarios' storage has, by scenario, and what kube-scheduler's
// volume plugins made of it.
struct VolumeCoverage {
  std::map<std::string, size_t> features;    // scenarios with each
  std::map<std::string, size_t> pre_filter;  // scenarios, by plugin: reason
  std::map<std::string, size_t> filter;      // nodes, by plugin: reason
  size_t feasible_with_claims = 0;  // feasible nodes for a pod with claims

  void Add(const Scenario& s, const Result& theirs) {
    auto any = [](const std::vector<std::string>& items, std::string_view text) {
      return std::any_of(items.begin(), items.end(), [&](const std::string& i) {
        return i.find(text) != std::string::npos;
      });
    };
    auto count = [&](bool has, const char* feature) {
      if (has) ++features[feature];
    };
    const bool claims = s.pod.find("\"persistentVolumeClaim\"") != std::string::npos ||
                        s.pod.find("\"ephemeral\"") != std::string::npos;
    count(!s.storage_classes.empty() || !s.claims.empty() || !s.volumes.empty(),
          "with storage");
    count(claims, "incoming pod with claims");
    count(s.pod.find("\"ephemeral\"") != std::string::npos,
          "incoming pod with an ephemeral volume");
    count(any(s.placed, "\"volumes\""), "placed pods with claims");
    count(any(s.storage_classes, "WaitForFirstConsumer"), "WaitForFirstConsumer classes");
    count(any(s.storage_classes, "allowedTopologies"), "allowedTopologies");
    count(any(s.volumes, "\"Available\""), "Available PVs");
    count(any(s.volumes, "\"nodeAffinity\""), "PV node affinity");
    count(any(s.volumes, "matchFields"), "PV node affinity on metadata.name");
    count(any(s.volumes, "failure-domain.beta.kubernetes.io/zone"), "PV beta zone label");
    count(any(s.volumes, "__"), "PV multi-zone label");
    count(any(s.volumes, "\"csi\""), "CSI PVs");
    count(any(s.volumes, "\"Block\""), "Block PVs");
    count(any(s.volumes, "deletionTimestamp"), "PVs being deleted");
    count(any(s.claims, "ReadWriteOncePod"), "ReadWriteOncePod claims");
    count(any(s.claims, "selected-node"), "claims with a selected node");
    count(any(s.claims, "\"selector\""), "claims with a selector");
    count(any(s.claims, "\"Lost\""), "Lost claims");
    count(any(s.claims, "deletionTimestamp"), "claims being deleted");
    count(any(s.claims, "ownerReferences"), "ephemeral claims");
    count(any(s.claims, "volumeAttributesClassName"), "claims with a VolumeAttributesClass");
    count(!s.csi_nodes.empty(), "CSINodes");
    count(any(s.csi_nodes, "\"count\":0"), "CSINodes with an attach limit of 0");
    count(any(s.csi_drivers, "\"preventPodSchedulingIfMissing\":true"),
          "CSIDrivers that must be on the node");
    count(any(s.csi_drivers, "\"storageCapacity\":true"),
          "CSIDrivers that report capacity");
    count(!s.capacities.empty(), "CSIStorageCapacities");
    count(any(s.capacities, "maximumVolumeSize"),
          "CSIStorageCapacities with a maximumVolumeSize");
    if (!theirs.pre_filter_rejection.empty() &&
        IsVolumePlugin(theirs.pre_filter_rejection) && !theirs.nodes.empty()) {
      ++pre_filter[absl::StrCat(theirs.pre_filter_rejection, ": ",
                                Unnamed(theirs.nodes.begin()->second.reasons))];
      return;
    }
    for (const auto& [name, v] : theirs.nodes) {
      if (v.feasible) {
        feasible_with_claims += claims;
      } else if (IsVolumePlugin(v.plugin)) {
        ++filter[absl::StrCat(v.plugin, ": ", v.reasons)];
      }
    }
  }

  // How many nodes' filter rejections read `reason`.
  size_t Filtered(std::string_view reason) const {
    size_t n = 0;
    for (const auto& [key, count] : filter) {
      n += key.find(reason) != std::string::npos ? count : 0;
    }
    return n;
  }

  // How many scenarios' pre-filter, or nodes' filter, `plugin` rejected.
  static size_t Of(const std::map<std::string, size_t>& m, const std::string& plugin) {
    size_t n = 0;
    for (const auto& [key, count] : m) n += key.starts_with(plugin + ":") ? count : 0;
    return n;
  }

  std::string Report() const {
    std::string out = "storage in the scenarios:\n";
    for (const auto& [f, n] : features) absl::StrAppend(&out, "  ", n, " ", f, "\n");
    absl::StrAppend(&out, "kube-scheduler's volume PreFilter rejections (scenarios):\n");
    for (const auto& [r, n] : pre_filter) absl::StrAppend(&out, "  ", n, " ", r, "\n");
    absl::StrAppend(&out, "kube-scheduler's volume Filter rejections (nodes):\n");
    for (const auto& [r, n] : filter) absl::StrAppend(&out, "  ", n, " ", r, "\n");
    absl::StrAppend(&out, "  ", feasible_with_claims,
                    " nodes feasible for a pod with claims\n");
    return out;
  }
};

// The nodes on which kube-scheduler counts a nominated pod for the
// incoming one: of priority at least its own, and of another UID.
std::set<std::string> NodesWithNominatedPods(const Scenario& s) {
  std::set<std::string> nodes;
  if (s.nominated.empty()) return nodes;
  absl::StatusOr<Pod> incoming = kube::DecodePod(s.pod);
  if (!incoming.ok()) return nodes;
  for (const std::string& json : s.nominated) {
    absl::StatusOr<Pod> pod = kube::DecodePod(json);
    if (pod.ok() && pod->priority >= incoming->priority &&
        pod->uid != incoming->uid) {
      nodes.insert(pod->nominated_node_name);
    }
  }
  return nodes;
}

// What the nominated pods met: the scenarios with any, and the nodes with
// one that kube-scheduler counts, by the verdict they got.
struct NominatedCoverage {
  size_t scenarios = 0, pods = 0, counted_nodes = 0;
  std::map<std::string, size_t> verdicts;  // "feasible", or "plugin: reasons"

  void Add(const Scenario& s, const std::set<std::string>& counted,
           const Result& theirs) {
    if (s.nominated.empty()) return;
    ++scenarios;
    pods += s.nominated.size();
    for (const auto& [name, v] : theirs.nodes) {
      if (!counted.contains(name)) continue;
      ++counted_nodes;
      ++verdicts[v.feasible ? "feasible"
                            : absl::StrCat(v.plugin, ": ", Unnamed(v.reasons))];
    }
  }

  size_t Of(std::string_view prefix) const {
    size_t n = 0;
    for (const auto& [key, count] : verdicts) {
      n += key.starts_with(prefix) ? count : 0;
    }
    return n;
  }

  std::string Report() const {
    std::string out = absl::StrCat(
        "nominated pods: ", scenarios, " scenarios with ", pods, "; ",
        counted_nodes, " nodes with one kube-scheduler counts, by verdict:\n");
    for (const auto& [v, n] : verdicts) {
      absl::StrAppend(&out, "  ", n, " ", v, "\n");
    }
    return out;
  }
};

// A preemption message's kind: "not eligible ..." as it is; "0/5 nodes
// are available: 2 A, 3 B." as "A + B".
std::string MessageKind(absl::string_view message) {
  absl::ConsumePrefix(&message, "preemption: ");
  constexpr absl::string_view kAvailable = " nodes are available: ";
  const size_t at = message.find(kAvailable);
  if (at == absl::string_view::npos) return std::string(message);
  message.remove_prefix(at + kAvailable.size());
  absl::ConsumeSuffix(&message, ".");
  std::vector<std::string> kinds;
  for (absl::string_view part : absl::StrSplit(message, ", ")) {
    part.remove_prefix(part.find(' ') + 1);
    kinds.push_back(Unnamed(std::string_view(part.data(), part.size())));
  }
  std::sort(kinds.begin(), kinds.end());
  return absl::StrJoin(kinds, " + ");
}

// What kube-scheduler's preemption met, by scenario.
struct PreemptionCoverage {
  size_t scenarios = 0;     // where the preemption part made it matter
  size_t with_budgets = 0;  // with PodDisruptionBudgets
  std::map<std::string, size_t> outcomes;

  // `nominated_node`: the incoming pod's status.nominatedNodeName.
  void Add(const Scenario& s, const Result& theirs,
           const std::string& nominated_node) {
    scenarios += s.preemption;
    with_budgets += !s.budgets.empty();
    if (auto n = theirs.nodes.find(nominated_node);
        n != theirs.nodes.end() && n->second.feasible) {
      ++outcomes["not run: the pod's nominated node fits"];
    }
    if (!theirs.preemption) return;
    const PreemptionVerdict& p = *theirs.preemption;
    ++outcomes["run"];
    if (s.preemption) {
      ++outcomes["run where the preemption part made it matter"];
    }
    if (p.candidates.empty()) {
      ++outcomes[absl::StrCat("no candidate: ", MessageKind(p.message))];
      return;
    }
    ++outcomes["a candidate"];
    if (s.preemption) {
      ++outcomes["a candidate where the preemption part made it matter"];
    }
    const Candidate& best = p.candidates.at(p.best[0]);
    auto count = [&](bool has, const char* what) {
      if (has) ++outcomes[what];
    };
    count(p.candidates.size() > 1, "a candidate: more than one");
    count(p.best.size() > 1, "a candidate: tied best ones");
    count(best.victims.size() > 1,
          "a candidate: the best evicting several pods");
    count(best.violations > 0, "a candidate: the best violating budgets");
    count(std::any_of(p.candidates.begin(), p.candidates.end(),
                      [](const auto& c) { return c.second.violations > 0; }),
          "a candidate: one violating budgets");
  }

  size_t Of(const std::string& outcome) const {
    auto it = outcomes.find(outcome);
    return it == outcomes.end() ? 0 : it->second;
  }
  // Scenarios without a candidate whose message has `text`.
  size_t Refused(absl::string_view text) const {
    size_t n = 0;
    for (const auto& [key, count] : outcomes) {
      n += key.starts_with("no candidate: ") && absl::StrContains(key, text)
               ? count
               : 0;
    }
    return n;
  }

  std::string Report() const {
    std::string out = absl::StrCat(
        "preemption: ", scenarios, " scenarios made for it (", with_budgets,
        " with budgets); kube-scheduler's outcomes, by scenario:\n");
    for (const auto& [o, n] : outcomes) {
      absl::StrAppend(&out, "  ", n, " ", o, "\n");
    }
    return out;
  }
};

std::vector<uint64_t> RegressionSeeds() {
  std::vector<uint64_t> seeds;
  std::istringstream in(ms::testing::ReadFileOrDie(
      absl::StrCat(std::getenv("MS_SOURCE_DIR"),
                   "/tests/differential/regression_seeds.txt")));
  for (std::string line; std::getline(in, line);) {
    line = std::string(absl::StripAsciiWhitespace(line.substr(0, line.find('#'))));
    uint64_t seed = 0;
    if (!line.empty() && absl::SimpleAtoi(line, &seed)) seeds.push_back(seed);
  }
  return seeds;
}

// The oracle is kube-scheduler: on a scenario worked out by hand it gives
// kube-scheduler's reasons, scores and weights, and it names a bad line.
TEST(OracleTest, GivesKubeSchedulersVerdicts) {
  auto node = [](const std::string& name, const std::string& cpu,
                 const std::string& spec) {
    const std::string r = absl::StrCat(R"({"cpu":")", cpu,
                                       R"(","memory":"8Gi","pods":"110"})");
    return absl::StrCat(R"({"metadata":{"name":")", name,
                        R"(","labels":{"kubernetes.io/hostname":")", name,
                        R"("}},"spec":)", spec, R"(,"status":{"capacity":)", r,
                        R"(,"allocatable":)", r, "}}");
  };
  Scenario s{.name = "by-hand"};
  s.nodes = {node("a", "4", "{}"), node("b", "4", "{}"), node("small", "2", "{}"),
             node("tainted", "4",
                  R"({"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]})")};
  s.placed = {R"({"metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},)"
              R"("spec":{"nodeName":"a","containers":[{"name":"c","resources":)"
              R"({"requests":{"cpu":"1","memory":"1Gi"}}}]}})"};
  s.pod = R"({"metadata":{"name":"p","namespace":"default"},"spec":{)"
          R"("containers":[{"name":"c","resources":{"requests":{"cpu":"3","memory":"1Gi"}}}],)"
          R"("affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)"
          R"([{"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":)"
          R"({"app":"web"}},"topologyKey":"kubernetes.io/hostname"}}]}}}})";
  Scenario bad = s;
  bad.name = "bad";
  bad.pod = R"({"spec":{"containers":"not a list"}})";
  std::vector<std::string> lines = RunOracle({s, bad});
  ASSERT_EQ(lines.size(), 2u);

  const Result r = Theirs(lines[0]);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.nodes.at("small").reasons, "Insufficient cpu");
  EXPECT_EQ(r.nodes.at("tainted").reasons, "node(s) had untolerated taint(s)");
  const Verdict& a = r.nodes.at("a");
  const Verdict& b = r.nodes.at("b");
  ASSERT_TRUE(a.feasible && b.feasible);
  // Preferred anti-affinity: the node with the web pod is the worst.
  EXPECT_EQ(a.scores.at("InterPodAffinity"), 0);
  EXPECT_EQ(b.scores.at("InterPodAffinity"), 100);
  // leastAllocated on cpu and memory: a (4 of 4 cpu, 2 of 8 Gi) scores
  // (0 + 75) / 2, b (3 of 4 cpu, 1 of 8 Gi) (25 + 87) / 2.
  EXPECT_EQ(a.scores.at("NodeResourcesFit"), 37);
  EXPECT_EQ(b.scores.at("NodeResourcesFit"), 56);
  std::map<std::string, double> weights = {
      {"ImageLocality", 1},    {"InterPodAffinity", 2},
      {"NodeAffinity", 2},     {"NodeResourcesBalancedAllocation", 1},
      {"NodeResourcesFit", 1}, {"PodTopologySpread", 2},
      {"TaintToleration", 3},  {"VolumeBinding", 1}};
  // DynamicResources scores from 1.35 (prioritized device lists); we
  // refuse pods with resource claims.
  if (OracleVersion().AtLeast(35)) weights["DynamicResources"] = 2;
  EXPECT_EQ(r.weights, weights);
  EXPECT_THAT(Theirs(lines[1]).error, ::testing::HasSubstr("containers"));
}

// The volume plugins through the oracle, worked out by hand, and our side
// agreeing: a bound claim's PV in zone z1, a claim waiting for its first
// consumer, a CSINode allowing one volume where a placed pod has one
// already; then a claim that does not exist, and one that is Immediate
// and unbound, which kube-scheduler's PreFilter rejects on every node.
TEST(OracleTest, GivesVolumePluginsVerdicts) {
  auto node = [](const std::string& name, const std::string& zone) {
    const std::string r = R"({"cpu":"4","memory":"8Gi","pods":"110"})";
    return absl::StrCat(R"({"metadata":{"name":")", name,
                        R"(","labels":{"kubernetes.io/hostname":")", name,
                        R"(","topology.kubernetes.io/zone":")", zone,
                        R"("}},"status":{"capacity":)", r,
                        R"(,"allocatable":)", r, "}}");
  };
  auto pv = [](const std::string& name, const std::string& zone,
               const std::string& claim) {
    return absl::StrCat(
        R"({"metadata":{"name":")", name, R"(","uid":"uid-)", name,
        R"(","resourceVersion":"1","labels":{"topology.kubernetes.io/zone":")",
        zone, R"("}},"spec":{"capacity":{"storage":"5Gi"},)",
        R"("accessModes":["ReadWriteOnce"],"storageClassName":"wffc",)",
        R"("csi":{"driver":"csi.example.com","volumeHandle":"h-)", name,
        R"("},"claimRef":{"namespace":"default","name":")", claim,
        R"(","uid":"uid-)", claim, R"("}},"status":{"phase":"Bound"}})");
  };
  auto claim = [](const std::string& name, const std::string& cls,
                  const std::string& volume) {
    return absl::StrCat(
        R"({"metadata":{"name":")", name,
        R"(","namespace":"default","uid":"uid-)", name,
        R"(","resourceVersion":"1")",
        volume.empty() ? ""
                       : R"(,"annotations":{"pv.kubernetes.io/bind-completed":"yes"})",
        R"(},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":")", cls,
        R"(","resources":{"requests":{"storage":"1Gi"}})",
        volume.empty() ? "" : absl::StrCat(R"(,"volumeName":")", volume, R"(")"),
        R"(},"status":{"phase":")", volume.empty() ? "Pending" : "Bound",
        R"("}})");
  };
  auto pod = [](const std::string& name, const std::string& node,
                const std::vector<std::string>& claims) {
    std::vector<std::string> volumes;
    for (const std::string& c : claims) {
      volumes.push_back(absl::StrCat(R"({"name":")", c,
                                     R"(","persistentVolumeClaim":{"claimName":")",
                                     c, R"("}})"));
    }
    return absl::StrCat(
        R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)",
        name, R"("},"spec":{)",
        node.empty() ? "" : absl::StrCat(R"("nodeName":")", node, R"(",)"),
        R"("containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}],)",
        R"("volumes":[)", absl::StrJoin(volumes, ","), "]}}");
  };
  Scenario s{.name = "volumes-by-hand"};
  s.nodes = {node("a", "z1"), node("b", "z2"), node("c", "z1")};
  s.storage_classes = {
      R"({"metadata":{"name":"wffc","uid":"uid-wffc","resourceVersion":"1"},)"
      R"("provisioner":"csi.example.com","volumeBindingMode":"WaitForFirstConsumer"})",
      R"({"metadata":{"name":"now","uid":"uid-now","resourceVersion":"1"},)"
      R"("provisioner":"csi.example.com","volumeBindingMode":"Immediate"})"};
  s.volumes = {pv("pv-data", "z1", "data"), pv("pv-other", "z1", "other")};
  s.claims = {claim("data", "wffc", "pv-data"), claim("other", "wffc", "pv-other"),
              claim("scratch", "wffc", ""), claim("later", "now", "")};
  s.csi_nodes = {
      R"({"metadata":{"name":"c","uid":"uid-csinode-c","resourceVersion":"1"},)"
      R"("spec":{"drivers":[{"name":"csi.example.com","nodeID":"c",)"
      R"("allocatable":{"count":1}}]}})"};
  s.placed = {pod("user", "c", {"other"})};
  s.pod = pod("incoming", "", {"data", "scratch"});
  Scenario missing = s;
  missing.name = "missing";
  missing.pod = pod("incoming", "", {"data", "nope"});
  Scenario immediate = s;
  immediate.name = "immediate";
  immediate.pod = pod("incoming", "", {"later"});
  std::vector<std::string> lines = RunOracle({s, missing, immediate});
  ASSERT_EQ(lines.size(), 3u);

  const Result r = Theirs(lines[0]);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.nodes.at("a").feasible);
  EXPECT_EQ(r.nodes.at("b").plugin, "VolumeZone");
  EXPECT_EQ(r.nodes.at("b").reasons, "node(s) had no available volume zone");
  // pv-other is attached already; pv-data and scratch's volume would be 2
  // more.
  EXPECT_EQ(r.nodes.at("c").plugin, "NodeVolumeLimits");
  EXPECT_EQ(r.nodes.at("c").reasons, "node(s) exceed max volume count");
  const Result m = Theirs(lines[1]);
  EXPECT_EQ(m.pre_filter_rejection, "VolumeRestrictions");
  for (const char* n : {"a", "b", "c"}) {
    EXPECT_EQ(m.nodes.at(n).reasons, R"(persistentvolumeclaim "nope" not found)");
  }
  const Result i = Theirs(lines[2]);
  EXPECT_EQ(i.pre_filter_rejection, "VolumeBinding");
  EXPECT_EQ(i.nodes.at("a").reasons,
            "pod has unbound immediate PersistentVolumeClaims");
  for (size_t k = 0; k < lines.size(); ++k) {
    const Scenario& scenario = k == 0 ? s : k == 1 ? missing : immediate;
    EXPECT_THAT(Compare(Ours(scenario), Theirs(lines[k])), ::testing::IsEmpty())
        << scenario.name;
  }
}

// A node of 4 cpu and 8Gi labelled with its hostname, as the hand-written
// scenarios below use.
std::string HostNode(const std::string& name) {
  const std::string r = R"({"cpu":"4","memory":"8Gi","pods":"110"})";
  return absl::StrCat(R"({"metadata":{"name":")", name,
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"("}},"status":{"capacity":)", r,
                      R"(,"allocatable":)", r, "}}");
}

// Nominated pods through the oracle, worked out by hand, and our side
// agreeing. The incoming pod (priority 100, 2 cpu, app=web) on nodes of 4
// cpu: a pod of priority 1000 nominated to a with 3 cpu leaves it 1
// ("Insufficient cpu"), one of priority 100 on c too (equal counts), one
// of priority 10 on b does not count; a stale copy of the incoming pod
// itself (its UID) on d does not either, nor one on a node that does not
// exist; one on e whose required anti-affinity selects app=web rejects e
// while the incoming pod's own anti-affinity makes InterPodAffinity run.
// Scores are the nodes' without the nominated pods: b and d alike.
//
// Without the incoming pod's anti-affinity, InterPodAffinity's PreFilter
// skips and no AddPod tells it of e's nominated pod: e is feasible. There
// the incoming pod spreads app=web over hostnames with maxSkew 1: a web pod
// of priority 1000 nominated to a makes a's count 1 + 1 against 0
// elsewhere; one of priority 10 on b counts nowhere.
TEST(OracleTest, CountsNominatedPods) {
  auto node = HostNode;
  auto priority = [](int p) {
    return absl::StrCat(R"("priorityClassName":"prio-)", p,
                        R"(","priority":)", p);
  };
  // spec.affinity: required anti-affinity to app=<app> on hostnames.
  auto anti = [](const std::string& app) {
    return absl::StrCat(
        R"("affinity":{"podAntiAffinity":)",
        R"({"requiredDuringSchedulingIgnoredDuringExecution":)",
        R"([{"labelSelector":{"matchLabels":{"app":")", app, R"("}},)",
        R"("topologyKey":"kubernetes.io/hostname"}]}},)");
  };
  // spec.containers, and the end of spec.
  auto container = [](const std::string& cpu) {
    return absl::StrCat(R"("containers":[{"name":"c","resources":)",
                        R"({"requests":{"cpu":")", cpu,
                        R"(","memory":"1Gi"}}}]})");
  };
  auto nominated = [&](const std::string& name, const std::string& uid,
                       const std::string& app, int p, const std::string& cpu,
                       const std::string& node, const std::string& extra) {
    return absl::StrCat(
        R"({"metadata":{"name":")", name,
        R"(","namespace":"default","uid":")", uid,
        R"(","labels":{"app":")", app, R"("}},"spec":{)", priority(p), ",",
        extra, container(cpu),
        R"(,"status":{"phase":"Pending","nominatedNodeName":")", node,
        R"("}})");
  };
  auto incoming = [&](const std::string& extra) {
    return absl::StrCat(
        R"({"metadata":{"name":"p","namespace":"default","uid":"uid-p",)"
        R"("labels":{"app":"web"}},"spec":{)", priority(100), ",", extra,
        container("2"), R"(,"status":{"phase":"Pending"}})");
  };
  const std::string anti_web = anti("web");
  Scenario s{.name = "nominated-by-hand"};
  s.nodes = {node("a"), node("b"), node("c"), node("d"), node("e")};
  s.nominated = {nominated("high", "uid-high", "db", 1000, "3", "a", ""),
                 nominated("low", "uid-low", "db", 10, "3", "b", ""),
                 nominated("equal", "uid-equal", "db", 100, "3", "c", ""),
                 nominated("p", "uid-p", "web", 1000, "3", "d", ""),
                 nominated("ghost", "uid-ghost", "db", 1000, "3", "gone", ""),
                 nominated("anti", "uid-anti", "db", 1000, "100m", "e",
                           anti_web)};
  s.pod = incoming(anti("cache"));  // matches nothing, but is a required term
  Scenario skip = s;
  skip.name = "nominated-skip";
  skip.nominated = {
      nominated("anti", "uid-anti", "db", 1000, "100m", "e", anti_web),
      nominated("web-high", "uid-web-high", "web", 1000, "100m", "a", ""),
      nominated("web-low", "uid-web-low", "web", 10, "100m", "b", "")};
  skip.pod = incoming(
      R"("topologySpreadConstraints":[{"maxSkew":1,)"
      R"("topologyKey":"kubernetes.io/hostname",)"
      R"("whenUnsatisfiable":"DoNotSchedule",)"
      R"("labelSelector":{"matchLabels":{"app":"web"}}}],)");
  std::vector<std::string> lines = RunOracle({s, skip});
  ASSERT_EQ(lines.size(), 2u);

  const Result r = Theirs(lines[0]);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.nodes.at("a").plugin, "NodeResourcesFit");
  EXPECT_EQ(r.nodes.at("a").reasons, "Insufficient cpu");
  EXPECT_EQ(r.nodes.at("c").reasons, "Insufficient cpu");
  EXPECT_EQ(r.nodes.at("e").plugin, "InterPodAffinity");
  EXPECT_EQ(r.nodes.at("e").reasons,
            "node(s) didn't satisfy existing pods anti-affinity rules");
  const Verdict& b = r.nodes.at("b");
  const Verdict& d = r.nodes.at("d");
  ASSERT_TRUE(b.feasible && d.feasible);
  // leastAllocated: 2 of 4 cpu and 1 of 8 Gi, (50 + 87) / 2.
  EXPECT_EQ(b.scores.at("NodeResourcesFit"), 68);
  EXPECT_EQ(b.scores, d.scores);

  const Result k = Theirs(lines[1]);
  ASSERT_EQ(k.error, "");
  EXPECT_TRUE(k.nodes.at("e").feasible);
  EXPECT_TRUE(k.nodes.at("b").feasible);
  EXPECT_EQ(k.nodes.at("a").plugin, "PodTopologySpread");
  EXPECT_EQ(k.nodes.at("a").reasons,
            "node(s) didn't match pod topology spread constraints");
  for (size_t i = 0; i < lines.size(); ++i) {
    const Scenario& scenario = i == 0 ? s : skip;
    EXPECT_THAT(Compare(Ours(scenario), Theirs(lines[i])), ::testing::IsEmpty())
        << scenario.name;
  }
}

// Preemption through the oracle, worked out by hand, and our side
// agreeing. The incoming pod (priority 100, 2 cpu) fits none of three
// nodes of 4 cpu:
//   a: high (priority 1000, 1 cpu), old (10, 1 cpu, started 01:00), big
//      (10, 1.5 cpu, 02:00), low (1, 0.5 cpu). Without the three of lower
//      priority it fits (1 + 2 of 4); put back most important first, old
//      fits beside it (1 + 1 + 2 = 4), big (5.5) and low (4.5) do not:
//      victims [big, low], not all three.
//   b: guarded (5, 3 cpu, app=guarded), its budget allowing 0 disruptions:
//      victims [guarded], 1 violation.
//   c: mid (50, 3 cpu): victims [mid].
// The fewest violations leave a and c, the lower highest victim priority
// (10 against 50) picks a: the budget steers the pick away from b, whose
// victim has the lowest priority of all. With the budget allowing 1, or
// guarded among its disruptedPods, b is picked. Then the refusals: a pod
// with preemptionPolicy Never; a pod nominated to a, where low is being
// evicted by a preemption; a pod larger than any node.
TEST(OracleTest, PreemptsAsKubeScheduler) {
  auto node = HostNode;
  auto pod = [](const std::string& name, const std::string& node, int priority,
                const std::string& cpu, const std::string& start,
                const std::string& app, const std::string& metadata = "",
                const std::string& status = "") {
    return absl::StrCat(
        R"({"metadata":{"name":")", name,
        R"(","namespace":"default","uid":"uid-)", name,
        R"(","labels":{"app":")", app, R"("})", metadata,
        R"(},"spec":{"nodeName":")", node, R"(","priority":)", priority,
        R"(,"containers":[{"name":"c","resources":{"requests":{"cpu":")", cpu,
        R"(","memory":"256Mi"}}}]},"status":{"phase":"Running",)", status,
        R"("startTime":"2025-06-01T)", start, R"(:00Z"}})");
  };
  auto incoming = [](const std::string& cpu, const std::string& spec,
                     const std::string& status) {
    return absl::StrCat(
        R"({"metadata":{"name":"p","namespace":"default","uid":"uid-p"},)"
        R"("spec":{"priorityClassName":"prio-100","priority":100,)", spec,
        R"("containers":[{"name":"c","resources":{"requests":{"cpu":")", cpu,
        R"(","memory":"1Gi"}}}]},"status":{"phase":"Pending")", status, "}}");
  };
  auto budget = [](int allowed, const std::string& disrupted) {
    return absl::StrCat(
        R"({"metadata":{"name":"guard","namespace":"default","uid":"uid-guard",)"
        R"("resourceVersion":"1"},"spec":{"minAvailable":1,"selector":)"
        R"({"matchLabels":{"app":"guarded"}}},"status":{"disruptionsAllowed":)",
        allowed,
        disrupted.empty()
            ? ""
            : absl::StrCat(R"(,"disruptedPods":{")", disrupted,
                           R"(":"2026-01-01T00:00:00Z"})"),
        "}}");
  };
  Scenario s{.name = "preemption-by-hand"};
  s.nodes = {node("a"), node("b"), node("c")};
  s.placed = {pod("high", "a", 1000, "1", "00:00", "batch"),
              pod("old", "a", 10, "1", "01:00", "batch"),
              pod("big", "a", 10, "1500m", "02:00", "batch"),
              pod("low", "a", 1, "500m", "00:30", "batch"),
              pod("guarded", "b", 5, "3", "00:00", "guarded"),
              pod("mid", "c", 50, "3", "00:00", "batch")};
  s.budgets = {budget(0, "")};
  s.pod = incoming("2", "", "");
  Scenario allowed = s;
  allowed.name = "budget-allows-one";
  allowed.budgets = {budget(1, "")};
  Scenario disrupted = s;
  disrupted.name = "guarded-disrupted-already";
  disrupted.budgets = {budget(0, "guarded")};
  Scenario never = s;
  never.name = "never";
  never.pod = incoming("2", R"("preemptionPolicy":"Never",)", "");
  Scenario terminating = s;
  terminating.name = "terminating-on-nominated-node";
  terminating.placed[3] =
      pod("low", "a", 1, "500m", "00:30", "batch",
          R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")",
          R"("conditions":[{"type":"DisruptionTarget","status":"True",)"
          R"("reason":"PreemptionByScheduler"}],)");
  terminating.pod = incoming("2", "", R"(,"nominatedNodeName":"a")");
  Scenario too_big = s;
  too_big.name = "too-big";
  too_big.pod = incoming("5", "", "");
  const std::vector<Scenario> scenarios = {s,     allowed,     disrupted,
                                           never, terminating, too_big};
  std::vector<std::string> lines = RunOracle(scenarios);
  ASSERT_EQ(lines.size(), scenarios.size());

  const std::map<std::string, Candidate> candidates = {
      {"a", {.victims = {"default/big", "default/low"}}},
      {"b", {.victims = {"default/guarded"}, .violations = 1}},
      {"c", {.victims = {"default/mid"}}}};
  const Result r = Theirs(lines[0]);
  ASSERT_EQ(r.error, "");
  ASSERT_TRUE(r.preemption.has_value());
  // Up to 1.36 a preemption that finds a node says nothing; from 1.37 it
  // names the node, after the filter summary.
  const std::string found =
      OracleVersion().AtLeast(37)
          ? "preemption: found a potential placement for pod on node a, "
            "preempting 2 victims"
          : "";
  EXPECT_EQ(r.preemption->message, found);
  EXPECT_EQ(r.preemption->candidates, candidates);
  EXPECT_THAT(r.preemption->best, ::testing::ElementsAre("a"));
  EXPECT_EQ(r.preemption->failed_scheduling,
            absl::StrCat("0/3 nodes are available: 3 Insufficient cpu.",
                         found.empty() ? "" : " ", found));
  for (size_t i : {1, 2}) {
    const Result b = Theirs(lines[i]);
    ASSERT_TRUE(b.preemption.has_value()) << scenarios[i].name;
    EXPECT_THAT(b.preemption->best, ::testing::ElementsAre("b"));
    EXPECT_EQ(b.preemption->candidates.at("b").violations, 0);
  }
  const std::vector<std::string> refused = {
      "preemption: not eligible due to preemptionPolicy=Never.",
      "preemption: not eligible due to a terminating pod on the nominated node.",
      "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
      "scheduling."};
  for (size_t i = 3; i < lines.size(); ++i) {
    const Result k = Theirs(lines[i]);
    ASSERT_TRUE(k.preemption.has_value()) << scenarios[i].name;
    EXPECT_EQ(k.preemption->message, refused[i - 3]);
    EXPECT_THAT(k.preemption->candidates, ::testing::IsEmpty());
    EXPECT_EQ(k.preemption->failed_scheduling,
              absl::StrCat("0/3 nodes are available: 3 Insufficient cpu. ",
                           refused[i - 3]));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_THAT(Compare(Ours(scenarios[i]), Theirs(lines[i])),
                ::testing::IsEmpty())
        << scenarios[i].name;
  }
}

// The comparison finds each kind of disagreement.
TEST(CompareTest, FindsWhatDiffers) {
  Result theirs{.weights = {{"PodTopologySpread", 2}}};
  theirs.nodes["a"] = {.feasible = true, .scores = {{"PodTopologySpread", 100}}};
  theirs.nodes["b"] = {.feasible = true, .scores = {{"PodTopologySpread", 0}}};
  theirs.nodes["c"] = {.feasible = false, .reasons = "Insufficient cpu"};
  Result ours = theirs;
  ours.winner = "a";
  EXPECT_THAT(Compare(ours, theirs), ::testing::IsEmpty());

  Result worse = ours;
  worse.winner = "b";
  EXPECT_THAT(Compare(worse, theirs),
              ::testing::ElementsAre(::testing::HasSubstr("winner: ours b")));
  Result score = ours;
  score.nodes["b"].scores["PodTopologySpread"] = 2;
  EXPECT_THAT(Compare(score, theirs),
              ::testing::ElementsAre("b: PodTopologySpread ours 2, kube-scheduler 0"));
  Result reason = ours;
  reason.nodes["c"].reasons = "Insufficient memory";
  EXPECT_THAT(Compare(reason, theirs),
              ::testing::ElementsAre(::testing::HasSubstr("c: reasons ours")));
  Result feasible = ours;
  feasible.nodes["c"] = {.feasible = true};
  EXPECT_THAT(Compare(feasible, theirs),
              ::testing::ElementsAre(::testing::HasSubstr("c: feasible ours 1")));
  Result one_side = ours;
  one_side.nodes["a"].scores.clear();
  one_side.nodes["b"].scores.clear();
  EXPECT_THAT(Compare(one_side, theirs),
              ::testing::ElementsAre(::testing::HasSubstr("scored by one side only")));
}

// The comparison of preemptions: our node must be one of kube-scheduler's
// best, with its victims in its order; with no candidate, the message.
TEST(CompareTest, FindsWhatDiffersInPreemption) {
  Result theirs;
  theirs.nodes["a"] = {.feasible = false, .reasons = "Insufficient cpu"};
  theirs.nodes["b"] = theirs.nodes["a"];
  theirs.nodes["c"] = theirs.nodes["a"];
  theirs.preemption = PreemptionVerdict{
      .candidates = {{"a", {.victims = {"ns/x", "ns/y"}}},
                     {"b", {.victims = {"ns/z"}}},
                     {"c", {.victims = {"ns/w"}, .violations = 1}}},
      .best = {"a", "b"},
      .failed_scheduling = "0/3 nodes are available: 3 Insufficient cpu."};
  auto ours_on = [&](const std::string& node, const Candidate& c) {
    Result ours{.nodes = theirs.nodes};
    ours.preemption = PreemptionVerdict{
        .candidates = {{node, c}},
        .failed_scheduling = theirs.preemption->failed_scheduling};
    return ours;
  };
  EXPECT_THAT(Compare(ours_on("b", {.victims = {"ns/z"}}), theirs),
              ::testing::IsEmpty());
  EXPECT_THAT(
      Compare(ours_on("c", {.victims = {"ns/w"}, .violations = 1}), theirs),
      ::testing::ElementsAre(::testing::HasSubstr("best a b")));
  EXPECT_THAT(
      Compare(ours_on("a", {.victims = {"ns/y", "ns/x"}}), theirs),
      ::testing::ElementsAre(::testing::HasSubstr("evicting [ns/x ns/y]")));
  Result none{.nodes = theirs.nodes};
  none.preemption = PreemptionVerdict{
      .message = "preemption: not eligible due to preemptionPolicy=Never."};
  EXPECT_THAT(Compare(none, theirs),
              ::testing::Contains(::testing::HasSubstr("no candidate for us")));
  Result refused = theirs;
  refused.preemption = none.preemption;
  refused.preemption->message = "preemption: 0/3 nodes are available: 3 "
                                "Preemption is not helpful for scheduling.";
  EXPECT_THAT(Compare(none, refused),
              ::testing::Contains(::testing::HasSubstr("preemption message")));
  EXPECT_THAT(
      Compare(Result{.nodes = theirs.nodes}, theirs),
      ::testing::ElementsAre(::testing::HasSubstr("run by kube-scheduler only")));
}

TEST(DifferentialTest, AgreesWithKubeSchedulerOnRandomScenarios) {
  const uint64_t first = EnvOr("MS_DIFF_SEED", 1);
  const uint64_t count = EnvOr("MS_DIFF_SCENARIOS", 1000);
  std::vector<Scenario> scenarios;
  for (uint64_t seed : RegressionSeeds()) scenarios.push_back(Generate(seed));
  for (uint64_t i = 0; i < count; ++i) scenarios.push_back(Generate(first + i));
  std::vector<std::string> lines = RunOracle(scenarios);
  ASSERT_EQ(lines.size(), scenarios.size());

  const uint64_t show = EnvOr("MS_DIFF_SHOW", 5);
  uint64_t disagreements = 0;
  // What kube-scheduler's verdicts cover: over all scenarios, and over
  // those where no volume plugin rejected the pod anywhere, leaving out the
  // nodes with a nominated pod kube-scheduler counts (the nodes a volume
  // plugin or a nominated pod takes would mostly have been feasible and
  // scored).
  struct Coverage {
    size_t nodes = 0, infeasible = 0, spread = 0, affinity = 0,
           node_affinity = 0, soft_taints = 0, images = 0;
    void Add(const Result& theirs, const std::set<std::string>& skip = {}) {
      for (const auto& [name, v] : theirs.nodes) {
        if (skip.contains(name)) continue;
        ++nodes;
        infeasible += !v.feasible;
        spread += v.scores.contains("PodTopologySpread");
        affinity += v.scores.contains("InterPodAffinity");
        node_affinity += v.scores.contains("NodeAffinity");
        auto taint = v.scores.find("TaintToleration");
        soft_taints += taint != v.scores.end() && taint->second < 100;
        auto image = v.scores.find("ImageLocality");
        images += image != v.scores.end() && image->second > 0;
      }
    }
  } all, checked;
  VolumeCoverage volumes;
  NominatedCoverage nominated;
  PreemptionCoverage preemption;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Result theirs = Theirs(lines[i]);
    const Result ours = Ours(scenarios[i]);
    const std::set<std::string> with_nominated =
        NodesWithNominatedPods(scenarios[i]);
    volumes.Add(scenarios[i], theirs);
    nominated.Add(scenarios[i], with_nominated, theirs);
    preemption.Add(scenarios[i], theirs, ours.nominated_node);
    all.Add(theirs);
    if (!scenarios[i].preemption &&
        !IsVolumePlugin(theirs.pre_filter_rejection) &&
        std::none_of(theirs.nodes.begin(), theirs.nodes.end(),
                     [](const auto& n) { return IsVolumePlugin(n.second.plugin); })) {
      checked.Add(theirs, with_nominated);
    }
    std::vector<std::string> diffs = Compare(ours, theirs);
    if (diffs.empty()) continue;
    if (++disagreements <= show) {
      ADD_FAILURE() << "seed " << scenarios[i].seed << " (MS_DIFF_SEED="
                    << scenarios[i].seed << " MS_DIFF_SCENARIOS=1):\n  "
                    << absl::StrJoin(diffs, "\n  ") << "\n"
                    << scenarios[i].Describe();
    }
  }
  EXPECT_EQ(disagreements, 0) << "of " << scenarios.size() << " scenarios";
  // That the scenarios exercise what they are for.
  EXPECT_GT(checked.infeasible, checked.nodes / 10);
  EXPECT_GT(checked.spread, checked.nodes / 10);
  EXPECT_GT(checked.affinity, checked.nodes / 10);
  EXPECT_GT(checked.node_affinity, checked.nodes / 10);
  EXPECT_GT(checked.soft_taints, checked.nodes / 20);
  EXPECT_GT(checked.images, checked.nodes / 10);
  if (count >= 1000) {  // each volume plugin rejects, and lets pods with claims fit
    for (const char* plugin : {"VolumeRestrictions", "NodeVolumeLimits",
                               "VolumeBinding", "VolumeZone"}) {
      EXPECT_GT(VolumeCoverage::Of(volumes.filter, plugin), 0u) << plugin;
    }
    for (const char* plugin : {"VolumeRestrictions", "VolumeBinding", "VolumeZone"}) {
      EXPECT_GT(VolumeCoverage::Of(volumes.pre_filter, plugin), 0u) << plugin;
    }
    // About one node in 40 (CSI drivers that must be on the node and CSI
    // capacity reject some of the rest).
    EXPECT_GT(volumes.feasible_with_claims, all.nodes / 50);
    EXPECT_GT(volumes.Filtered("node(s) did not have enough free storage"), 0u);
    if (OracleVersion().AtLeast(37)) {  // VolumeLimitScaling
      EXPECT_GT(volumes.Filtered("CSI driver is not installed on the node"),
                0u);
    }
    // Nominated pods in about a quarter of the scenarios; the nodes they
    // count on are rejected for resources, and some fit.
    EXPECT_GT(nominated.scenarios, count / 8);
    EXPECT_GT(nominated.Of("NodeResourcesFit:"), 0u);
    EXPECT_GT(nominated.Of("feasible"), 0u);
    // Preemption in about a third of the scenarios and when no node fits
    // elsewhere: candidates, budget violations, and each refusal.
    EXPECT_GT(preemption.Of("run"), count / 5);
    EXPECT_GT(preemption.Of("a candidate"), count / 20);
    EXPECT_GT(preemption.Of("a candidate: more than one"), 0u);
    EXPECT_GT(preemption.Of("a candidate: tied best ones"), 0u);
    EXPECT_GT(preemption.Of("not run: the pod's nominated node fits"), 0u);
    EXPECT_GT(preemption.Of("a candidate: the best violating budgets"), 0u);
    EXPECT_GT(preemption.Refused("preemptionPolicy=Never"), 0u);
    EXPECT_GT(preemption.Refused("a terminating pod on the nominated node"), 0u);
    EXPECT_GT(preemption.Refused("No preemption victims"), 0u);
    EXPECT_GT(preemption.Refused("Preemption is not helpful"), 0u);
  }
  std::printf("%zu scenarios, %zu nodes (%zu infeasible; %zu scored by "
              "PodTopologySpread, %zu by InterPodAffinity, %zu by "
              "NodeAffinity, %zu below 100 by TaintToleration, %zu above 0 "
              "by ImageLocality), %lu disagreements\n",
              scenarios.size(), all.nodes, all.infeasible, all.spread,
              all.affinity, all.node_affinity, all.soft_taints, all.images,
              disagreements);
  std::printf("of them in scenarios no volume plugin rejected (the coverage "
              "checked): %zu nodes (%zu infeasible; %zu, %zu, %zu, %zu, %zu)\n",
              checked.nodes, checked.infeasible, checked.spread,
              checked.affinity, checked.node_affinity, checked.soft_taints,
              checked.images);
  std::printf("%s", volumes.Report().c_str());
  std::printf("%s", nominated.Report().c_str());
  std::printf("%s", preemption.Report().c_str());
}

}  // namespace
}  // namespace ms::differential
