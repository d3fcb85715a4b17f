// InterPodAffinity (filter and score), as kube-scheduler's interpodaffinity
// plugin.
//
// Filter, on the domains (values of a node label topologyKey) of each term:
//  - every required podAffinity term must have a matching pod in the
//    node's domain; a node without the topologyKey label fails. The first
//    pod of a group may schedule anyway: when no pod anywhere matches the
//    terms and the pod matches all its own terms.
//    -> UnschedulableAndUnresolvable "node(s) didn't match pod affinity rules"
//  - no required podAntiAffinity term may have a matching pod in the node's
//    domain (a node without the label passes).
//    -> Unschedulable "node(s) didn't match pod anti-affinity rules"
//  - no running pod whose required podAntiAffinity term matches this pod
//    may sit in the node's domain of that term (symmetry).
//    -> Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules"
// PreFilter reads the counts per domain from the Snapshot's AffinityIndex
// (computing them when the index does not track the pod's terms), so
// Filter is a few hash look-ups per node.
//
// Score: per domain, the sum of the weights of the pod's preferred affinity
// terms (+) and anti-affinity terms (-) matched by running pods there, plus
// running pods' preferred terms matching this pod (+/- weight) and their
// required affinity terms matching it (+hardPodAffinityWeight); a node
// scores the sum over its domains. NormalizeScore maps min..max to 0..100
// (100 * (s - min) / (max - min), truncated; all 0 when max == min).
//
// Args: hardPodAffinityWeight (0..100, default 1),
// ignorePreferredTermsOfExistingPods (default false: when true and the pod
// has no preferred terms, every node scores 0).
//
// On a copy of a snapshot node (preemption's node without its victims, the
// runner's node with nominated pods added) Filter adjusts the counts of the
// node's domains by the pods the copy gained or lost, as kube-scheduler's
// PreFilter extensions AddPod / RemovePod do. PreFilter answers Skip when
// the pod has no required term and no counted pod's anti-affinity matches
// it, as kube-scheduler does; a nominated pod's anti-affinity is then not
// seen either (kube-scheduler skips such plugins' AddPod too).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class InterPodAffinity {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  static constexpr std::string_view kErrReasonAffinityRulesNotMatch =
      "node(s) didn't match pod affinity rules";
  static constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
      "node(s) didn't match pod anti-affinity rules";
  static constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
      "node(s) didn't satisfy existing pods anti-affinity rules";
  static constexpr int32_t kDefaultHardPodAffinityWeight = 1;
  static constexpr int32_t kMaxHardPodAffinityWeight = 100;

  InterPodAffinity() = default;
  InterPodAffinity(int32_t hard_pod_affinity_weight, bool ignore_preferred_terms_of_existing_pods)
      : hard_pod_affinity_weight_(hard_pod_affinity_weight),
        ignore_preferred_terms_of_existing_pods_(ignore_preferred_terms_of_existing_pods) {}

  // InterPodAffinityArgs; Invalid naming the field when out of range.
  static Result<InterPodAffinity> FromArgs(const YAML::Node& args);

  int32_t hard_pod_affinity_weight() const { return hard_pod_affinity_weight_; }
  bool ignore_preferred_terms_of_existing_pods() const {
    return ignore_preferred_terms_of_existing_pods_;
  }

  PreFilterResult PreFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot) const;
  PluginStatus Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;

  PluginStatus PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                        std::span<const NodeInfo* const> feasible) const;
  int64_t Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  void NormalizeScore(const PodInfo& pod, std::span<int64_t> scores) const;

 private:
  int32_t hard_pod_affinity_weight_ = kDefaultHardPodAffinityWeight;
  bool ignore_preferred_terms_of_existing_pods_ = false;
};
static_assert(PreFilterPlugin<InterPodAffinity>);
static_assert(FilterPlugin<InterPodAffinity>);
static_assert(PreScorePlugin<InterPodAffinity>);
static_assert(NormalizeScorePlugin<InterPodAffinity>);

}  // namespace podflow::scheduler::plugins
