#include "scoring/score_plugins.h"

#include "scoring/plugins/balanced_allocation.h"
#include "scoring/plugins/image_locality.h"
#include "scoring/plugins/inter_pod_affinity.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/node_resources_fit.h"
#include "scoring/plugins/pod_topology_spread.h"
#include "scoring/plugins/recent_placements.h"
#include "scoring/plugins/sibling_spread.h"
#include "scoring/plugins/taint_toleration.h"
#include "scoring/plugins/volume_binding.h"

namespace ms {
namespace {

struct PluginRow {
  BuiltinTerm term;
  std::unique_ptr<ScorePlugin> (*make)();
};

// One row per row of kBuiltinTerms, in its order.
constexpr PluginRow kPlugins[] = {
    {BuiltinTerm::kLeastAllocated, MakeLeastAllocatedPlugin},
    {BuiltinTerm::kBalancedAllocation, MakeBalancedAllocationPlugin},
    {BuiltinTerm::kRecentPlacements, MakeRecentPlacementsPlugin},
    {BuiltinTerm::kPodTopologySpread, MakePodTopologySpreadPlugin},
    {BuiltinTerm::kInterPodAffinity, MakeInterPodAffinityPlugin},
    {BuiltinTerm::kNodeAffinity, MakeNodeAffinityPlugin},
    {BuiltinTerm::kTaintToleration, MakeTaintTolerationPlugin},
    {BuiltinTerm::kImageLocality, MakeImageLocalityPlugin},
    {BuiltinTerm::kVolumeBinding, MakeVolumeBindingPlugin},
    {BuiltinTerm::kSiblingSpread, MakeSiblingSpreadPlugin},
};

constexpr bool PluginsMatchTerms() {
  if (std::size(kPlugins) != kNumBuiltinTerms) return false;
  for (size_t i = 0; i < kNumBuiltinTerms; ++i) {
    if (kPlugins[i].term != kBuiltinTerms[i].term) return false;
  }
  return true;
}
static_assert(PluginsMatchTerms(),
              "one plugin per built-in term, in kBuiltinTerms' order");

}  // namespace

ScorePlugins MakeScorePlugins() {
  ScorePlugins plugins;
  for (size_t i = 0; i < kNumBuiltinTerms; ++i) plugins[i] = kPlugins[i].make();
  return plugins;
}

}  // namespace ms
