// spec.topologySpreadConstraints as PodInfo keeps them: Kubernetes' defaults
// applied and matchLabelKeys folded into the selector once per pod.
#include "scheduler/framework/pod_info.h"

namespace podflow::scheduler {

Result<std::vector<TopologySpreadConstraint>> TopologySpreadConstraintsFromApi(
    const flatbuffers::Vector<flatbuffers::Offset<api::TopologySpreadConstraint>>* constraints,
    const Labels& pod_labels) {
  std::vector<TopologySpreadConstraint> out;
  if (constraints == nullptr) return out;
  out.reserve(constraints->size());
  for (flatbuffers::uoffset_t i = 0; i < constraints->size(); ++i) {
    const api::TopologySpreadConstraint* c = constraints->Get(i);
    TopologySpreadConstraint t;
    t.max_skew = c->max_skew();
    if (c->topology_key() != nullptr) t.topology_key = c->topology_key()->str();
    if (c->when_unsatisfiable() != api::UnsatisfiableConstraintAction::Unset) {
      t.when_unsatisfiable = c->when_unsatisfiable();
    }
    auto selector = LabelSelector::FromApi(c->label_selector());
    if (!selector.ok()) {
      return Status::Invalid("spec.topologySpreadConstraints[" + std::to_string(i) +
                             "].labelSelector." + selector.status().message());
    }
    t.selector = std::move(selector).value();
    if (c->match_label_keys() != nullptr) {
      for (const flatbuffers::String* key : *c->match_label_keys()) {
        t.match_label_keys.push_back(key->str());
      }
    }
    // The pod's own values of matchLabelKeys are ANDed in. A null selector
    // matches nothing, but with such values it is those values alone, as
    // kube-scheduler merges them.
    LabelSelector merged;
    bool any = false;
    for (const std::string& key : t.match_label_keys) {
      const std::string* value = FindLabel(pod_labels, key);
      if (value == nullptr) continue;
      if (!any) {
        merged = t.selector.MatchesNothing() ? LabelSelector::Everything() : t.selector;
        any = true;
      }
      merged.Add({key, api::LabelSelectorOperator::In, {*value}});
    }
    if (any) t.selector = std::move(merged);
    if (c->min_domains().has_value()) t.min_domains = *c->min_domains();
    if (c->node_affinity_policy() != api::NodeInclusionPolicy::Unset) {
      t.node_affinity_policy = c->node_affinity_policy();
    }
    if (c->node_taints_policy() != api::NodeInclusionPolicy::Unset) {
      t.node_taints_policy = c->node_taints_policy();
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace podflow::scheduler
