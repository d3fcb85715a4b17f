#include "scheduler/plugins/node_ports/node_ports.h"

namespace podflow::scheduler::plugins {

PluginStatus NodePorts::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  for (const HostPort& want : pod.host_ports) {
    if (node.HostPortConflicts(want)) return PluginStatus::Unschedulable(std::string(kErrReason));
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
