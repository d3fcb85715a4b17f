// TaintToleration (kubernetes plugins/tainttoleration).
//
// Filter: every NoSchedule and NoExecute taint of the node must be tolerated
// by the pod; PreferNoSchedule taints only matter to the score.
//
// Score: the number of the node's PreferNoSchedule taints the pod does not
// tolerate. Only tolerations with effect PreferNoSchedule or none can
// tolerate such a taint (a toleration's effect must match the taint's).
// NormalizeScore: DefaultNormalizeScore reversed: 100 - count * 100 / max
// count over the feasible nodes; every node 100 when no node has one.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class TaintToleration {
 public:
  static constexpr std::string_view kName = "TaintToleration";
  static constexpr bool kNodeLocal = true;

  // UnschedulableAndUnresolvable naming the node's first untolerated
  // NoSchedule/NoExecute taint: "node(s) had untolerated taint {key: value}".
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  void NormalizeScore(const PodInfo& pod, std::span<int64_t> scores) const;
};
static_assert(FilterPlugin<TaintToleration>);
static_assert(NormalizeScorePlugin<TaintToleration>);

}  // namespace podflow::scheduler::plugins
