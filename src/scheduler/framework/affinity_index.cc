#include "scheduler/framework/affinity_index.h"

#include <algorithm>

#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"

namespace podflow::scheduler {
namespace {

bool CanScore(const PodAffinityTerms& a) {
  return !a.required_affinity.empty() || !a.preferred_affinity.empty() ||
         !a.preferred_anti_affinity.empty();
}

}  // namespace

void AddCount(ValueCounts& counts, std::string_view value, int64_t delta) {
  auto it = counts.find(value);
  if (it == counts.end()) {
    if (delta != 0) counts.emplace(std::string(value), delta);
    return;
  }
  it->second += delta;
  if (it->second == 0) counts.erase(it);
}

void DomainCounts::Add(std::string_view value, int64_t delta, const DomainNodes* nodes) {
  AddCount(by_value, value, delta);
  if (nodes == nullptr || by_node.empty()) return;
  auto it = nodes->find(value);
  if (it == nodes->end()) return;
  for (uint32_t n : it->second) by_node[n] += static_cast<int32_t>(delta);
}

void TermSetCounts::Count(const PodInfo& pod, const Labels* ns_labels, const Labels& node_labels,
                          int64_t sign, const AffinityIndex* index) {
  if (terms.empty()) return;
  for (const AffinityTerm& t : terms) {
    if (!t.Matches(pod.namespace_, pod.labels, ns_labels)) return;
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string* value = FindLabel(node_labels, terms[i].topology_key);
    if (value == nullptr) continue;
    counts[i].Add(*value, sign, index != nullptr ? index->Domains(terms[i].topology_key) : nullptr);
    total += sign;
  }
}

void TermSetCounts::Recount(const Snapshot& snapshot) {
  counts.assign(terms.size(), DomainCounts());
  total = 0;
  for (const NodeInfo& node : snapshot.nodes()) {
    for (const auto& pod : node.pods()) {
      Count(*pod, snapshot.NamespaceLabels(pod->namespace_), node.labels, 1);
    }
  }
}

TermSetCounts CountMatching(std::vector<AffinityTerm> terms, bool all, const Snapshot& snapshot) {
  TermSetCounts out;
  out.terms = std::move(terms);
  out.all = all;
  out.Recount(snapshot);
  return out;
}

std::string AffinityIndex::AffinityKey(const PodAffinityTerms& terms) {
  return "A" + terms.required_affinity_key;
}

std::string AffinityIndex::AntiAffinityKey(const AffinityTerm& term) { return "N" + term.key; }

const TermSetCounts* AffinityIndex::FindMatches(std::string_view key) const {
  auto it = matches_.find(key);
  return it == matches_.end() ? nullptr : &it->second.counts;
}

const DomainNodes* AffinityIndex::Domains(std::string_view topology_key) const {
  auto it = domains_.find(topology_key);
  return it == domains_.end() ? nullptr : &it->second.nodes;
}

void AffinityIndex::UseKey(const std::string& topology_key, const Snapshot& snapshot) {
  auto [it, inserted] = domains_.try_emplace(topology_key);
  ++it->second.refs;
  if (!inserted) return;
  const auto& nodes = snapshot.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string* value = FindLabel(nodes[i].labels, topology_key);
    if (value != nullptr) it->second.nodes[*value].push_back(static_cast<uint32_t>(i));
  }
}

void AffinityIndex::UnuseKey(const std::string& topology_key) {
  auto it = domains_.find(topology_key);
  if (it != domains_.end() && --it->second.refs <= 0) domains_.erase(it);
}

void AffinityIndex::Mirror(DomainCounts& counts, const std::string& topology_key,
                           const Snapshot& snapshot) const {
  counts.by_node.assign(snapshot.nodes().size(), 0);
  const DomainNodes* domains = Domains(topology_key);
  if (domains == nullptr) return;
  for (const auto& [value, count] : counts.by_value) {
    auto it = domains->find(value);
    if (it == domains->end()) continue;
    for (uint32_t n : it->second) counts.by_node[n] = static_cast<int32_t>(count);
  }
}

template <typename F>
void AffinityIndex::ForEachCounts(F&& f) {
  for (auto& [_, group] : owners_) f(group.owners, group.term.topology_key);
  for (auto& [_, tracked] : matches_) {
    for (size_t i = 0; i < tracked.counts.terms.size(); ++i) {
      f(tracked.counts.counts[i], tracked.counts.terms[i].topology_key);
    }
  }
}

void AffinityIndex::Count(const PodInfo& pod, const Labels& node_labels, const Snapshot& snapshot,
                          int64_t sign) {
  for (const AffinityTerm& t : pod.pod_affinity.required_anti_affinity) {
    auto it = owners_.find(t.key);
    if (it == owners_.end()) continue;  // AddPod creates it first
    const std::string* value = FindLabel(node_labels, t.topology_key);
    if (value != nullptr) it->second.owners.Add(*value, sign, Domains(t.topology_key));
  }
  if (matches_.empty()) return;
  const Labels* ns_labels = snapshot.NamespaceLabels(pod.namespace_);
  for (auto& [_, tracked] : matches_) tracked.counts.Count(pod, ns_labels, node_labels, sign, this);
}

void AffinityIndex::Track(const std::string& key, std::vector<AffinityTerm> terms, bool all,
                          const Snapshot& snapshot) {
  auto it = matches_.find(key);
  if (it != matches_.end()) {
    ++it->second.refs;
    return;
  }
  Tracked t;
  t.counts = CountMatching(std::move(terms), all, snapshot);
  t.refs = 1;
  for (size_t i = 0; i < t.counts.terms.size(); ++i) {
    UseKey(t.counts.terms[i].topology_key, snapshot);
    Mirror(t.counts.counts[i], t.counts.terms[i].topology_key, snapshot);
  }
  matches_.emplace(key, std::move(t));
}

