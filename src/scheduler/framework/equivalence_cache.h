// EquivalenceCache: filter verdicts and raw scores remembered per class of
// equivalent pods and per node state, so that a cycle for a pod like the
// last one re-runs plugins only on the nodes that changed since (the idea
// of kube-scheduler's equivalence class cache, and of its opportunistic
// batching of pods with one signature).
//
// Why reuse is exact: two pods are equivalent when EquivalenceSignature
// gives both the same bytes, i.e. they differ only in what names them. A
// node-local plugin (plugin.h, kNodeLocal) decides Filter and Score from the
// pod's signature, the node's state (NodeGeneration) and the objects that
// are not pods (ObjectsGeneration). Any other plugin must have answered
// Skip at PreFilter / PreScore for the cycle to read or fill the cache; a
// skipped plugin passes every node and scores none. The cache is therefore
// consulted only when every filter (score) plugin the cycle runs is
// node-local, and an entry is used only while the node's generation, the
// objects generation and the set of skipped plugins are those it was made
// under. Nodes with nominated pods are evaluated afresh every time.
//
// `podflow-bench scheduler` compares cached and uncached decisions over
// whole runs; tests/unit/scheduler/equivalence_cache_test.cc does the same
// over every plugin family.
//
// Thread safety: none; one cycle at a time uses a cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/status.h"

namespace podflow::scheduler {

class Profile;

// The bytes of everything a plugin may read of `pod` except what names it
// (name, uid, and start time, which only preemption's victim order reads).
// Equal signatures: equivalent pods.
std::string EquivalenceSignature(const PodInfo& pod);

class EquivalenceCache {
 public:
  // One cache serves one profile (its plugins' order defines the score
  // columns). `max_classes`: how many signatures are remembered at once,
  // the least recently used one making room.
  explicit EquivalenceCache(const Profile& profile, size_t max_classes = 4);

  const Profile& profile() const { return *profile_; }

  // What one class remembers per node position of the snapshot.
  struct Class {
    std::string signature;
    uint64_t objects_generation = 0;
    uint64_t filter_skips = 0;  // bit i: filter_plugins()[i] was skipped
    uint64_t score_skips = 0;   // bit p: score_plugins()[p] was skipped
    uint64_t last_used = 0;
    std::vector<uint64_t> node_generation;  // 0: nothing remembered
    std::vector<PluginStatus> verdict;
    std::vector<uint8_t> scored;  // raw holds this node's row
    std::vector<int64_t> raw;     // node position * score plugins + plugin
  };

  // The class for `signature`, made ready for a cycle over `num_nodes`
  // nodes at `objects_generation` with `filter_skips`: entries made under
  // anything else are dropped.
  Class& Acquire(const std::string& signature, size_t num_nodes, uint64_t objects_generation,
                 uint64_t filter_skips);
  // Drops the class's scores when they were made with other skipped score
  // plugins.
  void SetScoreSkips(Class& c, uint64_t score_skips) const;

  // Cycles that found their class / had to start one (for the benchmark).
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  const Profile* profile_;
  size_t max_classes_;
  std::vector<Class> classes_;
  uint64_t clock_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace podflow::scheduler
