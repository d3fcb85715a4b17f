// NodeResourcesBalancedAllocation (score; kubernetes
// plugins/noderesources/balanced_allocation.go): favours nodes whose
// resources (args `resources`, default cpu and memory) would be used in
// equal fractions with the pod on them. Per resource with allocatable > 0,
// fraction = requested / allocatable (capped at 1; requests as they are, no
// 100m / 200Mi defaults); std = |f1 - f2| / 2 for two fractions, the
// population standard deviation for more, 0 for fewer; score =
// int((1 - std) * 100), truncated. A pod requesting none of the resources
// (a best-effort pod) is not scored by this plugin: 0 on every node, as
// kube-scheduler's PreScore skips it (since 1.33, so that best-effort pods
// are not all drawn to the same idle node).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
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
  static constexpr bool kNodeLocal = true;
  static constexpr size_t kMaxResources = 16;  // Score keeps fixed arrays

  NodeResourcesBalancedAllocation() : resources_(DefaultScoringResources()) {}
  explicit NodeResourcesBalancedAllocation(std::vector<ResourceSpec> resources)
      : resources_(std::move(resources)) {}

  // NodeResourcesBalancedAllocationArgs (null: the defaults):
  //   resources: [{name, weight}]   # default cpu, memory; weight must be 1
  //                                 # (0 or absent is 1); no name twice
  // Invalid naming the field otherwise ("resources[1].weight: must be 1").
  static Result<NodeResourcesBalancedAllocation> FromArgs(const YAML::Node& args);

  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

 private:
  std::vector<ResourceSpec> resources_;
};
static_assert(ScorePlugin<NodeResourcesBalancedAllocation>);

}  // namespace podflow::scheduler::plugins
