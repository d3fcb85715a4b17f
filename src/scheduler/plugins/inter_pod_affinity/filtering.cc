// InterPodAffinity PreFilter and Filter.
#include <algorithm>
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
  // Which pods the counts count, to adjust them on a copy of a node: pods
  // matching `set` (all its terms, or its one term), or pods having
  // `owner_term` as a required anti-affinity term (once per occurrence).
  const TermSetCounts* set = nullptr;
  const AffinityTerm* owner_term = nullptr;
};

struct PreFilterState {
  // The snapshot's nodes: a node of the snapshot reads its counts by
  // position (DomainCounts::by_node); others (copies) by label value,
  // adjusted for the pods the copy has and the snapshot's node has not, or
  // the reverse (kube-scheduler's PreFilter extensions AddPod / RemovePod:
  // preemption's node without its victims, a node with nominated pods).
  const Snapshot* snapshot = nullptr;
  const NodeInfo* nodes = nullptr;
  size_t num_nodes = 0;
  // Pods matching all required affinity terms, anywhere.
  int64_t affinity_total = 0;
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

bool MatchesTerm(const AffinityTerm& term, const PodInfo& pod, const Snapshot& snapshot) {
  return term.Matches(pod.namespace_, pod.labels, snapshot.NamespaceLabels(pod.namespace_));
}

// How many times `pod` is counted by `check`.
int64_t CountedBy(const DomainCheck& check, const PodInfo& pod, const Snapshot& snapshot) {
  if (check.set != nullptr) {
    // A set counts pods matching every one of its terms.
    for (const AffinityTerm& t : check.set->terms) {
      if (!MatchesTerm(t, pod, snapshot)) return 0;
    }
    return 1;
  }
  int64_t n = 0;
  for (const AffinityTerm& t : pod.pod_affinity.required_anti_affinity) n += t.key == check.owner_term->key;
  return n;
}

// A copy of a snapshot node: the pods it has that the snapshot's node has
// not (added) and the reverse (removed).
struct PodChanges {
  std::vector<const PodInfo*> added;
  std::vector<const PodInfo*> removed;
};

PodChanges ChangesOf(const NodeInfo& copy, const Snapshot& snapshot) {
  PodChanges out;
  const NodeInfo* original = snapshot.FindNode(copy.name);
  auto has = [](const NodeInfo& node, const std::string& uid) {
    return std::any_of(node.pods().begin(), node.pods().end(), [&](const auto& p) { return p->uid == uid; });
  };
  for (const auto& p : copy.pods()) {
    if (original == nullptr || !has(*original, p->uid)) out.added.push_back(p.get());
  }
  if (original != nullptr) {
    for (const auto& p : original->pods()) {
      if (!has(copy, p->uid)) out.removed.push_back(p.get());
    }
  }
  return out;
}

// What the copy's changes add to `check`'s count: the added pods it counts,
// less the removed ones.
int64_t NetCounted(const DomainCheck& check, const PodChanges& changes, const Snapshot& snapshot) {
  int64_t net = 0;
  for (const PodInfo* p : changes.added) net += CountedBy(check, *p, snapshot);
  for (const PodInfo* p : changes.removed) net -= CountedBy(check, *p, snapshot);
  return net;
}

// The count of the copy's domain for `check`: the snapshot's, adjusted by
// the copy's changes.
int64_t CopyDomainCount(const DomainCheck& check, const std::string* const* values, const PodChanges& changes,
                        const Snapshot& snapshot) {
  if (values[check.key] == nullptr) return 0;
  return CountOf(check.counts->by_value, *values[check.key]) + NetCounted(check, changes, snapshot);
}

}  // namespace

