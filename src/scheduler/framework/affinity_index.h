// AffinityIndex: per-topology-domain counts for inter-pod affinity, kept up
// to date by the Snapshot as pods and nodes come and go, so that a
// scheduling cycle reads counts instead of walking every pod.
//
// Two kinds of counts, each keyed by a term's identity (AffinityTerm::key):
//  - owners: for each distinct required anti-affinity term of counted pods,
//    how many pods having it sit in each domain (the symmetric check: a
//    pod matching the term may not join those domains);
//  - matches: for each required affinity term set and each required
//    anti-affinity term some counted pod has, how many counted pods match
//    it in each domain. A pod to schedule usually has the terms of pods
//    already running (replicas of one workload), so its counts are here;
//    when not, CountMatching computes them by walking every pod.
// A term's groups live while some counted pod has the term.
//
// Thread safety: none; owned by the Snapshot, read through const methods
// during a cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scheduler/framework/labels.h"
#include "scheduler/framework/pod_affinity.h"

namespace podflow::scheduler {

class AffinityIndex;
class NodeInfo;
class Snapshot;
struct PodInfo;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Topology value -> count; only non-zero counts are present.
using ValueCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

// The count for `value`, 0 when absent.
inline int64_t CountOf(const ValueCounts& counts, std::string_view value) {
  auto it = counts.find(value);
  return it == counts.end() ? 0 : it->second;
}

// Adds `delta` to the count of `value`, dropping it at 0.
void AddCount(ValueCounts& counts, std::string_view value, int64_t delta);

// Which nodes (positions in Snapshot::nodes()) lie in each domain of one
// topology key.
using DomainNodes = std::unordered_map<std::string, std::vector<uint32_t>, StringHash, std::equal_to<>>;

// Pod counts per domain of one topology key. by_node, when not empty,
// mirrors by_value per node position in Snapshot::nodes() (0 for a node
// without the label), so a filter reads a node's count without hashing;
// the AffinityIndex keeps it for the counts it owns.
struct DomainCounts {
  ValueCounts by_value;
  std::vector<int32_t> by_node;

  bool empty() const { return by_value.empty(); }
  // Adds `delta` in domain `value`; `nodes` (nullable) are the nodes of
  // that key's domains, whose by_node entries follow.
  void Add(std::string_view value, int64_t delta, const DomainNodes* nodes);
};

// Counts of pods matching a term set, per domain of each term.
struct TermSetCounts {
  std::vector<AffinityTerm> terms;
  // A pod counts when it matches every term (required affinity: then it
  // counts in each term's domain); otherwise terms has one entry.
  bool all = false;
  std::vector<DomainCounts> counts;  // one per term, keyed by its topology value
  int64_t total = 0;                 // sum of every count

  // Counts `pod`, in a namespace with `ns_labels` (nullptr: unknown), on a
  // node with `node_labels`, `sign` times (+1 add, -1 remove). `domains`
  // (nullable) finds each term's DomainNodes, to keep by_node.
  void Count(const PodInfo& pod, const Labels* ns_labels, const Labels& node_labels, int64_t sign,
             const AffinityIndex* domains = nullptr);
  // Clears and counts every pod of `snapshot` (by_value only).
  void Recount(const Snapshot& snapshot);
};

// Builds the counts of `terms` (all: see TermSetCounts) over every pod of
// `snapshot`. Walks every pod.
TermSetCounts CountMatching(std::vector<AffinityTerm> terms, bool all, const Snapshot& snapshot);

class AffinityIndex {
 public:
  struct OwnerGroup {
    AffinityTerm term;
    DomainCounts owners;  // pods having the term as required anti-affinity, per domain
    int64_t refs = 0;     // such pods counted anywhere (with or without the label)
  };

  // Key of the matches of a pod's required affinity terms (as a whole) and
  // of one required anti-affinity term.
  static std::string AffinityKey(const PodAffinityTerms& terms);
  static std::string AntiAffinityKey(const AffinityTerm& term);

  // `pod` is now counted on `node` (REQUIRES: node.pods() holds it).
  void AddPod(const PodInfo& pod, const NodeInfo& node, const Snapshot& snapshot);
  // `pod` on `node` is no longer counted (node may still list it).
  void RemovePod(const PodInfo& pod, const NodeInfo& node, const Snapshot& snapshot);
  // The node at `position` of the snapshot's nodes, `before`, now has
  // `after`'s labels (before.pods() are its pods).
  void RelabelNode(size_t position, const NodeInfo& before, const NodeInfo& after,
                   const Snapshot& snapshot);
  // Some namespace's labels changed: recounts what namespace selectors decide.
  void NamespacesChanged(const Snapshot& snapshot);
  // A node was appended to the snapshot's nodes (at position nodes.size()-1).
  void NodeAdded(const Snapshot& snapshot);
  // The node at `position` was erased from the snapshot's nodes (its pods
  // removed before).
  void NodeRemoved(size_t position);

  // The nodes of each domain of `topology_key`, or nullptr when no counted
  // term uses that key.
  const DomainNodes* Domains(std::string_view topology_key) const;

  const std::unordered_map<std::string, OwnerGroup, StringHash, std::equal_to<>>& owner_groups()
      const {
    return owners_;
  }
  // The tracked matches of that key, or nullptr.
  const TermSetCounts* FindMatches(std::string_view key) const;
  // Counted pods with terms that can add to another pod's score (required
  // affinity, preferred affinity or anti-affinity).
  int64_t scoring_pods() const { return scoring_pods_; }

 private:
  struct Tracked {
    TermSetCounts counts;
    int64_t refs = 0;
  };
  // Counts or uncounts `pod` on a node with `node_labels` everywhere.
  void Count(const PodInfo& pod, const Labels& node_labels, const Snapshot& snapshot, int64_t sign);
  void Track(const std::string& key, std::vector<AffinityTerm> terms, bool all,
             const Snapshot& snapshot);
  void Untrack(const std::string& key);
  // A counted term starts / stops using `topology_key`.
  void UseKey(const std::string& topology_key, const Snapshot& snapshot);
  void UnuseKey(const std::string& topology_key);
  // Rebuilds by_node of `counts` for the key `topology_key`.
  void Mirror(DomainCounts& counts, const std::string& topology_key, const Snapshot& snapshot) const;
  // Every DomainCounts the index owns, with its topology key.
  template <typename F>
  void ForEachCounts(F&& f);

  struct KeyDomains {
    DomainNodes nodes;
    int64_t refs = 0;
  };
  std::unordered_map<std::string, KeyDomains, StringHash, std::equal_to<>> domains_;

  std::unordered_map<std::string, OwnerGroup, StringHash, std::equal_to<>> owners_;
  std::unordered_map<std::string, Tracked, StringHash, std::equal_to<>> matches_;
  int64_t scoring_pods_ = 0;
};

}  // namespace podflow::scheduler
