// NodeName: a pod that names a node (spec.nodeName) fits only that node
// (kubernetes plugins/nodename).
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class NodeName {
 public:
  static constexpr std::string_view kName = "NodeName";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

  // UnschedulableAndUnresolvable when the pod names another node.
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<NodeName>);

}  // namespace podflow::scheduler::plugins