PreFilterResult InterPodAffinity::PreFilter(CycleState& cycle, const PodInfo& pod,
                                            const Snapshot& snapshot) const {
  const PodAffinityTerms& terms = pod.pod_affinity;
  auto state = std::make_shared<PreFilterState>();
  state->snapshot = &snapshot;
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
          {state->KeyIndex(group.term.topology_key), &group.owners, nullptr, &group.term});
    }
  }

  if (!terms.required_affinity.empty()) {
    const TermSetCounts& counts = MatchCounts(snapshot, AffinityIndex::AffinityKey(terms),
                                              terms.required_affinity, /*all=*/true, *state);
    for (size_t i = 0; i < counts.terms.size(); ++i) {
      state->affinity.push_back({state->KeyIndex(counts.terms[i].topology_key), &counts.counts[i], &counts});
    }
    state->affinity_total = counts.total;
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
    state->anti_affinity.push_back({state->KeyIndex(counts.terms[0].topology_key), &counts.counts[0], &counts});
  }

  state->needs_labels = !state->affinity.empty();
  for (const auto* checks : {&state->anti_affinity, &state->existing_anti_affinity}) {
    for (const DomainCheck& check : *checks) {
      state->needs_labels |= check.counts->by_node.size() != state->num_nodes;
    }
  }

  // No required term of its own and no running pod's anti-affinity against
  // it: Filter would pass every node, a copy with nominated pods added
  // included (it does without a state), so the runner need not call it. A
  // pod with terms keeps the Filter even when nothing matches them yet, so
  // that a pod nominated to a node is seen (kube-scheduler skips the same).
  if (terms.required_affinity.empty() && terms.required_anti_affinity.empty() &&
      state->existing_anti_affinity.empty()) {
    return {PluginStatus::Skip(), std::nullopt};
  }
  cycle.Write<PreFilterState>(std::string(kPreFilterKey), std::move(state));
  return {};
}

PluginStatus InterPodAffinity::Filter(const CycleState& cycle, const PodInfo& pod,
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

  // A copy of a node counts the pods it gained or lost against the
  // snapshot's node (its domains are the original's: a copy keeps labels).
  const bool copy = position == state->num_nodes;
  PodChanges changes;
  if (copy) changes = ChangesOf(node, *state->snapshot);
  auto count = [&](const DomainCheck& check) {
    return copy ? CopyDomainCount(check, values, changes, *state->snapshot)
                : DomainCount(check, position, state->num_nodes, values);
  };
  // Whether `term`, held by a pod on this node, matches `subject` here.
  auto holds_here = [&](const AffinityTerm& term, const PodInfo& subject) {
    return FindLabel(node.labels, term.topology_key) != nullptr && MatchesTerm(term, subject, *state->snapshot);
  };
  // Running pods' terms are matched against this pod as PreFilter does.
  const Labels* own_ns = state->snapshot->NamespaceLabels(pod.namespace_);
  auto existing_holds_here = [&](const AffinityTerm& term) {
    return FindLabel(node.labels, term.topology_key) != nullptr &&
           term.Matches(pod.namespace_, pod.labels, own_ns != nullptr ? own_ns : &kNoLabels);
  };

  if (!state->affinity.empty()) {
    bool pods_exist = true;
    for (const DomainCheck& check : state->affinity) {
      const std::string* value = values[check.key];
      if (value == nullptr) {
        return PluginStatus::UnschedulableAndUnresolvable(
            std::string(kErrReasonAffinityRulesNotMatch));
      }
      if (count(check) <= 0) pods_exist = false;
    }
    bool none_anywhere = state->no_affinity_match;
    if (copy) {
      // The total sums every term's counts: a matching pod on this node (it
      // has every term's key, checked above) counts once per term.
      const int64_t per_pod = static_cast<int64_t>(state->affinity.size());
      const int64_t total = state->affinity_total + per_pod * NetCounted(state->affinity[0], changes, *state->snapshot);
      none_anywhere = total == 0;
    }
    // The first pod of a group that selects itself may start it anywhere
    // its topology labels exist.
    if (!pods_exist && !(none_anywhere && state->matches_own_affinity)) {
      return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonAffinityRulesNotMatch));
    }
  }
  for (const DomainCheck& check : state->anti_affinity) {
    if (count(check) > 0) return PluginStatus::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
  }
  // Added pods may match terms no counted pod matches (PreFilter kept no
  // check for those).
  for (const PodInfo* added : changes.added) {
    for (const AffinityTerm& t : pod.pod_affinity.required_anti_affinity) {
      if (holds_here(t, *added)) {
        return PluginStatus::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
      }
    }
  }
  for (const DomainCheck& check : state->existing_anti_affinity) {
    if (count(check) > 0) {
      return PluginStatus::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
    }
  }
  for (const PodInfo* added : changes.added) {
    for (const AffinityTerm& t : added->pod_affinity.required_anti_affinity) {
      if (existing_holds_here(t)) {
        return PluginStatus::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
      }
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
