#include "scheduler/plugins/volume_binding/volume_binding.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "scheduler/plugins/node_affinity/node_affinity.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "VolumeBinding";

struct State {
  // The volumes of the pod's bound claims, in volume order; nullptr where
  // the named volume does not exist. Pointers into the snapshot's catalog,
  // which does not change during the cycle.
  std::vector<const PersistentVolumeInfo*> bound;
};

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";

std::set<std::string> Intersection(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

}  // namespace

std::set<std::string> VolumeHostnames(const PersistentVolumeInfo& pv) {
  std::set<std::string> out;
  if (!pv.node_affinity.has_value()) return out;
  for (const NodeSelectorTerm& term : pv.node_affinity->terms) {
    std::optional<std::set<std::string>> names;
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      if (r.key != kLabelHostname || r.op != api::NodeSelectorOperator::In) continue;
      std::set<std::string> values(r.values.begin(), r.values.end());
      names = names.has_value() ? Intersection(*names, values) : std::move(values);
    }
    if (names.has_value()) out.insert(names->begin(), names->end());
  }
  return out;
}

bool VolumeNodeAffinityMatches(const NodeSelector& affinity, const NodeInfo& node) {
  static const NodeInfo kNameless;
  return std::any_of(affinity.terms.begin(), affinity.terms.end(), [&](const NodeSelectorTerm& term) {
    if (term.match_expressions.empty() && term.match_fields.empty()) return false;
    return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                       [&](const NodeSelectorRequirement& r) { return MatchesLabelRequirement(r, node); }) &&
           std::all_of(term.match_fields.begin(), term.match_fields.end(),
                       [&](const NodeSelectorRequirement& r) { return MatchesFieldRequirement(r, kNameless); });
  });
}

PreFilterResult VolumeBinding::PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const {
  const VolumeCatalog& catalog = snapshot.volumes();
  auto reject = [](std::string reason) {
    return PreFilterResult{PluginStatus::UnschedulableAndUnresolvable(std::move(reason)), std::nullopt};
  };
  std::vector<const PersistentVolumeClaimInfo*> claims;
  for (const PodVolume& v : pod.volumes) {
    const bool ephemeral = v.kind == VolumeSourceKind::kEphemeral;
    if (v.kind != VolumeSourceKind::kPersistentVolumeClaim && !ephemeral) continue;
    const PersistentVolumeClaimInfo* claim = catalog.FindPersistentVolumeClaim(pod.namespace_, v.claim_name);
    if (claim == nullptr) {
      return reject(ephemeral ? "waiting for ephemeral volume controller to create the persistentvolumeclaim " +
                                    Quoted(v.claim_name)
                              : ClaimNotFoundMessage(v.claim_name));
    }
    if (claim->lost) {
      return reject("persistentvolumeclaim " + Quoted(claim->name) + " bound to non-existent persistentvolume " +
                    Quoted(claim->volume_name));
    }
    if (claim->deleting) return reject("persistentvolumeclaim " + Quoted(claim->name) + " is being deleted");
    if (ephemeral && (claim->controller_uid.empty() || claim->controller_uid != pod.uid)) {
      return reject("PVC " + claim->namespace_ + "/" + claim->name + " was not created for pod " + pod.FullName() +
                    " (pod is not owner)");
    }
    claims.push_back(claim);
  }
  auto s = std::make_shared<State>();
  for (const PersistentVolumeClaimInfo* claim : claims) {
    if (!catalog.IsBound(*claim)) return reject(std::string(kErrReasonUnboundImmediate));
    s->bound.push_back(catalog.FindPersistentVolume(claim->volume_name));
  }
  // Only the nodes the bound volumes name by hostname are worth visiting;
  // no narrowing when a bound volume is missing (Filter says why).
  std::optional<std::set<std::string>> eligible;
  const bool all_found = std::none_of(s->bound.begin(), s->bound.end(), [](const auto* pv) { return pv == nullptr; });
  for (const PersistentVolumeInfo* pv : s->bound) {
    if (!all_found) break;
    std::set<std::string> names = VolumeHostnames(*pv);
    if (names.empty()) continue;
    eligible = eligible.has_value() ? Intersection(*eligible, names) : std::move(names);
  }
  state.Write<State>(std::string(kStateKey), std::move(s));
  if (!eligible.has_value()) return {};
  if (eligible->empty()) return reject("node(s) didn't satisfy plugin " + std::string(kName));
  return {PluginStatus::Success(), std::vector<std::string>(eligible->begin(), eligible->end())};
}

PluginStatus VolumeBinding::Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const State* s = state.Read<State>(kStateKey);
  if (s == nullptr) return PluginStatus::Error("VolumeBinding: no prefilter state (PreFilter did not run)");
  for (const PersistentVolumeInfo* pv : s->bound) {
    if (pv == nullptr) return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonPVNotExist));
    if (pv->node_affinity.has_value() && !VolumeNodeAffinityMatches(*pv->node_affinity, node)) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonNodeConflict));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
