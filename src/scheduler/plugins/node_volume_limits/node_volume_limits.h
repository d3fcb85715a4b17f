// NodeVolumeLimits (the seeds' MaxEBSVolumeCount, MaxGCEPDVolumeCount,
// MaxAzureDiskVolumeCount, and CSI limits): the unique volumes the node's
// pods attach plus those the new pod adds must stay within the node's limit
// for each kind of volume (kubernetes plugins/nodevolumelimits, in-tree and
// CSI counters in one plugin).
//
// A volume counts by its identity: inline AWS EBS / GCE PD / Azure Disk /
// Cinder volumes by their disk; a claim by the source of the volume it is
// bound to (spec.volumeName): one of those disks, or a CSI volume as
// driver/handle. Unbound claims, and claims or volumes that do not exist,
// count for nothing (with no StorageClass there is no provisioner to guess).
//
// Limits: attachable-volumes-aws-ebs (default 39, 25 on Nitro instance
// types), attachable-volumes-gce-pd (16), attachable-volumes-azure-disk
// (16), attachable-volumes-cinder (256): the node's allocatable entry of that
// name, when present, replaces the default. CSI driver D: the node's
// CSINode entry for D (spec.drivers[].allocatable.count), else the
// allocatable entry attachable-volumes-csi-D, no limit without either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

inline constexpr std::string_view kEbsVolumeLimitKey = "attachable-volumes-aws-ebs";
inline constexpr std::string_view kGcePdVolumeLimitKey = "attachable-volumes-gce-pd";
inline constexpr std::string_view kAzureDiskVolumeLimitKey = "attachable-volumes-azure-disk";
inline constexpr std::string_view kCinderVolumeLimitKey = "attachable-volumes-cinder";
inline constexpr std::string_view kCsiAttachLimitPrefix = "attachable-volumes-csi-";
inline constexpr int64_t kDefaultMaxEbsVolumes = 39;
inline constexpr int64_t kDefaultMaxEbsNitroVolumes = 25;
inline constexpr int64_t kDefaultMaxGcePdVolumes = 16;
inline constexpr int64_t kDefaultMaxAzureDiskVolumes = 16;
inline constexpr int64_t kDefaultMaxCinderVolumes = 256;

// Kubernetes' Nitro test on the instance type label: "^[cmr]5.*|t3|z1d"
// (c5*, m5*, r5*, or "t3" / "z1d" anywhere).
bool IsNitroInstanceType(std::string_view instance_type);

// The limit for `limit_key` on `node` (its CSINode's counts from
// `catalog`); nullopt when unlimited.
std::optional<int64_t> VolumeLimit(const NodeInfo& node, std::string_view limit_key, const VolumeCatalog& catalog);

class NodeVolumeLimits {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count";

  // Resolves the new pod's volumes once. A claim of the pod that does not
  // exist makes every node UnschedulableAndUnresolvable at Filter
  // ("looking up PVC ns/x: persistentvolumeclaim \"x\" not found").
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  // Unschedulable when a limit would be exceeded.
  // REQUIRES: PreFilter ran on `state` (Error otherwise); the snapshot
  // PreFilter saw outlives the cycle.
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(PreFilterPlugin<NodeVolumeLimits>);
static_assert(FilterPlugin<NodeVolumeLimits>);

}  // namespace podflow::scheduler::plugins
