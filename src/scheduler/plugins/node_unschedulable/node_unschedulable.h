// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods
// that tolerate node.kubernetes.io/unschedulable:NoSchedule
// (kubernetes plugins/nodeunschedulable).
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class NodeUnschedulable {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReason = "node(s) were unschedulable";
  static constexpr std::string_view kTaintKey = "node.kubernetes.io/unschedulable";

  // UnschedulableAndUnresolvable when the node is unschedulable and the pod
  // does not tolerate {kTaintKey, NoSchedule} (empty value).
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<NodeUnschedulable>);

}  // namespace podflow::scheduler::plugins
