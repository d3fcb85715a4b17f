// NodeResourcesBalancedAllocation (score; kubernetes
// plugins/noderesources/balanced_allocation.go, 1.32): favours nodes whose
// cpu and memory would be used in equal fractions with the pod on them.
// fraction = requested / allocatable (capped at 1; requests as they are, no
// 100m / 200Mi defaults), std = |f1 - f2| / 2 for two resources (the
// population standard deviation in general), score = int((1 - std) * 100).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "scheduler/framework/plugin.h"
#include "scheduler/plugins/node_resources_fit/resource_allocation.h"

namespace podflow::scheduler::plugins {

// balancedResourceScorer over parallel spans; resources with allocatable 0
// are skipped; 100 when fewer than two remain.
int64_t BalancedResourceScore(std::span<const int64_t> requested,
                              std::span<const int64_t> allocatable);

class NodeResourcesBalancedAllocation {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";

  NodeResourcesBalancedAllocation() : resources_(DefaultScoringResources()) {}
  explicit NodeResourcesBalancedAllocation(std::vector<ResourceSpec> resources)
      : resources_(std::move(resources)) {}

  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

 private:
  std::vector<ResourceSpec> resources_;
};
static_assert(ScorePlugin<NodeResourcesBalancedAllocation>);

}  // namespace podflow::scheduler::plugins
