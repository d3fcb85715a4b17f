// NodeResourcesFit (kubernetes plugins/noderesources/fit.go,
// least_allocated.go).
//
// Filter: the node must have room for what the pod requests: a pod slot
// ("Too many pods"), and for each resource the pod requests (> 0) of cpu,
// memory, ephemeral-storage and scalar resources, request <= allocatable -
// requested ("Insufficient cpu", "Insufficient nvidia.com/gpu", ...). All
// shortfalls are reported; the verdict is Unschedulable (Kubernetes 1.32:
// preemption may free the room).
//
// Score (LeastAllocated): per resource (allocatable - requested) * 100 /
// allocatable in integer arithmetic (0 when requested > allocatable), where
// requested includes the pod and counts 100m / 200Mi for containers naming
// no cpu / memory request; then the weighted mean (integer division) over
// the resources whose allocatable is not 0.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "scheduler/framework/plugin.h"
#include "scheduler/plugins/node_resources_fit/resource_allocation.h"

namespace podflow::scheduler::plugins {

// leastRequestedScore: ((capacity - requested) * 100) / capacity; 0 when
// capacity is 0 or requested > capacity.
int64_t LeastRequestedScore(int64_t requested, int64_t capacity);

// leastResourceScorer over parallel spans; resources with allocatable 0 are
// skipped; 0 when no weight remains.
int64_t LeastAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights);

class NodeResourcesFit {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  static constexpr std::string_view kTooManyPods = "Too many pods";

  NodeResourcesFit() : resources_(DefaultScoringResources()) {}
  explicit NodeResourcesFit(std::vector<ResourceSpec> scoring_resources)
      : resources_(std::move(scoring_resources)) {}

  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

 private:
  std::vector<ResourceSpec> resources_;
};
static_assert(FilterPlugin<NodeResourcesFit>);
static_assert(ScorePlugin<NodeResourcesFit>);

}  // namespace podflow::scheduler::plugins
