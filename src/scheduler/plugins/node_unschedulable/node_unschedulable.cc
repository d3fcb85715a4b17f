#include "scheduler/plugins/node_unschedulable/node_unschedulable.h"

namespace podflow::scheduler::plugins {

PluginStatus NodeUnschedulable::Filter(const CycleState&, const PodInfo& pod,
                                       const NodeInfo& node) const {
  if (!node.unschedulable) return PluginStatus::Success();
  static const Taint kUnschedulableTaint{std::string(kTaintKey), "", api::TaintEffect::NoSchedule};
  if (TolerationsTolerateTaint(pod.tolerations, kUnschedulableTaint)) return PluginStatus::Success();
  return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReason));
}

}  // namespace podflow::scheduler::plugins
