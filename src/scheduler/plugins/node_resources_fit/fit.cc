#include "scheduler/plugins/node_resources_fit/fit.h"

namespace podflow::scheduler::plugins {

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return ((capacity - requested) * kMaxNodeScore) / capacity;
}

int64_t LeastAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += LeastRequestedScore(requested[i], allocatable[i]) * weights[i];
    weight_sum += weights[i];
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

PluginStatus NodeResourcesFit::Filter(const CycleState&, const PodInfo& pod,
                                      const NodeInfo& node) const {
  std::vector<std::string> reasons;
  if (static_cast<int64_t>(node.pods().size()) + 1 > node.allocatable.allowed_pods) {
    reasons.emplace_back(kTooManyPods);
  }
  const Resources& want = pod.requests;
  const Resources& used = node.requested();
  const Resources& have = node.allocatable;
  if (want.milli_cpu > 0 && want.milli_cpu > have.milli_cpu - used.milli_cpu) {
    reasons.emplace_back("Insufficient cpu");
  }
  if (want.memory > 0 && want.memory > have.memory - used.memory) {
    reasons.emplace_back("Insufficient memory");
  }
  if (want.ephemeral_storage > 0 &&
      want.ephemeral_storage > have.ephemeral_storage - used.ephemeral_storage) {
    reasons.emplace_back("Insufficient ephemeral-storage");
  }
  for (const ScalarResource& r : want.scalar) {
    if (r.value == 0) continue;
    if (r.value > have.Scalar(r.name) - used.Scalar(r.name)) {
      reasons.push_back("Insufficient " + r.name);
    }
  }
  if (reasons.empty()) return PluginStatus::Success();
  return PluginStatus(PluginCode::kUnschedulable, std::move(reasons));
}

int64_t NodeResourcesFit::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  // At most a handful of resources: fixed arrays avoid allocating per node.
  constexpr size_t kMax = 8;
  int64_t requested[kMax] = {};
  int64_t allocatable[kMax] = {};
  int64_t weights[kMax] = {};
  const size_t n = std::min(resources_.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    auto ar = ResourceAllocatableAndRequested(node, pod, resources_[i].name, /*use_requested=*/false);
    allocatable[i] = ar.allocatable;
    requested[i] = ar.allocatable == 0 ? 0 : ar.requested;
    weights[i] = resources_[i].weight;
  }
  return LeastAllocatedScore(std::span(requested, n), std::span(allocatable, n),
                             std::span(weights, n));
}

}  // namespace podflow::scheduler::plugins
