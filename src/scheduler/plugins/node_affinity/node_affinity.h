// NodeAffinity (kubernetes plugins/nodeaffinity and
// component-helpers/scheduling/corev1/nodeaffinity).
//
// Filter: the node must match the args' addedAffinity required node selector
// when there is one ("node(s) didn't match scheduler-enforced node
// affinity"), then the pod's spec.nodeSelector (every key equal) and, when
// the pod has one, its requiredDuringSchedulingIgnoredDuringExecution node
// selector (terms ORed, requirements in a term ANDed).
//
// Score: the sum of the weights of the preferred terms (the pod's
// preferredDuringSchedulingIgnoredDuringExecution and the args'
// addedAffinity ones) the node matches. NormalizeScore: DefaultNormalizeScore
// (score * 100 / the highest score; all stay 0 when no node matches any).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

// One requirement against a node. Label operators: In (label present, value
// listed), NotIn (absent, or value not listed), Exists, DoesNotExist, Gt / Lt
// (label and the single value both integers, label > / < value). Field
// requirements (key "metadata.name"): In / NotIn with exactly one value.
// A malformed requirement (wrong value count, non-integer Gt/Lt value,
// unknown operator) matches nothing, as a term that fails to parse does.
bool MatchesLabelRequirement(const NodeSelectorRequirement& r, const NodeInfo& node);
bool MatchesFieldRequirement(const NodeSelectorRequirement& r, const NodeInfo& node);

// A term with neither expressions nor fields matches no node.
bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const NodeInfo& node);
// Zero terms match no node.
bool MatchesNodeSelector(const NodeSelector& selector, const NodeInfo& node);

class NodeAffinity {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  static constexpr bool kNodeLocal = true;
  static constexpr std::string_view kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
  static constexpr std::string_view kErrReasonEnforced =
      "node(s) didn't match scheduler-enforced node affinity";

  NodeAffinity() = default;

  // NodeAffinityArgs (null: none):
  //   addedAffinity:
  //     requiredDuringSchedulingIgnoredDuringExecution:
  //       nodeSelectorTerms: [{matchExpressions: [{key, operator, values}],
  //                            matchFields: [{key: metadata.name, operator, values}]}]
  //     preferredDuringSchedulingIgnoredDuringExecution:
  //       - {weight, preference: {matchExpressions, matchFields}}
  // Invalid, naming the field, for an unknown key or operator, values that
  // do not suit the operator (In/NotIn need some, Exists/DoesNotExist none,
  // Gt/Lt one integer; a field requirement is metadata.name In/NotIn with
  // one value), or a non-integer weight.
  static Result<NodeAffinity> FromArgs(const YAML::Node& args);

  // UnschedulableAndUnresolvable when the added affinity, nodeSelector or
  // required affinity fails.
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  void NormalizeScore(const PodInfo& pod, std::span<int64_t> scores) const;

 private:
  std::optional<NodeSelector> added_required_;
  std::vector<PreferredSchedulingTerm> added_preferred_;  // weight 0 left out
};
static_assert(FilterPlugin<NodeAffinity>);
static_assert(NormalizeScorePlugin<NodeAffinity>);

}  // namespace podflow::scheduler::plugins
