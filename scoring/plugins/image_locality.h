// ImageLocality (kube-scheduler: plugins/imagelocality).
//
// Score, with no normalisation: for each container and init container of
// the pod (and, from Kubernetes 1.36, each image volume) whose image the
// node holds (the image name with ":latest" added when it has neither tag
// nor digest, matched against every name the node reports), the image's
// size scaled by the share of all nodes that hold it (int64(size * holders
// / nodes)), summed; then clamped to [23 MB, 1000 MB * images] and mapped
// linearly onto [0, 100], where images are the containers and init
// containers (and, from 1.37, the image volumes too). kube-scheduler never
// skips it, but when no feasible node holds any of the pod's images it is 0
// on every node and cannot change the choice: Decide then leaves it out (no
// row, no weight), as it does for skipped plugins.
#ifndef METRICS_SCHEDULER_SCORING_PLUGINS_IMAGE_LOCALITY_H_
#define METRICS_SCHEDULER_SCORING_PLUGINS_IMAGE_LOCALITY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "model/kube_version.h"
#include "model/pod.h"
#include "scoring/image_index.h"
#include "scoring/score_plugin.h"

namespace ms {

// normalizedImageName: `image` with ":latest" appended when the last ':'
// does not come after the last '/'.
std::string NormalizedImageName(absl::string_view image);

// calculatePriority: the score of a node from the sum of its scaled image
// sizes and the pod's number of images (ImageLocalityImages).
int64_t ImageLocalityScore(int64_t sum, size_t num_containers);

// The images the threshold counts under release `kube`: containers, init
// containers and, from 1.37, image volumes.
size_t ImageLocalityImages(const Pod& pod, KubeVersion kube);

// Pre-score: into sums[i], for each node i of the `num_nodes` indexed,
// the sum of the scaled sizes of the pod's images it holds (image volumes'
// too from 1.36); nodes that hold none are set to 0. `holders` gets the
// nodes that hold one (a node once per image it holds). Returns whether
// any node holds one (else `sums` is left as it was).
bool ImageLocalitySums(const Pod& pod, KubeVersion kube,
                       const ImageIndex& index, size_t num_nodes, int64_t* sums,
                       std::vector<uint32_t>* holders);

// Score: out[i] = ImageLocalityScore(sums[i], num_containers) for each
// feasible node i of `holders` (0 for the others of the `num_nodes`).
// Returns whether any is above 0.
bool ImageLocalityScores(const std::vector<uint32_t>& holders,
                         const int64_t* sums, const int64_t* feasible,
                         size_t num_nodes, size_t num_containers, double* out);

// The imageLocality term; counts only when a feasible node scores above 0.
std::unique_ptr<ScorePlugin> MakeImageLocalityPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_IMAGE_LOCALITY_H_
