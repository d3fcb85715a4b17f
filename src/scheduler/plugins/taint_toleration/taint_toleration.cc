#include "scheduler/plugins/taint_toleration/taint_toleration.h"

#include "scheduler/plugins/helper/normalize_score.h"

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

int64_t TaintToleration::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  int64_t intolerable = 0;
  for (const Taint& taint : node.taints) {
    if (taint.effect != api::TaintEffect::PreferNoSchedule) continue;
    // All tolerations may be passed: one naming another effect never
    // tolerates a PreferNoSchedule taint, so this equals Kubernetes' check
    // against the PreferNoSchedule-or-empty tolerations.
    if (!TolerationsTolerateTaint(pod.tolerations, taint)) ++intolerable;
  }
  return intolerable;
}

void TaintToleration::NormalizeScore(const PodInfo&, std::span<int64_t> scores) const {
  helper::DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
}

}  // namespace podflow::scheduler::plugins
