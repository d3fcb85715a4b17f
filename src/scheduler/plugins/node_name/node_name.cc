#include "scheduler/plugins/node_name/node_name.h"

namespace podflow::scheduler::plugins {

PluginStatus NodeName::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.node_name.empty() || pod.node_name == node.name) return PluginStatus::Success();
  return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReason));
}

}  // namespace podflow::scheduler::plugins
