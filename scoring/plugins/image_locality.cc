#include "scoring/plugins/image_locality.h"

#include <algorithm>
#include <optional>

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

bool ImageLocalitySums(const Pod& pod, KubeVersion kube,
                       const ImageIndex& index, size_t num_nodes, int64_t* sums,
                       std::vector<uint32_t>* holders) {
  holders->clear();
  bool cleared = false;
  bool any = false;
  auto add = [&](const std::string& reference) {
    const std::optional<uint32_t> name =
        FindImageName(NormalizedImageName(reference));
    if (!name) return;
    const ImageIndex::Image* image = index.Find(*name);
    if (image == nullptr) return;
    if (!cleared) {
      std::fill_n(sums, num_nodes, 0);
      cleared = true;
    }
    // scaledImageScore.
    const double spread = static_cast<double>(image->nodes.size()) /
                          static_cast<double>(num_nodes);
    const int64_t scaled =
        static_cast<int64_t>(static_cast<double>(ImageSize(*name)) * spread);
    for (uint32_t i : image->nodes) {
      if (i >= num_nodes) continue;
      sums[i] += scaled;
      holders->push_back(i);
      any = true;
    }
  };
  for (const Container& c : pod.init_containers) add(c.image);
  for (const Container& c : pod.containers) add(c.image);
  if (kube.AtLeast(36)) {
    for (const std::string& reference : pod.image_volumes) add(reference);
  }
  return any;
}

bool ImageLocalityScores(const std::vector<uint32_t>& holders,
                         const int64_t* sums, const int64_t* feasible,
                         size_t num_nodes, size_t num_containers, double* out) {
  std::fill_n(out, num_nodes, 0.0);
  bool any = false;
  // Nodes that hold the same images have the same sum: one division per
  // sum in a row (one in all for a pod of one image).
  int64_t last_sum = -1;
  double last_score = 0;
  for (uint32_t i : holders) {
    // A node that holds too little of the pod's images scores 0 without
    // the division.
    if (feasible[i] == 0 || sums[i] <= kMinThreshold) continue;
    if (sums[i] != last_sum) {
      last_sum = sums[i];
      last_score =
          static_cast<double>(ImageLocalityScore(last_sum, num_containers));
    }
    out[i] = last_score;
    any |= last_score > 0;
  }
  return any;
}

namespace {

class ImageLocalityPlugin final : public NormalizedScorePlugin {
 public:
  ImageLocalityPlugin() : NormalizedScorePlugin(BuiltinTerm::kImageLocality) {}

  bool PreScore(const ScoreContext& ctx) override {
    const Pod& pod = *ctx.pod;
    const size_t n = ctx.num_nodes();
    Reserve(n);
    const KubeVersion kube = ctx.config->kube;
    if (!ImageLocalitySums(pod, kube, ctx.table->images(), n, raw_.data(),
                           &holders_)) {
      return false;
    }
    return ImageLocalityScores(holders_, raw_.data(), ctx.feasible, n,
                               ImageLocalityImages(pod, kube), scores_.data());
  }

 private:
  std::vector<uint32_t> holders_;  // ImageLocalitySums', reused
};

}  // namespace

std::unique_ptr<ScorePlugin> MakeImageLocalityPlugin() {
  return std::make_unique<ImageLocalityPlugin>();
}

}  // namespace ms
