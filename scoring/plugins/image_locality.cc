#include "scoring/plugins/image_locality.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "model/image_names.h"
#include "scoring/explanation.h"

namespace ms {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMinThreshold = 23 * kMiB;
constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

}  // namespace

std::string NormalizedImageName(absl::string_view image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  // Go's LastIndex gives -1 when absent: colon <= slash, with npos as -1.
  const bool has_tag =
      colon != absl::string_view::npos &&
      (slash == absl::string_view::npos || colon > slash);
  return has_tag ? std::string(image) : absl::StrCat(image, ":latest");
}

int64_t ImageLocalityScore(int64_t sum, size_t num_containers) {
  const int64_t max_threshold =
      kMaxContainerThreshold * static_cast<int64_t>(num_containers);
  sum = std::clamp(sum, kMinThreshold, std::max(max_threshold, kMinThreshold));
  if (max_threshold <= kMinThreshold) return 0;
  return static_cast<int64_t>(kMaxNodeScore) * (sum - kMinThreshold) /
         (max_threshold - kMinThreshold);
}

size_t ImageLocalityImages(const Pod& pod, KubeVersion kube) {
  return pod.init_containers.size() + pod.containers.size() +
         (kube.AtLeast(37) ? pod.image_volumes.size() : 0);
}

bool ImageLocalityHolders(const Pod& pod, KubeVersion kube,
                          const ImageIndex& index, size_t num_nodes,
                          std::vector<uint32_t>* nodes,
                          std::vector<int64_t>* sums) {
  nodes->clear();
  sums->clear();
  // Each image's holders (ascending) and its scaled size.
  struct Holders {
    const std::vector<uint32_t>* nodes;
    int64_t scaled;
  };
  absl::InlinedVector<Holders, 4> lists;
  auto add = [&](const std::string& reference) {
    const std::optional<uint32_t> name =
        FindImageName(NormalizedImageName(reference));
    if (!name) return;
    const ImageIndex::Image* image = index.Find(*name);
    if (image == nullptr) return;
    // scaledImageScore.
    const double spread = static_cast<double>(image->nodes.size()) /
                          static_cast<double>(num_nodes);
    lists.push_back(
        {&image->nodes,
         static_cast<int64_t>(static_cast<double>(ImageSize(*name)) * spread)});
  };
  for (const Container& c : pod.init_containers) add(c.image);
  for (const Container& c : pod.containers) add(c.image);
  if (kube.AtLeast(36)) {
    for (const std::string& reference : pod.image_volumes) add(reference);
  }
  if (lists.size() == 1) {  // the usual pod: one image
    const std::vector<uint32_t>& holders = *lists[0].nodes;
    nodes->assign(holders.begin(),
                  std::lower_bound(holders.begin(), holders.end(), num_nodes));
    sums->assign(nodes->size(), lists[0].scaled);
    return !nodes->empty();
  }
  // Merge the ascending lists, summing a node's images: a min-heap of
  // each list's next node (on the stack for a few images).
  using Next = std::pair<uint32_t, size_t>;  // node, list
  absl::InlinedVector<Next, 4> heap;
  absl::InlinedVector<size_t, 4> at(lists.size(), 0);
  for (size_t l = 0; l < lists.size(); ++l) {
    if (!lists[l].nodes->empty()) heap.push_back({lists[l].nodes->front(), l});
  }
  const std::greater<Next> later;
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [i, l] = heap.back();
    heap.pop_back();
    if (i >= num_nodes) continue;  // the list's last below num_nodes passed
    if (nodes->empty() || nodes->back() != i) {
      nodes->push_back(i);
      sums->push_back(0);
    }
    sums->back() += lists[l].scaled;
    if (++at[l] < lists[l].nodes->size()) {
      heap.push_back({(*lists[l].nodes)[at[l]], l});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  return !nodes->empty();
}

bool ImageLocalityScores(const std::vector<uint32_t>& nodes,
                         const std::vector<int64_t>& sums,
                         const int64_t* feasible, size_t num_containers,
                         std::vector<double>* scores) {
  const size_t count = nodes.size();
  scores->resize(count);
  double* out = scores->data();
  // Nodes that hold the same images have the same sum: one division per
  // run of a sum (one in all for a pod of one image). A node that holds
  // too little of the pod's images scores 0 without the division.
  bool positive = false;
  for (size_t e = 0; e < count;) {
    const int64_t sum = sums[e];
    const double score =
        sum <= kMinThreshold
            ? 0.0
            : static_cast<double>(ImageLocalityScore(sum, num_containers));
    positive |= score > 0;
    size_t run = e + 1;
    while (run < count && sums[run] == sum) ++run;
    std::fill(out + e, out + run, score);
    e = run;
  }
  if (!positive) return false;
  for (size_t e = 0; e < count; ++e) {
    if (out[e] > 0 && feasible[nodes[e]] != 0) return true;
  }
  return false;
}

namespace {

class ImageLocalityPlugin final : public SparseScorePlugin {
 public:
  ImageLocalityPlugin()
      : SparseScorePlugin(BuiltinTerm::kImageLocality, 0, 0.0) {}

  bool PreScore(const ScoreContext& ctx) override {
    const Pod& pod = *ctx.pod;
    const KubeVersion kube = ctx.config->kube;
    if (!ImageLocalityHolders(pod, kube, ctx.table->images(), ctx.num_nodes(),
                              &nodes_, &raw_)) {
      return false;
    }
    return ImageLocalityScores(nodes_, raw_, ctx.feasible,
                               ImageLocalityImages(pod, kube), &scores_);
  }
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeImageLocalityPlugin() {
  return std::make_unique<ImageLocalityPlugin>();
}

}  // namespace ms
