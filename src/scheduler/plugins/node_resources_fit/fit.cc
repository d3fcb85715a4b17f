#include "scheduler/plugins/node_resources_fit/fit.h"

#include <algorithm>

namespace podflow::scheduler::plugins {
namespace {

// Kubernetes' IsExtendedResourceName: a domain-qualified name outside
// *kubernetes.io/ and not a quota "requests." name. Only these can be ignored.
bool IsExtendedResourceName(std::string_view name) {
  return name.find('/') != std::string_view::npos &&
         name.find("kubernetes.io/") == std::string_view::npos && !name.starts_with("requests.");
}

bool SortedContains(const std::vector<std::string>& v, std::string_view s) {
  return std::binary_search(v.begin(), v.end(), s, std::less<>());
}

}  // namespace

bool NodeResourcesFit::Ignored(std::string_view name) const {
  if (!IsExtendedResourceName(name)) return false;
  if (SortedContains(ignored_resources_, name)) return true;
  if (ignored_groups_.empty()) return false;
  return SortedContains(ignored_groups_, name.substr(0, name.find('/')));
}

PluginStatus NodeResourcesFit::Filter(const CycleState&, const PodInfo& pod,
                                      const NodeInfo& node) const {
  std::vector<std::string> reasons;
  if (static_cast<int64_t>(node.pods().size()) + 1 > node.allocatable.allowed_pods) {
    reasons.emplace_back(kTooManyPods);
  }
  const Resources& want = pod.requests;
  const Resources& used = node.requested();
  const Resources& have = node.allocatable;
  if (want.milli_cpu > 0 && want.milli_cpu > have.milli_cpu - used.milli_cpu) {
    reasons.emplace_back("Insufficient cpu");
  }
  if (want.memory > 0 && want.memory > have.memory - used.memory) {
    reasons.emplace_back("Insufficient memory");
  }
  if (want.ephemeral_storage > 0 &&
      want.ephemeral_storage > have.ephemeral_storage - used.ephemeral_storage) {
    reasons.emplace_back("Insufficient ephemeral-storage");
  }
  for (const ScalarResource& r : want.scalar) {
    if (r.value == 0 || Ignored(r.name)) continue;
    if (r.value > have.Scalar(r.name) - used.Scalar(r.name)) {
      reasons.push_back("Insufficient " + r.name);
    }
  }
  if (reasons.empty()) return PluginStatus::Success();
  return PluginStatus(PluginCode::kUnschedulable, std::move(reasons));
}

int64_t NodeResourcesFit::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  // At most a handful of resources: fixed arrays avoid allocating per node.
  constexpr size_t kMax = 16;
  int64_t requested[kMax] = {};
  int64_t allocatable[kMax] = {};
  int64_t weights[kMax] = {};
  const size_t n = std::min(resources_.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    auto ar = ResourceAllocatableAndRequested(node, pod, resources_[i].name, /*use_requested=*/false);
    allocatable[i] = ar.allocatable;
    requested[i] = ar.allocatable == 0 ? 0 : ar.requested;
    weights[i] = resources_[i].weight;
  }
  const std::span<const int64_t> req(requested, n), alloc(allocatable, n), w(weights, n);
  switch (type_) {
    case ScoringStrategyType::kLeastAllocated:
      return LeastAllocatedScore(req, alloc, w);
    case ScoringStrategyType::kMostAllocated:
      return MostAllocatedScore(req, alloc, w);
    case ScoringStrategyType::kRequestedToCapacityRatio:
      return RequestedToCapacityRatioScore(shape_, req, alloc, w);
  }
  return 0;
}

}  // namespace podflow::scheduler::plugins
