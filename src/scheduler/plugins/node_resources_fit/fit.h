// NodeResourcesFit (kubernetes plugins/noderesources/fit.go and its scoring
// strategies least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go).
//
// Filter: the node must have room for what the pod requests: a pod slot
// ("Too many pods"), and for each resource the pod requests (> 0) of cpu,
// memory, ephemeral-storage and scalar resources, request <= allocatable -
// requested ("Insufficient cpu", "Insufficient nvidia.com/gpu", ...).
// Extended resources named in ignoredResources, or whose domain prefix is in
// ignoredResourceGroups, are not checked. All shortfalls are reported in
// that order (scalar resources by name); the verdict is Unschedulable
// (preemption may free the room).
//
// Score, by scoringStrategy.type over scoringStrategy.resources (default
// cpu:1, memory:1); requested counts the pod and, for cpu and memory only,
// 100m / 200Mi for containers naming no request; a resource with
// allocatable 0 is left out; integer arithmetic throughout:
//   LeastAllocated: per resource (allocatable - requested) * 100 /
//     allocatable (0 when requested > allocatable); weighted mean.
//   MostAllocated: per resource min(requested, allocatable) * 100 /
//     allocatable; weighted mean.
//   RequestedToCapacityRatio: utilization = requested * 100 / allocatable
//     (100 when requested > allocatable) through the broken-linear shape
//     (shape scores 0..10 scaled by 10); weighted mean over the resources
//     whose score is > 0, rounded half away from zero.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/plugins/node_resources_fit/resource_allocation.h"

namespace podflow::scheduler::plugins {

enum class ScoringStrategyType { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

// One point of RequestedToCapacityRatio's shape, score already scaled to
// 0..kMaxNodeScore.
struct UtilizationShapePoint {
  int64_t utilization = 0;  // 0..100, strictly increasing along the shape
  int64_t score = 0;
};

// leastRequestedScore: ((capacity - requested) * 100) / capacity; 0 when
// capacity is 0 or requested > capacity.
int64_t LeastRequestedScore(int64_t requested, int64_t capacity);
// mostRequestedScore: (min(requested, capacity) * 100) / capacity; 0 when
// capacity is 0.
int64_t MostRequestedScore(int64_t requested, int64_t capacity);
// The broken-linear function through `shape` at utilization p: the first
// point's score up to it, the last point's beyond it, linear (integer
// division) in between. REQUIRES: shape is not empty.
int64_t BrokenLinear(std::span<const UtilizationShapePoint> shape, int64_t p);

// The strategies' node scores over parallel spans; resources with
// allocatable 0 are skipped; 0 when no weight remains.
int64_t LeastAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights);
int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const int64_t> weights);
int64_t RequestedToCapacityRatioScore(std::span<const UtilizationShapePoint> shape,
                                      std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const int64_t> weights);

class NodeResourcesFit {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kTooManyPods = "Too many pods";

  // LeastAllocated over cpu:1, memory:1, nothing ignored.
  NodeResourcesFit() : resources_(DefaultScoringResources()) {}
  // LeastAllocated over `scoring_resources`.
  explicit NodeResourcesFit(std::vector<ResourceSpec> scoring_resources)
      : resources_(std::move(scoring_resources)) {}

  // NodeResourcesFitArgs (null: the defaults):
  //   scoringStrategy: {type: LeastAllocated | MostAllocated |
  //                          RequestedToCapacityRatio (default LeastAllocated),
  //                     resources: [{name, weight}]   # default cpu:1, memory:1;
  //                                                   # weight 1..100, 0/absent = 1
  //                     requestedToCapacityRatio: {shape: [{utilization: 0..100,
  //                                                         score: 0..10}]}}
  //   ignoredResources: [name]        # extended resources the filter skips
  //   ignoredResourceGroups: [prefix] # "example.com" skips example.com/*
  // Invalid, naming the field (e.g. "scoringStrategy.resources[1].weight:
  // ..."), for an unknown key, a wrong type or an out-of-range value; the
  // shape is required for RequestedToCapacityRatio and must be sorted by
  // strictly increasing utilization.
  static Result<NodeResourcesFit> FromArgs(const YAML::Node& args);

  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

  ScoringStrategyType strategy() const { return type_; }
  const std::vector<ResourceSpec>& scoring_resources() const { return resources_; }
  const std::vector<UtilizationShapePoint>& shape() const { return shape_; }

 private:
  // Whether the filter skips extended resource `name`.
  bool Ignored(std::string_view name) const;

  ScoringStrategyType type_ = ScoringStrategyType::kLeastAllocated;
  std::vector<ResourceSpec> resources_;
  std::vector<UtilizationShapePoint> shape_;       // RequestedToCapacityRatio only
  std::vector<std::string> ignored_resources_;     // sorted
  std::vector<std::string> ignored_groups_;        // sorted
};
static_assert(FilterPlugin<NodeResourcesFit>);
static_assert(ScorePlugin<NodeResourcesFit>);

}  // namespace podflow::scheduler::plugins
