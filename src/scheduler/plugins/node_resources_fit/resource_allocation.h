// What the resource scorers (NodeResourcesFit's LeastAllocated,
// NodeResourcesBalancedAllocation) read of a node and a pod, as
// kube-scheduler's resourceAllocationScorer computes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"

namespace podflow::scheduler::plugins {

struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

// cpu:1, memory:1: the default of both scorers.
std::vector<ResourceSpec> DefaultScoringResources();

// A `resources: [{name, weight}]` list of plugin args at `path`. Absent or
// empty: DefaultScoringResources(). An absent or 0 weight is 1, as
// kube-scheduler defaults it. Invalid, naming the entry, for a missing
// name, an unknown key or a non-integer weight (range checks are the
// caller's: they differ between the plugins).
Result<std::vector<ResourceSpec>> ResourceSpecsFromArgs(const YAML::Node& list, std::string_view path);

// The pod's request of `resource`: calculatePodResourceRequest. For cpu and
// memory the non-zero view (100m / 200Mi for containers naming none) unless
// use_requested; other resources as requested.
int64_t PodRequest(const PodInfo& pod, std::string_view resource, bool use_requested);

struct AllocatableAndRequested {
  int64_t allocatable = 0;  // 0: the resource is left out of the score
  int64_t requested = 0;    // what the node would hold with the pod on it
};

// calculateResourceAllocatableRequest: for cpu and memory the node's
// NonZeroRequested plus the pod's non-zero request (100m / 200Mi for
// containers naming none) when !use_requested, the plain requests when
// use_requested; ephemeral-storage and scalar resources always use plain
// requests; a scalar resource the pod does not request, or the node does
// not offer, is left out.
AllocatableAndRequested ResourceAllocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                                        std::string_view resource,
                                                        bool use_requested);

}  // namespace podflow::scheduler::plugins
