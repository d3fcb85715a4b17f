#include "scheduler/plugins/volume_restrictions/volume_restrictions.h"

#include <algorithm>

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "PreFilterVolumeRestrictions";

struct State {
  // The pod's claims with the ReadWriteOncePod access mode.
  std::vector<std::string> once_claims;
  // Nodes where a pod holding one of them is counted, one entry per holder.
  std::vector<std::string> holder_nodes;
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

// `pod` lives in `namespace_` and mounts one of `claims`.
bool MountsAny(const PodInfo& pod, const std::string& namespace_, const std::vector<std::string>& claims) {
  if (pod.volumes.empty() || pod.namespace_ != namespace_) return false;
  return std::any_of(pod.volumes.begin(), pod.volumes.end(), [&](const PodVolume& v) {
    return v.kind == VolumeSourceKind::kPersistentVolumeClaim &&
           std::find(claims.begin(), claims.end(), v.claim_name) != claims.end();
  });
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
  for (const PodVolume& v : pod.volumes) {
    if (v.kind != VolumeSourceKind::kPersistentVolumeClaim) continue;
    const PersistentVolumeClaimInfo* claim =
        snapshot.volumes().FindPersistentVolumeClaim(pod.namespace_, v.claim_name);
    if (claim == nullptr) {
      return {PluginStatus::UnschedulableAndUnresolvable(ClaimNotFoundMessage(v.claim_name)), std::nullopt};
    }
    if (claim->read_write_once_pod &&
        std::find(s->once_claims.begin(), s->once_claims.end(), v.claim_name) == s->once_claims.end()) {
      s->once_claims.push_back(v.claim_name);
    }
  }
  // No disk that can conflict and no ReadWriteOncePod claim: Filter would
  // pass every node (and does, should it be called).
  if (s->once_claims.empty() && std::none_of(pod.volumes.begin(), pod.volumes.end(), ChecksConflicts)) {
    state.Write<State>(std::string(kStateKey), std::move(s));
    return {PluginStatus::Skip(), std::nullopt};
  }
  if (!s->once_claims.empty()) {
    for (const NodeInfo& node : snapshot.nodes()) {
      for (const auto& other : node.pods()) {
        if (MountsAny(*other, pod.namespace_, s->once_claims)) s->holder_nodes.push_back(node.name);
      }
    }
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
  if (s->once_claims.empty()) return PluginStatus::Success();
  // A holder on another node stays whatever happens here; one on this node
  // is read from `node` itself, so that preemption's trial without it (or
  // with a nominated pod added) sees the claim freed (or taken).
  const bool conflict =
      std::any_of(s->holder_nodes.begin(), s->holder_nodes.end(),
                  [&](const std::string& n) { return n != node.name; }) ||
      std::any_of(node.pods().begin(), node.pods().end(),
                  [&](const auto& other) { return MountsAny(*other, pod.namespace_, s->once_claims); });
  if (conflict) return PluginStatus::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict));
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
