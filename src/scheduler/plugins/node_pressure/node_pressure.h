// NodePressure (filter): the seeds' node-condition predicates
// CheckNodeMemoryPressure, CheckNodePIDPressure and CheckNodeDiskPressure in
// one plugin, reading the node's status.conditions:
//   MemoryPressure True: BestEffort pods are rejected, "node(s) had memory pressure";
//   PIDPressure True: every pod is rejected, "node(s) had pid pressure";
//   DiskPressure True: every pod is rejected, "node(s) had disk pressure".
// Checked in that order (the seeds' predicate order); the first failing
// check is the verdict, UnschedulableAndUnresolvable (evicting pods does
// not lift a condition). Modern kube-scheduler has no such plugin: the node
// lifecycle controller turns these conditions into node.kubernetes.io/*-pressure
// NoSchedule taints, which TaintToleration checks; podflow does both.
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class NodePressure {
 public:
  static constexpr std::string_view kName = "NodePressure";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kMemoryPressure = "node(s) had memory pressure";
  static constexpr std::string_view kDiskPressure = "node(s) had disk pressure";
  static constexpr std::string_view kPidPressure = "node(s) had pid pressure";

  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(FilterPlugin<NodePressure>);

}  // namespace podflow::scheduler::plugins
