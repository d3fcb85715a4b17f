#include "scheduler/plugins/volume_zone/volume_zone.h"

#include <algorithm>
#include <array>

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "PreFilterVolumeZone";
constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";
constexpr std::array<std::string_view, 4> kTopologyLabels = {kBetaZone, kBetaRegion, kZone, kRegion};

struct Topology {
  std::string_view key;
  std::set<std::string> values;
};

struct State {
  std::vector<Topology> topologies;  // per bound volume and label, in volume order
};

std::string_view GaLabel(std::string_view key) {
  if (key == kBetaZone) return kZone;
  if (key == kBetaRegion) return kRegion;
  return key;
}

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::set<std::string>> LabelZonesToSet(std::string_view value) {
  constexpr std::string_view kDelimiter = "__";
  std::set<std::string> out;
  for (;;) {
    const size_t at = value.find(kDelimiter);
    std::string_view zone = Trim(value.substr(0, at));
    if (zone.empty()) return std::nullopt;
    out.emplace(zone);
    if (at == std::string_view::npos) return out;
    value.remove_prefix(at + kDelimiter.size());
  }
}

PreFilterResult VolumeZone::PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const {
  auto reject = [](std::string reason) {
    return PreFilterResult{PluginStatus::UnschedulableAndUnresolvable(std::move(reason)), std::nullopt};
  };
  const VolumeCatalog& catalog = snapshot.volumes();
  auto s = std::make_shared<State>();
  for (const PodVolume& v : pod.volumes) {
    if (v.kind != VolumeSourceKind::kPersistentVolumeClaim) continue;
    if (v.claim_name.empty()) return reject("PersistentVolumeClaim had no name");
    const PersistentVolumeClaimInfo* claim = catalog.FindPersistentVolumeClaim(pod.namespace_, v.claim_name);
    if (claim == nullptr) return reject(ClaimNotFoundMessage(v.claim_name));
    if (claim->volume_name.empty()) {
      if (claim->storage_class.empty()) return reject("PersistentVolumeClaim had no pv name and storageClass name");
      return reject("storageclass.storage.k8s.io \"" + claim->storage_class + "\" not found");
    }
    const PersistentVolumeInfo* pv = catalog.FindPersistentVolume(claim->volume_name);
    if (pv == nullptr) return reject("persistentvolume \"" + claim->volume_name + "\" not found");
    for (std::string_view key : kTopologyLabels) {
      const std::string* value = FindLabel(pv->labels, key);
      if (value == nullptr) continue;
      std::optional<std::set<std::string>> zones = LabelZonesToSet(*value);
      if (zones.has_value()) s->topologies.push_back(Topology{key, std::move(*zones)});
    }
  }
  state.Write<State>(std::string(kStateKey), std::move(s));
  return {};
}

PluginStatus VolumeZone::Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.volumes.empty()) return PluginStatus::Success();
  const State* s = state.Read<State>(kStateKey);
  if (s == nullptr) return PluginStatus::Error("VolumeZone: no prefilter state (PreFilter did not run)");
  if (s->topologies.empty()) return PluginStatus::Success();
  const bool constrained = std::any_of(kTopologyLabels.begin(), kTopologyLabels.end(),
                                       [&](std::string_view key) { return FindLabel(node.labels, key) != nullptr; });
  if (!constrained) return PluginStatus::Success();
  for (const Topology& t : s->topologies) {
    const std::string* value = FindLabel(node.labels, t.key);
    if (value == nullptr) value = FindLabel(node.labels, GaLabel(t.key));
    if (value == nullptr || !t.values.contains(*value)) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonConflict));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
