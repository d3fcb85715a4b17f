#include "scheduler/plugins/volume_restrictions/volume_restrictions.h"

#include <algorithm>

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "PreFilterVolumeRestrictions";

struct State {
  // ReadWriteOncePod claims of the pod that scheduled pods already use.
  int conflicting_claims = 0;
};

bool ChecksConflicts(const PodVolume& v) {
  switch (v.kind) {
    case VolumeSourceKind::kGcePersistentDisk:
    case VolumeSourceKind::kAwsElasticBlockStore:
    case VolumeSourceKind::kRbd:
    case VolumeSourceKind::kIscsi:
      return true;
    default:
      return false;
  }
}

bool ShareAny(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// Some pod counted on a node, in `namespace_`, mounts claim `name`.
bool ClaimUsedByPods(const Snapshot& snapshot, const std::string& namespace_, const std::string& name) {
  for (const NodeInfo& node : snapshot.nodes()) {
    for (const auto& pod : node.pods()) {
      if (pod->volumes.empty() || pod->namespace_ != namespace_) continue;
      for (const PodVolume& v : pod->volumes) {
        if (v.kind == VolumeSourceKind::kPersistentVolumeClaim && v.claim_name == name) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool VolumesConflict(const PodVolume& want, const PodVolume& existing) {
  if (want.kind != existing.kind || want.id != existing.id) return false;
  const bool both_read_only = want.read_only && existing.read_only;
  switch (want.kind) {
    case VolumeSourceKind::kGcePersistentDisk:
    case VolumeSourceKind::kIscsi:
      return !both_read_only;
    case VolumeSourceKind::kAwsElasticBlockStore:
      return true;
    case VolumeSourceKind::kRbd:
      return want.rbd_pool == existing.rbd_pool && ShareAny(want.rbd_monitors, existing.rbd_monitors) &&
             !both_read_only;
    default:
      return false;
  }
}

PreFilterResult VolumeRestrictions::PreFilter(CycleState& state, const PodInfo& pod,
                                              const Snapshot& snapshot) const {
  auto s = std::make_shared<State>();
  std::vector<const std::string*> counted;  // a claim mounted twice counts once
  for (const PodVolume& v : pod.volumes) {
    if (v.kind != VolumeSourceKind::kPersistentVolumeClaim) continue;
    const PersistentVolumeClaimInfo* claim =
        snapshot.volumes().FindPersistentVolumeClaim(pod.namespace_, v.claim_name);
    if (claim == nullptr) {
      return {PluginStatus::UnschedulableAndUnresolvable(ClaimNotFoundMessage(v.claim_name)), std::nullopt};
    }
    if (!claim->read_write_once_pod) continue;
    if (std::any_of(counted.begin(), counted.end(), [&](const std::string* c) { return *c == v.claim_name; })) {
      continue;
    }
    counted.push_back(&v.claim_name);
    if (ClaimUsedByPods(snapshot, pod.namespace_, v.claim_name)) ++s->conflicting_claims;
  }
  state.Write<State>(std::string(kStateKey), std::move(s));
  return {};
}

PluginStatus VolumeRestrictions::Filter(const CycleState& state, const PodInfo& pod,
                                        const NodeInfo& node) const {
  for (const PodVolume& v : pod.volumes) {
    if (!ChecksConflicts(v)) continue;
    for (const auto& existing : node.pods()) {
      for (const PodVolume& ev : existing->volumes) {
        if (VolumesConflict(v, ev)) return PluginStatus::Unschedulable(std::string(kErrReasonDiskConflict));
      }
    }
  }
  const State* s = state.Read<State>(kStateKey);
  if (s == nullptr) return PluginStatus::Error("VolumeRestrictions: no prefilter state (PreFilter did not run)");
  if (s->conflicting_claims > 0) {
    return PluginStatus::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict));
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
