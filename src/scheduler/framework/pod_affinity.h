// Inter-pod affinity terms as plain values, parsed once per pod: a pod's
// spec.affinity.podAffinity / podAntiAffinity with their label selectors
// compiled and their namespaces resolved (kube-scheduler's AffinityTerm).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "pod_generated.h"
#include "scheduler/framework/labels.h"

namespace podflow::scheduler {

// One PodAffinityTerm. A pod matches it when the pod's namespace is one of
// `namespaces` or its namespace's labels match `namespace_selector`, and its
// labels match `selector`. The topology domain is the value of the node
// label `topology_key`.
struct AffinityTerm {
  LabelSelector selector;  // labelSelector (+ matchLabelKeys / mismatchLabelKeys)
  // Sorted, unique. The owning pod's namespace when the term names none and
  // has no namespaceSelector.
  std::vector<std::string> namespaces;
  LabelSelector namespace_selector;  // null: Nothing; {}: every namespace
  std::string topology_key;
  // The term's identity: two terms with equal keys match the same pods in
  // the same domains. Built from all the fields above.
  std::string key;

  // Whether a pod in namespace `ns` with `labels` matches. `ns_labels` are
  // the labels of namespace `ns`; nullptr when that namespace is unknown,
  // which only an empty namespaceSelector ({}) then matches.
  bool Matches(std::string_view ns, const Labels& labels, const Labels* ns_labels) const;
};

struct WeightedAffinityTerm {
  int32_t weight = 0;
  AffinityTerm term;
};

// What the scheduler reads of a pod's inter-pod affinity.
struct PodAffinityTerms {
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  std::vector<WeightedAffinityTerm> preferred_affinity;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;
  // Identity of required_affinity as a whole (its terms' keys in order);
  // empty when there are none.
  std::string required_affinity_key;
  // spec.affinity names podAffinity or podAntiAffinity (kube-scheduler's
  // "pod with affinity", which NodeInfo lists apart).
  bool declared = false;

  bool Empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() &&
           preferred_affinity.empty() && preferred_anti_affinity.empty();
  }
};

// Parses a pod's inter-pod affinity. `pod_namespace` and `pod_labels` are
// the pod's: the former is the default namespace of a term, the latter
// feed matchLabelKeys ("key In (the pod's value)") and mismatchLabelKeys
// ("key NotIn (the pod's value)"), applied only when the term has a
// labelSelector and the pod has the label. Invalid, naming the term, when a
// selector is malformed.
Result<PodAffinityTerms> PodAffinityTermsFromApi(const api::Affinity* affinity,
                                                 std::string_view pod_namespace,
                                                 const Labels& pod_labels);

}  // namespace podflow::scheduler
