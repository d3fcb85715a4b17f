// What the resource scorers (NodeResourcesFit's LeastAllocated,
// NodeResourcesBalancedAllocation) read of a node and a pod, as
// kube-scheduler's resourceAllocationScorer computes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"

namespace podflow::scheduler::plugins {

struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

// cpu:1, memory:1: the default of both scorers.
std::vector<ResourceSpec> DefaultScoringResources();

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
