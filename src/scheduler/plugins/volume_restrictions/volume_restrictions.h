// VolumeRestrictions (the seeds' NoDiskConflict): a pod may not mount a disk
// that a pod already on the node mounts, where the disk cannot be shared
// (kubernetes plugins/volumerestrictions):
// - GCE PD: the same pdName, unless both mount it read-only;
// - AWS EBS: the same volumeID, always;
// - Ceph RBD: a shared monitor, the same pool and image, unless both read-only;
// - iSCSI: the same IQN, unless both read-only.
// Only inline volumes are compared this way. A claim with the
// ReadWriteOncePod access mode that any scheduled pod already uses rejects
// every node (preempting that pod could free it).
#pragma once

#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

// The conflict rule above for one volume of the new pod against one volume
// of a pod on the node.
bool VolumesConflict(const PodVolume& want, const PodVolume& existing);

class VolumeRestrictions {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";
  static constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
  static constexpr std::string_view kErrReasonReadWriteOncePodConflict =
      "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

  // Looks up the pod's claims: one that does not exist is
  // UnschedulableAndUnresolvable ("persistentvolumeclaim \"x\" not found");
  // notes the nodes of the pods already mounting its ReadWriteOncePod ones.
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  // Unschedulable on a disk conflict, else on a ReadWriteOncePod conflict:
  // a holder on another node, or one among `node`'s pods (so a trial node
  // without the holder, as preemption builds, passes).
  // REQUIRES: PreFilter ran on `state` (Error otherwise).
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(PreFilterPlugin<VolumeRestrictions>);
static_assert(FilterPlugin<VolumeRestrictions>);

}  // namespace podflow::scheduler::plugins
