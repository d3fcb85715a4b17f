// PodTopologySpread PreFilter and Filter: the DoNotSchedule constraints.
#include <algorithm>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "scheduler/plugins/pod_topology_spread/common.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";

// What Filter needs of one constraint, computed once per cycle.
struct FilterConstraint {
  TopologySpreadConstraint constraint;
  // Matching pods per domain (topology value) over the eligible nodes. Keys
  // view the snapshot's node labels, which outlive the cycle.
  std::unordered_map<std::string_view, int64_t> counts;
  int64_t self_match = 0;  // 1 when the incoming pod matches the selector
  int64_t global_min = 0;  // 0 when fewer domains than minDomains
};

struct FilterState {
  std::vector<FilterConstraint> constraints;
};

}  // namespace

PreFilterResult PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                             const Snapshot& snapshot) const {
  std::vector<TopologySpreadConstraint> constraints =
      Constraints(pod, snapshot, api::UnsatisfiableConstraintAction::DoNotSchedule);
  if (constraints.empty()) return {};  // no state: Filter lets every node pass

  auto s = std::make_shared<FilterState>();
  s->constraints.resize(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    FilterConstraint& fc = s->constraints[i];
    fc.constraint = std::move(constraints[i]);
    fc.self_match = fc.constraint.selector.Matches(pod.labels) ? 1 : 0;
    if (fc.constraint.topology_key == kLabelHostname) fc.counts.reserve(snapshot.NumNodes());
  }
  std::vector<std::string_view> keys;
  keys.reserve(s->constraints.size());
  for (const FilterConstraint& fc : s->constraints) keys.push_back(fc.constraint.topology_key);

  spread::NodeInclusion inclusion(pod);
  for (const NodeInfo& node : snapshot.nodes()) {
    if (!spread::HasAllTopologyKeys(node.labels, keys)) continue;
    inclusion.Reset(node);
    for (FilterConstraint& fc : s->constraints) {
      if (!inclusion.Includes(fc.constraint)) continue;
      const std::string* value = FindLabel(node.labels, fc.constraint.topology_key);
      fc.counts[*value] += spread::CountMatchingPods(node, fc.constraint.selector, pod.namespace_);
    }
  }
  for (FilterConstraint& fc : s->constraints) {
    int64_t min = std::numeric_limits<int32_t>::max();
    for (const auto& [value, count] : fc.counts) min = std::min(min, count);
    if (static_cast<int64_t>(fc.counts.size()) < fc.constraint.min_domains) min = 0;
    fc.global_min = min;
  }
  state.Write<FilterState>(std::string(kPreFilterStateKey), std::move(s));
  return {};
}

PluginStatus PodTopologySpread::Filter(const CycleState& state, const PodInfo&,
                                       const NodeInfo& node) const {
  const FilterState* s = state.Read<FilterState>(kPreFilterStateKey);
  if (s == nullptr) return PluginStatus::Success();
  for (const FilterConstraint& fc : s->constraints) {
    const std::string* value = FindLabel(node.labels, fc.constraint.topology_key);
    if (value == nullptr) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonNodeLabelNotMatch));
    }
    auto it = fc.counts.find(*value);
    const int64_t match = it == fc.counts.end() ? 0 : it->second;
    if (match + fc.self_match - fc.global_min > fc.constraint.max_skew) {
      return PluginStatus::Unschedulable(std::string(kErrReasonConstraintsNotMatch));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
