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
#include <vector>

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

// Pre-score: the nodes among the first `num_nodes` indexed that hold one
// of the pod's images (image volumes' too from 1.36), ascending, into
// `nodes`, and into `sums` each one's sum of the scaled sizes of those it
// holds (an image counted once per container that runs it). Returns
// whether any node holds one.
bool ImageLocalityHolders(const Pod& pod, KubeVersion kube,
                          const ImageIndex& index, size_t num_nodes,
                          std::vector<uint32_t>* nodes,
                          std::vector<int64_t>* sums);

// Score: scores[e] = ImageLocalityScore(sums[e], num_containers) for each
// holder nodes[e] (a node's score does not depend on the others'). Returns
// whether any feasible holder scores above 0.
bool ImageLocalityScores(const std::vector<uint32_t>& nodes,
                         const std::vector<int64_t>& sums,
                         const int64_t* feasible, size_t num_containers,
                         std::vector<double>* scores);

// The imageLocality term; counts only when a feasible node scores above 0.
std::unique_ptr<ScorePlugin> MakeImageLocalityPlugin();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCORING_PLUGINS_IMAGE_LOCALITY_H_
