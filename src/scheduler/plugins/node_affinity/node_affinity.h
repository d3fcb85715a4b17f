// NodeAffinity (filter): the node's labels must match the pod's
// spec.nodeSelector (every key equal) and, when the pod has one, its
// requiredDuringSchedulingIgnoredDuringExecution node selector (terms ORed,
// requirements in a term ANDed; kubernetes plugins/nodeaffinity and
// component-helpers/scheduling/corev1/nodeaffinity). Preferred terms score,
// which comes later.
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

// One requirement against a node. Label operators: In (label present, value
// listed), NotIn (absent, or value not listed), Exists, DoesNotExist, Gt / Lt
// (label and the single value both integers, label > / < value). Field
// requirements (key "metadata.name"): In / NotIn with exactly one value.
// A malformed requirement (wrong value count, non-integer Gt/Lt value,
// unknown operator) matches nothing, as a term that fails to parse does.
bool MatchesLabelRequirement(const NodeSelectorRequirement& r, const NodeInfo& node);
bool MatchesFieldRequirement(const NodeSelectorRequirement& r, const NodeInfo& node);

// A term with neither expressions nor fields matches no node.
bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const NodeInfo& node);
// Zero terms match no node.
bool MatchesNodeSelector(const NodeSelector& selector, const NodeInfo& node);

class NodeAffinity {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  static constexpr std::string_view kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";

  // UnschedulableAndUnresolvable when nodeSelector or required affinity fails.
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<NodeAffinity>);

}  // namespace podflow::scheduler::plugins
