// ImageLocality (score; kubernetes plugins/imagelocality): favours nodes
// that already hold the pod's container images, weighted by how widely each
// image has spread, so that a popular image does not pull every pod to the
// few nodes that happen to have it.
//
//   sum   = over the pod's images (init and regular containers) that the node
//           holds: int(size * (nodes holding the image / all nodes))
//   score = 100 * (clamp(sum, 23Mi, 1000Mi * containers) - 23Mi)
//               / (1000Mi * containers - 23Mi)          (integer division)
//
// Image names are compared after NormalizedImageName on both sides (pod
// spec and node status), so "nginx" matches "docker.io/library/nginx:latest";
// kube-scheduler only appends ":latest" to the pod's image, and misses that
// match. The size is the node's own report of the image.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

inline constexpr int64_t kImageMiB = 1024 * 1024;
inline constexpr int64_t kImageMinThreshold = 23 * kImageMiB;
inline constexpr int64_t kImageMaxContainerThreshold = 1000 * kImageMiB;

// calculatePriority: the clamp and scale above. num_containers >= 1.
int64_t ImageLocalityPriority(int64_t sum_scores, int64_t num_containers);
// scaledImageScore: int(size * num_nodes / total_nodes) in float64, as
// Kubernetes computes it.
int64_t ScaledImageScore(int64_t size, int64_t num_nodes, int64_t total_nodes);

class ImageLocality {
 public:
  static constexpr std::string_view kName = "ImageLocality";
  static constexpr bool kNodeLocal = true;

  // Records, for this cycle, the number of nodes and how many hold each of
  // the pod's images (from the snapshot, feasible or not).
  PluginStatus PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                        std::span<const NodeInfo* const> feasible) const;
  // REQUIRES: PreScore ran in this cycle (0 otherwise).
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(ScorePlugin<ImageLocality>);
static_assert(PreScorePlugin<ImageLocality>);

}  // namespace podflow::scheduler::plugins
