// InterPodAffinity PreFilter and Filter.
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/framework/affinity_index.h"
#include "scheduler/plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kPreFilterKey = "PreFilterInterPodAffinity";

// The counts one term is checked against: a node's domain is its value of
// PreFilterState::keys[key]. `counts` points into the Snapshot's
// AffinityIndex or into PreFilterState::computed, which outlive the cycle's
// Filter calls.
struct DomainCheck {
  size_t key;
  const DomainCounts* counts;
};

struct PreFilterState {
  // The snapshot's nodes: a node of the snapshot reads its counts by
  // position (DomainCounts::by_node); others (copies) by label value.
  const NodeInfo* nodes = nullptr;
  size_t num_nodes = 0;
  // Filter must read node labels: an affinity check (a node without the
  // key fails) or counts without a by_node mirror.
  bool needs_labels = false;
  // The distinct topology keys of the checks below, so Filter reads each
  // node label once.
  std::vector<const std::string*> keys;
  // One per required affinity term, in order: pods matching all of them.
  std::vector<DomainCheck> affinity;
  // No pod anywhere matches all required affinity terms (in a domain).
  bool no_affinity_match = false;
  // The pod matches all its own required affinity terms.
  bool matches_own_affinity = false;
  // One per required anti-affinity term: pods matching it.
  std::vector<DomainCheck> anti_affinity;
  // One per running pods' anti-affinity term that matches this pod: where
  // the pods having it are.
  std::vector<DomainCheck> existing_anti_affinity;
  // Counts of terms the index does not track, computed for this cycle.
  // Reserved up front: DomainCheck points into it.
  std::vector<TermSetCounts> computed;

  size_t KeyIndex(const std::string& key) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (*keys[i] == key) return i;
    }
    keys.push_back(&key);
    return keys.size() - 1;
  }
};

const Labels kNoLabels;

// The tracked counts of `key`, or counts computed now into `state`.
const TermSetCounts& MatchCounts(const Snapshot& snapshot, const std::string& key,
                                 const std::vector<AffinityTerm>& terms, bool all,
                                 PreFilterState& state) {
  if (const TermSetCounts* tracked = snapshot.affinity().FindMatches(key); tracked != nullptr) {
    return *tracked;
  }
  state.computed.push_back(CountMatching(terms, all, snapshot));
  return state.computed.back();
}

// The count of the node's domain of `check`: by position when the counts
// mirror the snapshot's nodes, else by the node's label (values[key],
// nullptr: no label, no pods).
int64_t DomainCount(const DomainCheck& check, size_t position, size_t num_nodes,
                    const std::string* const* values) {
  if (position < num_nodes && check.counts->by_node.size() == num_nodes) {
    return check.counts->by_node[position];
  }
  const std::string* value = values[check.key];
  return value != nullptr ? CountOf(check.counts->by_value, *value) : 0;
}

}  // namespace

