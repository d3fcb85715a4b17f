#include "scheduler/plugins/node_resources_fit/resource_allocation.h"

#include <algorithm>

#include "scheduler/plugins/args_yaml.h"

namespace podflow::scheduler::plugins {

std::vector<ResourceSpec> DefaultScoringResources() {
  return {{std::string(kResourceCpu), 1}, {std::string(kResourceMemory), 1}};
}

Result<std::vector<ResourceSpec>> ResourceSpecsFromArgs(const YAML::Node& list,
                                                        std::string_view path) {
  if (args::Absent(list) || (list.IsSequence() && list.size() == 0)) return DefaultScoringResources();
  if (!list.IsSequence()) return Status::Invalid(std::string(path) + ": must be a list");
  std::vector<ResourceSpec> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = args::Index(path, i);
    PODFLOW_RETURN_IF_ERROR(args::CheckMap(list[i], at, {"name", "weight"}));
    if (args::Absent(list[i]) || args::Absent(list[i]["name"])) {
      return Status::Invalid(args::Child(at, "name") + ": required");
    }
    auto name = args::String(list[i]["name"], args::Child(at, "name"));
    if (!name.ok()) return name.status();
    if (name->empty()) return Status::Invalid(args::Child(at, "name") + ": required");
    ResourceSpec spec{std::move(name).value(), 1};
    if (!args::Absent(list[i]["weight"])) {
      auto weight = args::Int(list[i]["weight"], args::Child(at, "weight"));
      if (!weight.ok()) return weight.status();
      if (*weight != 0) spec.weight = *weight;
    }
    out.push_back(std::move(spec));
  }
  return out;
}

int64_t PodRequest(const PodInfo& pod, std::string_view resource, bool use_requested) {
  if (resource == kResourceCpu) return use_requested ? pod.requests.milli_cpu : pod.non_zero_milli_cpu;
  if (resource == kResourceMemory) return use_requested ? pod.requests.memory : pod.non_zero_memory;
  if (resource == kResourceEphemeralStorage) return pod.requests.ephemeral_storage;
  return pod.requests.Scalar(resource);
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
