#include "scheduler/plugins/node_resources_fit/resource_allocation.h"

#include <algorithm>

namespace podflow::scheduler::plugins {

std::vector<ResourceSpec> DefaultScoringResources() {
  return {{std::string(kResourceCpu), 1}, {std::string(kResourceMemory), 1}};
}

AllocatableAndRequested ResourceAllocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                                        std::string_view resource,
                                                        bool use_requested) {
  if (resource == kResourceCpu) {
    int64_t pod_request = use_requested ? pod.requests.milli_cpu : pod.non_zero_milli_cpu;
    int64_t on_node = use_requested ? node.requested().milli_cpu : node.non_zero_milli_cpu();
    return {node.allocatable.milli_cpu, on_node + pod_request};
  }
  if (resource == kResourceMemory) {
    int64_t pod_request = use_requested ? pod.requests.memory : pod.non_zero_memory;
    int64_t on_node = use_requested ? node.requested().memory : node.non_zero_memory();
    return {node.allocatable.memory, on_node + pod_request};
  }
  if (resource == kResourceEphemeralStorage) {
    return {node.allocatable.ephemeral_storage,
            node.requested().ephemeral_storage + pod.requests.ephemeral_storage};
  }
  const int64_t pod_request = pod.requests.Scalar(resource);
  if (pod_request == 0 && IsScalarResourceName(resource)) return {};
  const auto& offered = node.allocatable.scalar;
  bool exists = std::any_of(offered.begin(), offered.end(),
                            [&](const ScalarResource& r) { return r.name == resource; });
  if (!exists) return {};
  return {node.allocatable.Scalar(resource), node.requested().Scalar(resource) + pod_request};
}

}  // namespace podflow::scheduler::plugins
