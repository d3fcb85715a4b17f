#include "scheduler/plugins/taint_toleration/taint_toleration.h"

namespace podflow::scheduler::plugins {

PluginStatus TaintToleration::Filter(const CycleState&, const PodInfo& pod,
                                     const NodeInfo& node) const {
  for (const Taint& taint : node.taints) {
    if (taint.effect != api::TaintEffect::NoSchedule && taint.effect != api::TaintEffect::NoExecute) {
      continue;
    }
    if (TolerationsTolerateTaint(pod.tolerations, taint)) continue;
    // Kubernetes prints the key and the value (not the effect).
    return PluginStatus::UnschedulableAndUnresolvable("node(s) had untolerated taint {" + taint.key +
                                                      ": " + taint.value + "}");
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