PreFilterResult InterPodAffinity::PreFilter(CycleState& cycle, const PodInfo& pod,
                                            const Snapshot& snapshot) const {
  const PodAffinityTerms& terms = pod.pod_affinity;
  auto state = std::make_shared<PreFilterState>();
  state->nodes = snapshot.nodes().data();
  state->num_nodes = snapshot.nodes().size();
  state->computed.reserve(1 + terms.required_anti_affinity.size());

  // Running pods' required anti-affinity terms that match this pod. A pod
  // in a namespace the snapshot does not know has no namespace labels.
  const Labels* ns_labels = snapshot.NamespaceLabels(pod.namespace_);
  for (const auto& [_, group] : snapshot.affinity().owner_groups()) {
    if (group.owners.empty()) continue;
    if (group.term.Matches(pod.namespace_, pod.labels, ns_labels != nullptr ? ns_labels : &kNoLabels)) {
      state->existing_anti_affinity.push_back(
          {state->KeyIndex(group.term.topology_key), &group.owners});
    }
  }

  if (!terms.required_affinity.empty()) {
    const TermSetCounts& counts = MatchCounts(snapshot, AffinityIndex::AffinityKey(terms),
                                              terms.required_affinity, /*all=*/true, *state);
    for (size_t i = 0; i < counts.terms.size(); ++i) {
      state->affinity.push_back({state->KeyIndex(counts.terms[i].topology_key), &counts.counts[i]});
    }
    state->no_affinity_match = counts.total == 0;
    state->matches_own_affinity = true;
    for (const AffinityTerm& t : terms.required_affinity) {
      state->matches_own_affinity &= t.Matches(pod.namespace_, pod.labels, ns_labels);
    }
  }
  for (const AffinityTerm& t : terms.required_anti_affinity) {
    const TermSetCounts& counts =
        MatchCounts(snapshot, AffinityIndex::AntiAffinityKey(t), {t}, /*all=*/false, *state);
    // No matching pod anywhere: the term rejects no node.
    if (counts.counts[0].empty()) continue;
    state->anti_affinity.push_back({state->KeyIndex(counts.terms[0].topology_key), &counts.counts[0]});
  }

  state->needs_labels = !state->affinity.empty();
  for (const auto* checks : {&state->anti_affinity, &state->existing_anti_affinity}) {
    for (const DomainCheck& check : *checks) {
      state->needs_labels |= check.counts->by_node.size() != state->num_nodes;
    }
  }

  // Nothing to check: Filter would pass every node (it does without a
  // state), so the runner need not call it.
  if (state->affinity.empty() && state->anti_affinity.empty() &&
      state->existing_anti_affinity.empty()) {
    return {PluginStatus::Skip(), std::nullopt};
  }
  cycle.Write<PreFilterState>(std::string(kPreFilterKey), std::move(state));
  return {};
}

PluginStatus InterPodAffinity::Filter(const CycleState& cycle, const PodInfo&,
                                      const NodeInfo& node) const {
  const PreFilterState* state = cycle.Read<PreFilterState>(kPreFilterKey);
  if (state == nullptr) return PluginStatus::Success();

  // The node's value of each topology key (nullptr: no such label).
  constexpr size_t kInlineKeys = 8;
  std::array<const std::string*, kInlineKeys> inline_values;
  std::vector<const std::string*> many_values;
  const std::string** values = inline_values.data();
  if (state->keys.size() > kInlineKeys) {
    many_values.resize(state->keys.size());
    values = many_values.data();
  }
  // The node's position in the snapshot, or num_nodes when it is a copy.
  size_t position = state->num_nodes;
  if (std::greater_equal<const NodeInfo*>()(&node, state->nodes) &&
      std::less<const NodeInfo*>()(&node, state->nodes + state->num_nodes)) {
    position = static_cast<size_t>(&node - state->nodes);
  }
  // Labels are read only when a check needs them.
  if (position == state->num_nodes || state->needs_labels) {
    for (size_t k = 0; k < state->keys.size(); ++k) {
      values[k] = FindLabel(node.labels, *state->keys[k]);
    }
  }

  if (!state->affinity.empty()) {
    bool pods_exist = true;
    for (const DomainCheck& check : state->affinity) {
      const std::string* value = values[check.key];
      if (value == nullptr) {
        return PluginStatus::UnschedulableAndUnresolvable(
            std::string(kErrReasonAffinityRulesNotMatch));
      }
      if (DomainCount(check, position, state->num_nodes, values) <= 0) pods_exist = false;
    }
    // The first pod of a group that selects itself may start it anywhere
    // its topology labels exist.
    if (!pods_exist && !(state->no_affinity_match && state->matches_own_affinity)) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonAffinityRulesNotMatch));
    }
  }
  for (const DomainCheck& check : state->anti_affinity) {
    if (DomainCount(check, position, state->num_nodes, values) > 0) {
      return PluginStatus::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
    }
  }
  for (const DomainCheck& check : state->existing_anti_affinity) {
    if (DomainCount(check, position, state->num_nodes, values) > 0) {
      return PluginStatus::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
