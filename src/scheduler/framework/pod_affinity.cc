#include "scheduler/framework/pod_affinity.h"

#include <algorithm>

namespace podflow::scheduler {
namespace {

using Terms = flatbuffers::Vector<flatbuffers::Offset<api::PodAffinityTerm>>;
using WeightedTerms = flatbuffers::Vector<flatbuffers::Offset<api::WeightedPodAffinityTerm>>;

// Separators that no label key, value or namespace name can contain.
constexpr char kFieldSeparator = '\x1f';
constexpr char kTermSeparator = '\x1e';

Result<AffinityTerm> Term(const api::PodAffinityTerm& t, std::string_view pod_namespace,
                          const Labels& pod_labels, const std::string& where) {
  AffinityTerm out;
  auto selector = LabelSelector::FromApi(t.label_selector());
  if (!selector.ok()) return Status::Invalid(where + ".labelSelector." + selector.status().message());
  out.selector = std::move(selector).value();
  // matchLabelKeys / mismatchLabelKeys only refine a selector the term has.
  if (t.label_selector() != nullptr) {
    auto refine = [&](const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* keys,
                      api::LabelSelectorOperator op) {
      if (keys == nullptr) return;
      for (const flatbuffers::String* k : *keys) {
        const std::string* value = FindLabel(pod_labels, k->string_view());
        if (value != nullptr) out.selector.Add({k->str(), op, {*value}});
      }
    };
    refine(t.match_label_keys(), api::LabelSelectorOperator::In);
    refine(t.mismatch_label_keys(), api::LabelSelectorOperator::NotIn);
  }
  auto ns_selector = LabelSelector::FromApi(t.namespace_selector());
  if (!ns_selector.ok()) {
    return Status::Invalid(where + ".namespaceSelector." + ns_selector.status().message());
  }
  out.namespace_selector = std::move(ns_selector).value();
  if (t.namespaces() != nullptr) {
    for (const flatbuffers::String* ns : *t.namespaces()) out.namespaces.push_back(ns->str());
  }
  if (out.namespaces.empty() && t.namespace_selector() == nullptr) {
    out.namespaces.emplace_back(pod_namespace);
  }
  std::sort(out.namespaces.begin(), out.namespaces.end());
  out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()),
                       out.namespaces.end());
  if (t.topology_key() != nullptr) out.topology_key = t.topology_key()->str();

  out.key = out.topology_key;
  out.key += kFieldSeparator;
  for (const std::string& ns : out.namespaces) out.key += ns + ",";
  out.key += kFieldSeparator;
  out.key += out.namespace_selector.String();
  out.key += kFieldSeparator;
  out.key += out.selector.String();
  return out;
}

Status ParseTerms(const Terms* terms, std::string_view pod_namespace, const Labels& pod_labels,
                  const std::string& field, std::vector<AffinityTerm>& out) {
  if (terms == nullptr) return Status::Ok();
  for (flatbuffers::uoffset_t i = 0; i < terms->size(); ++i) {
    auto term = Term(*terms->Get(i), pod_namespace, pod_labels, field + "[" + std::to_string(i) + "]");
    if (!term.ok()) return term.status();
    out.push_back(std::move(term).value());
  }
  return Status::Ok();
}

Status ParseWeighted(const WeightedTerms* terms, std::string_view pod_namespace,
                     const Labels& pod_labels, const std::string& field,
                     std::vector<WeightedAffinityTerm>& out) {
  if (terms == nullptr) return Status::Ok();
  for (flatbuffers::uoffset_t i = 0; i < terms->size(); ++i) {
    const api::WeightedPodAffinityTerm* w = terms->Get(i);
    const std::string where = field + "[" + std::to_string(i) + "].podAffinityTerm";
    if (w->pod_affinity_term() == nullptr) return Status::Invalid(where + ": required");
    auto term = Term(*w->pod_affinity_term(), pod_namespace, pod_labels, where);
    if (!term.ok()) return term.status();
    out.push_back(WeightedAffinityTerm{w->weight(), std::move(term).value()});
  }
  return Status::Ok();
}

}  // namespace

bool AffinityTerm::Matches(std::string_view ns, const Labels& labels,
                           const Labels* ns_labels) const {
  const bool in_namespace =
      std::binary_search(namespaces.begin(), namespaces.end(), ns, std::less<>()) ||
      namespace_selector.MatchesEverything() ||
      (ns_labels != nullptr && namespace_selector.Matches(*ns_labels));
  return in_namespace && selector.Matches(labels);
}

Result<PodAffinityTerms> PodAffinityTermsFromApi(const api::Affinity* affinity,
                                                 std::string_view pod_namespace,
                                                 const Labels& pod_labels) {
  PodAffinityTerms out;
  if (affinity == nullptr) return out;
  const std::string base = "spec.affinity.";
  // podAffinity and podAntiAffinity are distinct tables of the same shape.
  auto parse = [&](const auto* a, const std::string& field, std::vector<AffinityTerm>& required,
                   auto& preferred) -> Status {
    if (a == nullptr) return Status::Ok();
    out.declared = true;
    PODFLOW_RETURN_IF_ERROR(ParseTerms(a->required_during_scheduling_ignored_during_execution(),
                                       pod_namespace, pod_labels,
                                       field + "requiredDuringSchedulingIgnoredDuringExecution", required));
    return ParseWeighted(a->preferred_during_scheduling_ignored_during_execution(), pod_namespace, pod_labels,
                         field + "preferredDuringSchedulingIgnoredDuringExecution", preferred);
  };
  PODFLOW_RETURN_IF_ERROR(parse(affinity->pod_affinity(), base + "podAffinity.", out.required_affinity,
                                out.preferred_affinity));
  PODFLOW_RETURN_IF_ERROR(parse(affinity->pod_anti_affinity(), base + "podAntiAffinity.",
                                out.required_anti_affinity, out.preferred_anti_affinity));
  for (const AffinityTerm& t : out.required_affinity) {
    out.required_affinity_key += t.key;
    out.required_affinity_key += kTermSeparator;
  }
  return out;
}

}  // namespace podflow::scheduler
