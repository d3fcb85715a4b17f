#include "scheduler/plugins/node_pressure/node_pressure.h"

#include <string>

namespace podflow::scheduler::plugins {

PluginStatus NodePressure::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (node.memory_pressure && pod.best_effort) {
    return PluginStatus::UnschedulableAndUnresolvable(std::string(kMemoryPressure));
  }
  if (node.pid_pressure) return PluginStatus::UnschedulableAndUnresolvable(std::string(kPidPressure));
  if (node.disk_pressure) return PluginStatus::UnschedulableAndUnresolvable(std::string(kDiskPressure));
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
