// VolumeZone (the seeds' NoVolumeZoneConflict): the zone and region labels
// of the volumes bound to the pod's claims must match the node's (kubernetes
// plugins/volumezone). Labels read: failure-domain.beta.kubernetes.io/zone
// and /region, topology.kubernetes.io/zone and /region. A volume's value
// may list several zones separated by "__"; the node's value must be one of
// them. A beta label on the volume matches the node's beta label, or its GA
// label when the node has no beta one. A node with none of the four labels
// accepts any volume (a single-zone cluster).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

// A volume's zone label value as a set: split on "__", each part trimmed of
// spaces; nullopt when a part is empty (the label is then ignored).
std::optional<std::set<std::string>> LabelZonesToSet(std::string_view value);

class VolumeZone {
 public:
  static constexpr std::string_view kName = "VolumeZone";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

  // Reads the zone labels of the volumes bound to the pod's claims
  // (spec.volumeName). UnschedulableAndUnresolvable for a claim that does
  // not exist, an unbound claim ("PersistentVolumeClaim had no pv name and
  // storageClass name", or with a class: podflow knows no StorageClass,
  // "storageclass.storage.k8s.io \"c\" not found"), or a volume that does
  // not exist ("persistentvolume \"v\" not found").
  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  // UnschedulableAndUnresolvable when a volume's zone label does not match.
  // REQUIRES: PreFilter ran on `state` (Error otherwise).
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
};
static_assert(PreFilterPlugin<VolumeZone>);
static_assert(FilterPlugin<VolumeZone>);

}  // namespace podflow::scheduler::plugins
