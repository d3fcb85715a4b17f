#include "scheduler/plugins/image_locality/image_locality.h"

#include <string>

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "ImageLocality/PreScore";

struct ImageSpread {
  int64_t total_nodes = 0;
  std::vector<int64_t> num_nodes;  // parallel to PodInfo.images
};

}  // namespace

int64_t ImageLocalityPriority(int64_t sum_scores, int64_t num_containers) {
  const int64_t max_threshold = kImageMaxContainerThreshold * num_containers;
  if (sum_scores < kImageMinThreshold) {
    sum_scores = kImageMinThreshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  return kMaxNodeScore * (sum_scores - kImageMinThreshold) / (max_threshold - kImageMinThreshold);
}

int64_t ScaledImageScore(int64_t size, int64_t num_nodes, int64_t total_nodes) {
  if (total_nodes <= 0) return 0;
  const double spread = static_cast<double>(num_nodes) / static_cast<double>(total_nodes);
  return static_cast<int64_t>(static_cast<double>(size) * spread);
}

PluginStatus ImageLocality::PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                     std::span<const NodeInfo* const>) const {
  auto spread = std::make_shared<ImageSpread>();
  spread->total_nodes = static_cast<int64_t>(snapshot.NumNodes());
  spread->num_nodes.reserve(pod.images.size());
  for (const std::string& image : pod.images) spread->num_nodes.push_back(snapshot.ImageNumNodes(image));
  state.Write<ImageSpread>(std::string(kStateKey), std::move(spread));
  return PluginStatus::Success();
}

int64_t ImageLocality::Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.num_containers == 0) return 0;
  const ImageSpread* spread = state.Read<ImageSpread>(kStateKey);
  if (spread == nullptr) return 0;
  int64_t sum = 0;
  for (size_t i = 0; i < pod.images.size() && i < spread->num_nodes.size(); ++i) {
    const ImageState* image = node.FindImage(pod.images[i]);
    if (image == nullptr) continue;
    sum += ScaledImageScore(image->size_bytes, spread->num_nodes[i], spread->total_nodes);
  }
  return ImageLocalityPriority(sum, pod.num_containers);
}

}  // namespace podflow::scheduler::plugins
