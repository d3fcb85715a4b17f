#include "scheduler/plugins/pod_topology_spread/common.h"

#include <algorithm>

#include "scheduler/plugins/node_affinity/node_affinity.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"

namespace podflow::scheduler::plugins {
namespace spread {

bool HasAllTopologyKeys(const Labels& node_labels, std::span<const std::string_view> keys) {
  for (std::string_view key : keys) {
    if (FindLabel(node_labels, key) == nullptr) return false;
  }
  return true;
}

NodeInclusion::NodeInclusion(const PodInfo& pod)
    : pod_(pod),
      pod_has_affinity_(!pod.node_selector.empty() || pod.required_node_affinity.has_value()) {}

void NodeInclusion::Reset(const NodeInfo& node) {
  node_ = &node;
  affinity_ = -1;
  taints_ = -1;
}

bool NodeInclusion::Includes(const TopologySpreadConstraint& c) {
  if (c.node_affinity_policy == api::NodeInclusionPolicy::Honor && pod_has_affinity_) {
    if (affinity_ < 0) {
      bool match = std::all_of(pod_.node_selector.begin(), pod_.node_selector.end(),
                               [&](const auto& kv) {
                                 const std::string* v = FindLabel(node_->labels, kv.first);
                                 return v != nullptr && *v == kv.second;
                               });
      if (match && pod_.required_node_affinity.has_value()) {
        match = MatchesNodeSelector(*pod_.required_node_affinity, *node_);
      }
      affinity_ = match ? 1 : 0;
    }
    if (affinity_ == 0) return false;
  }
  if (c.node_taints_policy == api::NodeInclusionPolicy::Honor) {
    if (taints_ < 0) {
      taints_ = std::all_of(node_->taints.begin(), node_->taints.end(), [&](const Taint& t) {
        if (t.effect != api::TaintEffect::NoSchedule && t.effect != api::TaintEffect::NoExecute) {
          return true;
        }
        return TolerationsTolerateTaint(pod_.tolerations, t);
      }) ? 1 : 0;
    }
    if (taints_ == 0) return false;
  }
  return true;
}

int64_t CountMatchingPods(const NodeInfo& node, const LabelSelector& selector, std::string_view ns) {
  int64_t count = 0;
  for (const auto& p : node.pods()) {
    if (p->namespace_ != ns || p->deleting) continue;
    if (selector.Matches(p->labels)) ++count;
  }
  return count;
}

}  // namespace spread

std::vector<TopologySpreadConstraint> PodTopologySpread::SystemDefaultConstraints() {
  TopologySpreadConstraint hostname;
  hostname.max_skew = 3;
  hostname.topology_key = std::string(kLabelHostname);
  hostname.when_unsatisfiable = api::UnsatisfiableConstraintAction::ScheduleAnyway;
  TopologySpreadConstraint zone;
  zone.max_skew = 5;
  zone.topology_key = std::string(kLabelTopologyZone);
  zone.when_unsatisfiable = api::UnsatisfiableConstraintAction::ScheduleAnyway;
  return {hostname, zone};
}

std::vector<TopologySpreadConstraint> PodTopologySpread::Constraints(
    const PodInfo& pod, const Snapshot& snapshot, api::UnsatisfiableConstraintAction action) const {
  std::vector<TopologySpreadConstraint> out;
  if (!pod.topology_spread_constraints.empty()) {
    for (const TopologySpreadConstraint& c : pod.topology_spread_constraints) {
      if (c.when_unsatisfiable == action) out.push_back(c);
    }
    return out;
  }
  bool any = std::any_of(default_constraints_.begin(), default_constraints_.end(),
                         [&](const TopologySpreadConstraint& c) { return c.when_unsatisfiable == action; });
  if (!any) return out;
  // The union of the selectors of the Services selecting the pod; they all
  // match the pod, so no key has two values.
  Labels group;
  for (const ServiceInfo& service : snapshot.Services(pod.namespace_)) {
    if (!SelectsPod(service, pod.labels)) continue;
    for (const auto& kv : service.selector) {
      auto at = std::lower_bound(group.begin(), group.end(), kv.first,
                                 [](const auto& e, const std::string& k) { return e.first < k; });
      if (at == group.end() || at->first != kv.first) group.insert(at, kv);
    }
  }
  if (group.empty()) return out;
  LabelSelector selector = LabelSelector::Everything();
  for (const auto& [key, value] : group) selector.Add({key, api::LabelSelectorOperator::In, {value}});
  for (const TopologySpreadConstraint& c : default_constraints_) {
    if (c.when_unsatisfiable != action) continue;
    out.push_back(c);
    out.back().selector = selector;
  }
  return out;
}

}  // namespace podflow::scheduler::plugins
