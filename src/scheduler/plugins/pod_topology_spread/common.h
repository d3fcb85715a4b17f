// Internal to PodTopologySpread: node eligibility and pod counting shared by
// filtering.cc and scoring.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"

namespace podflow::scheduler::plugins::spread {

// Whether the node has a label for every one of `keys`.
bool HasAllTopologyKeys(const Labels& node_labels, std::span<const std::string_view> keys);

// Which inclusion policies a node passes for `pod`, computed at most once
// per node: MatchesAffinity is the pod's nodeSelector and required node
// affinity; ToleratesTaints is every NoSchedule / NoExecute taint tolerated.
class NodeInclusion {
 public:
  explicit NodeInclusion(const PodInfo& pod);

  // Whether the node last Reset counts for constraint `c`.
  // REQUIRES: Reset(node) first; the node outlives the calls.
  void Reset(const NodeInfo& node);
  bool Includes(const TopologySpreadConstraint& c);

 private:
  const PodInfo& pod_;
  const NodeInfo* node_ = nullptr;
  bool pod_has_affinity_;
  int8_t affinity_ = -1;  // -1 unknown, 0 no, 1 yes
  int8_t taints_ = -1;
};

// The pods on `node` of namespace `ns`, not being deleted, that `selector`
// matches (kube-scheduler's countPodsMatchSelector).
int64_t CountMatchingPods(const NodeInfo& node, const LabelSelector& selector, std::string_view ns);

}  // namespace podflow::scheduler::plugins::spread
