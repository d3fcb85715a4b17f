// PodTopologySpread PreFilter and Filter: the DoNotSchedule constraints.
#include <algorithm>
#include <functional>
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
  // The least count and its domain, and the next least (kube-scheduler's
  // critical paths), so that a node whose pods differ from the snapshot's
  // can move the minimum.
  std::string_view min_domain;
  int64_t min_count = 0;
  int64_t second_min_count = 0;
};

struct FilterState {
  std::vector<FilterConstraint> constraints;
  std::vector<std::string_view> keys;
  // The snapshot the counts come from, for Filter calls on a NodeInfo that
  // is not one of its nodes: the runner's node with nominated pods added,
  // or preemption's node with victims removed (kube-scheduler's
  // PreFilterExtensions AddPod / RemovePod).
  const Snapshot* snapshot = nullptr;
};

}  // namespace

PreFilterResult PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                             const Snapshot& snapshot) const {
  std::vector<TopologySpreadConstraint> constraints =
      Constraints(pod, snapshot, api::UnsatisfiableConstraintAction::DoNotSchedule);
  // No DoNotSchedule constraint: Filter would let every node pass.
  if (constraints.empty()) return {PluginStatus::Skip(), std::nullopt};

  auto s = std::make_shared<FilterState>();
  s->snapshot = &snapshot;
  s->constraints.resize(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    FilterConstraint& fc = s->constraints[i];
    fc.constraint = std::move(constraints[i]);
    fc.self_match = fc.constraint.selector.Matches(pod.labels) ? 1 : 0;
    if (fc.constraint.topology_key == kLabelHostname) fc.counts.reserve(snapshot.NumNodes());
  }
  for (const FilterConstraint& fc : s->constraints) s->keys.push_back(fc.constraint.topology_key);

  spread::NodeInclusion inclusion(pod);
  std::vector<const std::string*> values(s->constraints.size());
  for (const NodeInfo& node : snapshot.nodes()) {
    // Only nodes with every topology key count.
    bool all = true;
    for (size_t i = 0; i < values.size() && all; ++i) {
      values[i] = FindLabel(node.labels, s->keys[i]);
      all = values[i] != nullptr;
    }
    if (!all) continue;
    inclusion.Reset(node);
    for (size_t i = 0; i < values.size(); ++i) {
      FilterConstraint& fc = s->constraints[i];
      if (!inclusion.Includes(fc.constraint)) continue;
      fc.counts[*values[i]] += spread::CountMatchingPods(node, fc.constraint.selector, pod.namespace_);
    }
  }
  for (FilterConstraint& fc : s->constraints) {
    fc.min_count = fc.second_min_count = std::numeric_limits<int32_t>::max();
    for (const auto& [value, count] : fc.counts) {
      if (count < fc.min_count) {
        fc.second_min_count = fc.min_count;
        fc.min_count = count;
        fc.min_domain = value;
      } else if (count < fc.second_min_count) {
        fc.second_min_count = count;
      }
    }
    fc.global_min = static_cast<int64_t>(fc.counts.size()) < fc.constraint.min_domains ? 0 : fc.min_count;
  }
  state.Write<FilterState>(std::string(kPreFilterStateKey), std::move(s));
  return {};
}

PluginStatus PodTopologySpread::Filter(const CycleState& state, const PodInfo& pod,
                                       const NodeInfo& node) const {
  const FilterState* s = state.Read<FilterState>(kPreFilterStateKey);
  if (s == nullptr) return PluginStatus::Success();
  // A node other than the snapshot's own object of that name holds other
  // pods: its counts move by the difference.
  const std::vector<NodeInfo>& nodes = s->snapshot->nodes();
  const std::less<const NodeInfo*> before;
  const bool own = !nodes.empty() && !before(&node, nodes.data()) && before(&node, nodes.data() + nodes.size());
  const NodeInfo* counted = own ? &node : s->snapshot->FindNode(node.name);
  const bool adjusted = !own && spread::HasAllTopologyKeys(node.labels, s->keys);
  spread::NodeInclusion inclusion(pod);
  if (adjusted) inclusion.Reset(node);
  for (const FilterConstraint& fc : s->constraints) {
    const std::string* value = FindLabel(node.labels, fc.constraint.topology_key);
    if (value == nullptr) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonNodeLabelNotMatch));
    }
    auto it = fc.counts.find(*value);
    int64_t match = it == fc.counts.end() ? 0 : it->second;
    int64_t global_min = fc.global_min;
    if (adjusted && inclusion.Includes(fc.constraint)) {
      const int64_t delta =
          spread::CountMatchingPods(node, fc.constraint.selector, pod.namespace_) -
          (counted != nullptr ? spread::CountMatchingPods(*counted, fc.constraint.selector, pod.namespace_)
                              : 0);
      if (delta != 0) {
        match += delta;
        if (static_cast<int64_t>(fc.counts.size()) >= fc.constraint.min_domains) {
          global_min = *value == fc.min_domain ? std::min(match, fc.second_min_count)
                                               : std::min(fc.min_count, match);
        }
      }
    }
    if (match + fc.self_match - global_min > fc.constraint.max_skew) {
      return PluginStatus::Unschedulable(std::string(kErrReasonConstraintsNotMatch));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
