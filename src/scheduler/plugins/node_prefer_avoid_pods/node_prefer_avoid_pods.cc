#include "scheduler/plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"

namespace podflow::scheduler::plugins {

int64_t NodePreferAvoidPods::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.controller_kind != "ReplicationController" && pod.controller_kind != "ReplicaSet") {
    return kMaxNodeScore;
  }
  for (const AvoidedController& avoid : node.prefer_avoid_pods) {
    if (avoid.kind == pod.controller_kind && avoid.uid == pod.controller_uid) return 0;
  }
  return kMaxNodeScore;
}

}  // namespace podflow::scheduler::plugins
