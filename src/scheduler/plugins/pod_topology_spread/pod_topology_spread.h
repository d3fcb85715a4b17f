// PodTopologySpread (kubernetes plugins/podtopologyspread): spread the pods
// of a group evenly over topology domains (the values of a node label).
//
// Constraints: the pod's spec.topologySpreadConstraints (PodInfo); a pod
// with none gets the plugin's default constraints, whose selector is the
// union of the selectors of the Services in the pod's namespace that select
// it (none: no default constraints). Only pods of the incoming pod's
// namespace that are not being deleted count. A node is eligible for a
// constraint when it has every constraint's topology key and passes the
// constraint's inclusion policies: nodeAffinityPolicy Honor (the default)
// needs the pod's nodeSelector and required node affinity to match it;
// nodeTaintsPolicy Honor needs the pod to tolerate its NoSchedule /
// NoExecute taints (Ignore, the default, takes every node).
//
// PreFilter + Filter (DoNotSchedule constraints): PreFilter counts the
// matching pods per domain over every eligible node of the snapshot, once.
// Filter rejects a node lacking a constraint's key (UnschedulableAndUnresolvable,
// kErrReasonNodeLabelNotMatch) and a node where
//   count(domain of node) + (1 if the pod matches the selector) - global minimum > maxSkew
// (Unschedulable, kErrReasonConstraintsNotMatch). The global minimum is the
// least count over the eligible domains, or 0 when there are fewer of them
// than minDomains.
//
// PreScore + Score + NormalizeScore (ScheduleAnyway constraints): see
// scoring.cc. A node the plugin does not score (it lacks a topology key, or
// the pod has no ScheduleAnyway constraint) gets raw score -1, normalized 0.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";

class PodTopologySpread {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  static constexpr std::string_view kErrReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  static constexpr std::string_view kErrReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing required label)";
  // Raw score of a node the plugin does not score; NormalizeScore makes it 0.
  static constexpr int64_t kInvalidScore = -1;

  // kube-scheduler's systemDefaultConstraints: kubernetes.io/hostname maxSkew
  // 3 and topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway.
  static std::vector<TopologySpreadConstraint> SystemDefaultConstraints();

  // defaultingType System.
  PodTopologySpread() : default_constraints_(SystemDefaultConstraints()), system_defaulted_(true) {}
  // defaultingType List with these constraints (their selectors are unused).
  explicit PodTopologySpread(std::vector<TopologySpreadConstraint> default_constraints)
      : default_constraints_(std::move(default_constraints)), system_defaulted_(false) {}

  // PodTopologySpreadArgs: defaultingType (System, the default | List) and
  // defaultConstraints (only with List; each: maxSkew > 0, topologyKey a
  // label name, whenUnsatisfiable DoNotSchedule | ScheduleAnyway, optional
  // minDomains > 0, nodeAffinityPolicy / nodeTaintsPolicy Honor | Ignore,
  // matchLabelKeys; no labelSelector; no two with the same topologyKey and
  // whenUnsatisfiable). Invalid naming every bad field.
  static Result<PodTopologySpread> FromArgs(const YAML::Node& args);

  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

  PluginStatus PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                        std::span<const NodeInfo* const> feasible) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  void NormalizeScore(const PodInfo& pod, std::span<int64_t> scores) const;

  const std::vector<TopologySpreadConstraint>& default_constraints() const {
    return default_constraints_;
  }
  bool system_defaulted() const { return system_defaulted_; }

  // The constraints of `pod` with `action`: its own, or when it has none,
  // the default ones with the selector of its Services (none when no
  // Service selects it).
  std::vector<TopologySpreadConstraint> Constraints(const PodInfo& pod, const Snapshot& snapshot,
                                                    api::UnsatisfiableConstraintAction action) const;

 private:
  std::vector<TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_;
};
static_assert(PreFilterPlugin<PodTopologySpread>);
static_assert(FilterPlugin<PodTopologySpread>);
static_assert(PreScorePlugin<PodTopologySpread>);
static_assert(NormalizeScorePlugin<PodTopologySpread>);

}  // namespace podflow::scheduler::plugins
