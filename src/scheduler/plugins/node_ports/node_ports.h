// NodePorts: the pod's host ports must be free on the node: no used port of
// the same protocol and number on the same host IP, and none at all when
// either side binds 0.0.0.0 (kubernetes plugins/nodeports).
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class NodePorts {
 public:
  static constexpr std::string_view kName = "NodePorts";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReason =
      "node(s) didn't have free ports for the requested pod ports";

  // Unschedulable on a conflict (preempting the pod that holds it would help).
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<NodePorts>);

}  // namespace podflow::scheduler::plugins
