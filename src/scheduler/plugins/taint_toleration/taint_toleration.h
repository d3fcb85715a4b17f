// TaintToleration (filter): every NoSchedule and NoExecute taint of the node
// must be tolerated by the pod; PreferNoSchedule taints only matter to the
// score, which comes later (kubernetes plugins/tainttoleration).
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class TaintToleration {
 public:
  static constexpr std::string_view kName = "TaintToleration";

  // UnschedulableAndUnresolvable naming the node's first untolerated
  // NoSchedule/NoExecute taint: "node(s) had untolerated taint {key: value}".
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<TaintToleration>);

}  // namespace podflow::scheduler::plugins