void AffinityIndex::Untrack(const std::string& key) {
  auto it = matches_.find(key);
  if (it == matches_.end() || --it->second.refs > 0) return;
  for (const AffinityTerm& t : it->second.counts.terms) UnuseKey(t.topology_key);
  matches_.erase(it);
}

void AffinityIndex::AddPod(const PodInfo& pod, const NodeInfo& node, const Snapshot& snapshot) {
  const PodAffinityTerms& a = pod.pod_affinity;
  if (CanScore(a)) ++scoring_pods_;
  for (const AffinityTerm& t : a.required_anti_affinity) {
    auto [it, inserted] = owners_.try_emplace(t.key);
    if (inserted) {
      it->second.term = t;
      UseKey(t.topology_key, snapshot);
      Mirror(it->second.owners, t.topology_key, snapshot);
    }
    ++it->second.refs;
  }
  // Count into the groups that exist, then track this pod's own terms: a
  // group created now counts every pod, this one included.
  Count(pod, node.labels, snapshot, 1);
  if (!a.required_affinity.empty()) {
    Track(AffinityKey(a), a.required_affinity, /*all=*/true, snapshot);
  }
  for (const AffinityTerm& t : a.required_anti_affinity) {
    Track(AntiAffinityKey(t), {t}, /*all=*/false, snapshot);
  }
}

void AffinityIndex::RemovePod(const PodInfo& pod, const NodeInfo& node, const Snapshot& snapshot) {
  Count(pod, node.labels, snapshot, -1);
  const PodAffinityTerms& a = pod.pod_affinity;
  if (CanScore(a)) --scoring_pods_;
  for (const AffinityTerm& t : a.required_anti_affinity) {
    auto it = owners_.find(t.key);
    if (it != owners_.end() && --it->second.refs <= 0) {
      UnuseKey(t.topology_key);
      owners_.erase(it);
    }
  }
  if (!a.required_affinity.empty()) Untrack(AffinityKey(a));
  for (const AffinityTerm& t : a.required_anti_affinity) Untrack(AntiAffinityKey(t));
}

void AffinityIndex::RelabelNode(size_t position, const NodeInfo& before, const NodeInfo& after,
                                const Snapshot& snapshot) {
  if (before.labels == after.labels) return;
  for (const auto& pod : before.pods()) Count(*pod, before.labels, snapshot, -1);
  const auto pos = static_cast<uint32_t>(position);
  for (auto& [key, domains] : domains_) {
    if (const std::string* old = FindLabel(before.labels, key); old != nullptr) {
      auto it = domains.nodes.find(*old);
      if (it != domains.nodes.end()) {
        std::erase(it->second, pos);
        if (it->second.empty()) domains.nodes.erase(it);
      }
    }
    if (const std::string* now = FindLabel(after.labels, key); now != nullptr) {
      domains.nodes[*now].push_back(pos);
    }
  }
  ForEachCounts([&](DomainCounts& c, const std::string& key) {
    if (position >= c.by_node.size()) return;
    const std::string* value = FindLabel(after.labels, key);
    c.by_node[position] = value != nullptr ? static_cast<int32_t>(CountOf(c.by_value, *value)) : 0;
  });
  for (const auto& pod : before.pods()) Count(*pod, after.labels, snapshot, 1);
}

void AffinityIndex::NodeAdded(const Snapshot& snapshot) {
  const auto& nodes = snapshot.nodes();
  if (nodes.empty()) return;
  const size_t position = nodes.size() - 1;
  const NodeInfo& node = nodes.back();
  for (auto& [key, domains] : domains_) {
    if (const std::string* value = FindLabel(node.labels, key); value != nullptr) {
      domains.nodes[*value].push_back(static_cast<uint32_t>(position));
    }
  }
  ForEachCounts([&](DomainCounts& c, const std::string& key) {
    const std::string* value = FindLabel(node.labels, key);
    c.by_node.resize(position + 1, 0);
    c.by_node[position] = value != nullptr ? static_cast<int32_t>(CountOf(c.by_value, *value)) : 0;
  });
}

void AffinityIndex::NodeRemoved(size_t position) {
  const auto pos = static_cast<uint32_t>(position);
  for (auto& [_, domains] : domains_) {
    for (auto it = domains.nodes.begin(); it != domains.nodes.end();) {
      std::erase(it->second, pos);
      for (uint32_t& n : it->second) {
        if (n > pos) --n;
      }
      it = it->second.empty() ? domains.nodes.erase(it) : std::next(it);
    }
  }
  ForEachCounts([&](DomainCounts& c, const std::string&) {
    if (position < c.by_node.size()) c.by_node.erase(c.by_node.begin() + static_cast<std::ptrdiff_t>(position));
  });
}

void AffinityIndex::NamespacesChanged(const Snapshot& snapshot) {
  for (auto& [_, tracked] : matches_) {
    bool selects = false;
    for (const AffinityTerm& t : tracked.counts.terms) {
      selects |= !t.namespace_selector.MatchesNothing() && !t.namespace_selector.MatchesEverything();
    }
    if (!selects) continue;
    tracked.counts.Recount(snapshot);
    for (size_t i = 0; i < tracked.counts.terms.size(); ++i) {
      Mirror(tracked.counts.counts[i], tracked.counts.terms[i].topology_key, snapshot);
    }
  }
}

}  // namespace podflow::scheduler
