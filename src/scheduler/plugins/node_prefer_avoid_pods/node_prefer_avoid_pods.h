// NodePreferAvoidPods (score; the seeds' priority, kubernetes
// plugins/nodepreferavoidpods before 1.24): a node whose
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation names the pod's
// controller (kind and uid of its controller ownerReference, when that is a
// ReplicationController or a ReplicaSet) scores 0; every other node 100.
// Pods without such a controller score 100 everywhere. Its default weight,
// 10000, lets the annotation outweigh every other score.
#pragma once

#include <cstdint>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class NodePreferAvoidPods {
 public:
  static constexpr std::string_view kName = "NodePreferAvoidPods";
  static constexpr bool kNodeLocal = true;
  static constexpr int32_t kDefaultWeight = 10000;

  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(ScorePlugin<NodePreferAvoidPods>);

}  // namespace podflow::scheduler::plugins
