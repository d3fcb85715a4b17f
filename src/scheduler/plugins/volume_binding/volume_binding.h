// VolumeBinding (the seeds' NoVolumeNodeConflict): every claim of the pod
// must exist and be bound, and each bound volume's node affinity must match
// the node (kubernetes plugins/volumebinding).
//
// podflow has no StorageClass, so no claim waits for its first consumer:
// an unbound claim is an immediate one, which the PV controller should have
// bound already, and the pod cannot schedule until it is
// ("pod has unbound immediate PersistentVolumeClaims"). Nothing is bound or
// provisioned at Reserve / PreBind. volumes.h says when a claim is bound.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

// A persistent volume's required node affinity against a node, as
// Kubernetes checks it: the node's labels only (matchFields see an empty
// node name).
bool VolumeNodeAffinityMatches(const NodeSelector& affinity, const NodeInfo& node);

// The node names a volume's required node affinity pins it to, as
// Kubernetes reads them to narrow the nodes worth filtering: per term the
// intersection of its kubernetes.io/hostname In lists, the union over terms
// (terms without such a list add nothing). Empty: no narrowing.
std::set<std::string> VolumeHostnames(const PersistentVolumeInfo& pv);

class VolumeBinding {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReasonNodeConflict = "node(s) had volume node affinity conflict";
  static constexpr std::string_view kErrReasonPVNotExist =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
  static constexpr std::string_view kErrReasonUnboundImmediate =
      "pod has unbound immediate PersistentVolumeClaims";

  // UnschedulableAndUnresolvable, in volume order, for a claim that is
  // missing (ephemeral: "waiting for ephemeral volume controller to create
  // the persistentvolumeclaim \"x\""), Lost, being deleted, or (ephemeral)
  // not controlled by the pod; then for any unbound claim. Narrows the
  // nodes to visit to those the bound volumes name by hostname
  // (VolumeHostnames, intersected over volumes); none left is
  // UnschedulableAndUnresolvable ("node(s) didn't satisfy plugin VolumeBinding").
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  // UnschedulableAndUnresolvable when, at the first bound claim that fails,
  // its volume does not exist or its node affinity does not match.
  // REQUIRES: PreFilter ran on `state` (Error otherwise).
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(PreFilterPlugin<VolumeBinding>);
static_assert(FilterPlugin<VolumeBinding>);

}  // namespace podflow::scheduler::plugins
