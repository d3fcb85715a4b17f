#include "scheduler/plugins/node_resources_balanced_allocation/balanced_allocation.h"

#include <algorithm>
#include <cmath>

namespace podflow::scheduler::plugins {

int64_t BalancedResourceScore(std::span<const int64_t> requested,
                              std::span<const int64_t> allocatable) {
  constexpr size_t kMax = 8;
  double fractions[kMax];
  size_t count = 0;
  double total = 0;
  for (size_t i = 0; i < requested.size() && count < kMax; ++i) {
    if (allocatable[i] == 0) continue;
    double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    if (f > 1) f = 1;
    total += f;
    fractions[count++] = f;
  }
  double std_dev = 0;
  if (count == 2) {
    // The two-resource case, written as Kubernetes writes it (same rounding).
    std_dev = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  // Go's int64() truncates toward zero, as the cast does.
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

int64_t NodeResourcesBalancedAllocation::Score(const CycleState&, const PodInfo& pod,
                                               const NodeInfo& node) const {
  constexpr size_t kMax = 8;
  int64_t requested[kMax] = {};
  int64_t allocatable[kMax] = {};
  const size_t n = std::min(resources_.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    auto ar = ResourceAllocatableAndRequested(node, pod, resources_[i].name, /*use_requested=*/true);
    allocatable[i] = ar.allocatable;
    requested[i] = ar.allocatable == 0 ? 0 : ar.requested;
  }
  return BalancedResourceScore(std::span(requested, n), std::span(allocatable, n));
}

}  // namespace podflow::scheduler::plugins
