#include "scheduler/plugins/node_resources_balanced_allocation/balanced_allocation.h"

#include <algorithm>
#include <cmath>

#include "scheduler/plugins/args_yaml.h"

namespace podflow::scheduler::plugins {

int64_t BalancedResourceScore(std::span<const int64_t> requested,
                              std::span<const int64_t> allocatable) {
  constexpr size_t kMax = NodeResourcesBalancedAllocation::kMaxResources;
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

Result<NodeResourcesBalancedAllocation> NodeResourcesBalancedAllocation::FromArgs(
    const YAML::Node& node) {
  if (args::Absent(node)) return NodeResourcesBalancedAllocation();
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(node, "", {"resources"}));
  auto resources = ResourceSpecsFromArgs(node["resources"], "resources");
  if (!resources.ok()) return resources.status();
  if (resources->size() > kMaxResources) {
    return Status::Invalid("resources: at most " + std::to_string(kMaxResources) + " resources");
  }
  for (size_t i = 0; i < resources->size(); ++i) {
    const ResourceSpec& r = (*resources)[i];
    for (size_t j = 0; j < i; ++j) {
      if ((*resources)[j].name == r.name) {
        return Status::Invalid(args::Child(args::Index("resources", i), "name") + ": duplicate value \"" +
                               r.name + "\"");
      }
    }
    if (r.weight != 1) {
      return Status::Invalid(args::Child(args::Index("resources", i), "weight") + ": " +
                             std::to_string(r.weight) + ": must be 1");
    }
  }
  return NodeResourcesBalancedAllocation(std::move(resources).value());
}

int64_t NodeResourcesBalancedAllocation::Score(const CycleState&, const PodInfo& pod,
                                               const NodeInfo& node) const {
  constexpr size_t kMax = kMaxResources;
  int64_t requested[kMax] = {};
  int64_t allocatable[kMax] = {};
  const size_t n = std::min(resources_.size(), kMax);
  // A pod that requests none of the resources is skipped (scores 0).
  bool best_effort = true;
  for (size_t i = 0; i < n; ++i) {
    best_effort = best_effort && PodRequest(pod, resources_[i].name, /*use_requested=*/true) == 0;
  }
  if (best_effort) return 0;
  for (size_t i = 0; i < n; ++i) {
    auto ar = ResourceAllocatableAndRequested(node, pod, resources_[i].name, /*use_requested=*/true);
    allocatable[i] = ar.allocatable;
    requested[i] = ar.allocatable == 0 ? 0 : ar.requested;
  }
  return BalancedResourceScore(std::span(requested, n), std::span(allocatable, n));
}

}  // namespace podflow::scheduler::plugins
