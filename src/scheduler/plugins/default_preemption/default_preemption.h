// DefaultPreemption: priority preemption at PostFilter, as kube-scheduler's
// DefaultPreemption plugin. When no node is feasible it looks for one node
// where evicting pods of lower priority lets the pod fit:
//  - Eligibility: a pod with preemptionPolicy Never preempts nobody.
//  - Candidates: nodes whose verdict was Unschedulable; an
//    UnschedulableAndUnresolvable node cannot be helped by evicting pods.
//    They are dry-run in verdict order until NumCandidates of them can host
//    the pod (kube-scheduler starts at a random offset; podflow starts at the
//    first so that a replayed log decides the same).
//  - Victims on a node (SelectVictims): every pod of lower priority is
//    removed; if the pod then fails the profile's filters (RunFilters, pods
//    nominated to the node included) the node is out. Otherwise the removed
//    pods are put back one at a time, most important first (higher priority,
//    then earlier start), and a pod whose return makes the pod not fit stays
//    a victim.
//  - PodDisruptionBudgets do not exist in podflow: no victim ever violates
//    one, so that rule never separates nodes.
//  - Node choice (PickNode): the lowest highest-victim priority, then the
//    smallest sum of victim priorities (each shifted by 2^31, so that more
//    victims of a negative priority do not look cheaper), then the fewest
//    victims, then the latest start among the highest-priority victims (its
//    earliest; a pod not started yet counts as starting last), then the first
//    candidate.
// The pod is then nominated to that node: the stage evicts the victims and
// the pod schedules there once they are gone. Pods of lower priority
// nominated to that node lose their nomination (cleared_nominations). kube-scheduler also refuses a
// pod whose nominated node still has victims terminating; podflow deletes
// victims outright and drops them from the cache at once, so there is never
// such a victim to wait for.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler::plugins {

class DefaultPreemption {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";
  // kube-scheduler's wording; PostFilter prefixes its reason with "preemption: ".
  static constexpr std::string_view kNotEligibleNever = "not eligible due to preemptionPolicy=Never.";
  static constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
  static constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";

  // A node where the pod fits once `victims` are gone; victims are ordered
  // most important first.
  struct Candidate {
    std::string node;
    std::vector<const PodInfo*> victims;
  };

  // DefaultPreemptionArgs: minCandidateNodesPercentage (default 10, 0..100)
  // and minCandidateNodesAbsolute (default 100, >= 0), not both 0.
  static Result<DefaultPreemption> FromArgs(const YAML::Node& args);

  // Success with nominated_node and victim uids when some node can be made
  // to fit; otherwise Unschedulable with one reason, "preemption: " and
  // either kNotEligibleNever or a FitError message over the nodes ("0/3
  // nodes are available: 1 Preemption is not helpful for scheduling, 2 No
  // preemption victims found for incoming pod."), and clear_nomination set
  // in the latter case (as kube-scheduler clears nominatedNodeName then).
  // Error when the state holds no RunFilters.
  PostFilterResult PostFilter(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                              std::span<const NodeVerdict> verdicts) const;

  // kube-scheduler's calculateNumCandidates: how many candidates to find
  // among `potential` nodes.
  size_t NumCandidates(size_t potential) const;

  // Success with the victims `pod` needs evicted from `node` in `victims`,
  // most important first; or the node's verdict when it cannot be helped:
  // kNoVictims (UnschedulableAndUnresolvable) when no pod there has a lower
  // priority, else the filters' rejection with every such pod gone.
  static PluginStatus SelectVictims(const CycleState& state, const RunFilters& filters,
                                    const PodInfo& pod, const NodeInfo& node,
                                    std::vector<const PodInfo*>& victims);

  // The index of the candidate to preempt on. REQUIRES: !candidates.empty(),
  // each candidate has a victim.
  static size_t PickNode(std::span<const Candidate> candidates);

  // kube-scheduler's MoreImportantPod: higher priority, then earlier start
  // (a pod not started counts as starting last).
  static bool MoreImportant(const PodInfo& a, const PodInfo& b);

 private:
  int32_t min_candidate_nodes_percentage_ = 10;
  int32_t min_candidate_nodes_absolute_ = 100;
};
static_assert(PostFilterPlugin<DefaultPreemption>);

}  // namespace podflow::scheduler::plugins
