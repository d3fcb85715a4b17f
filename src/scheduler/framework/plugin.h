// Plugins and their extension points, as C++20 concepts. A plugin is a type
// with a static kName and const, pure member functions, one per extension
// point it implements; it ends with static_assert(FilterPlugin<P>) (or
// whichever it models). No plugin logs, times itself or touches the bus:
// the runner owns that (kubernetes framework/interface.go).
//
// Extension points the runner calls, in cycle order: PreFilter (for plugins
// of the profile's filter list), Filter, PostFilter (when no node is
// feasible), PreScore (for plugins of the score list), Score (+
// NormalizeScore). Reserve / Unreserve are declared for volume binding.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/framework/status.h"

namespace podflow::scheduler {

inline constexpr int64_t kMinNodeScore = 0;
inline constexpr int64_t kMaxNodeScore = 100;

template <typename P>
concept Plugin = requires {
  { P::kName } -> std::convertible_to<std::string_view>;
};

// A node-local plugin declares `static constexpr bool kNodeLocal = true;`:
// its Filter verdict and raw Score on a node are functions of the pod's
// EquivalenceSignature, of that node (NodeInfo, pods counted on it included)
// and of the snapshot's objects that are not pods (nodes, volumes, claims,
// Services, Namespaces), whatever its PreFilter / PreScore wrote. The
// runner may then reuse them for an equivalent pod on an unchanged node
// (equivalence_cache.h). A plugin reading pods on other nodes (inter-pod
// affinity, spreading, ReadWriteOncePod claims) must not declare it; it
// keeps the cache usable only for the pods it answers Skip for.
template <typename P>
constexpr bool IsNodeLocal() {
  if constexpr (requires { P::kNodeLocal; }) {
    return P::kNodeLocal;
  } else {
    return false;
  }
}

// Filter: may the pod run on this node? Success, or a rejection with reasons.
template <typename P>
concept FilterPlugin = Plugin<P> && requires(const P& p, const CycleState& state,
                                              const PodInfo& pod, const NodeInfo& node) {
  { p.Filter(state, pod, node) } -> std::same_as<PluginStatus>;
};

// Score: how good is this feasible node? Any int64; after NormalizeScore (or
// directly, without it) it must lie in [kMinNodeScore, kMaxNodeScore].
template <typename P>
concept ScorePlugin = Plugin<P> && requires(const P& p, const CycleState& state,
                                             const PodInfo& pod, const NodeInfo& node) {
  { p.Score(state, pod, node) } -> std::same_as<int64_t>;
};

// NormalizeScore: rescales all feasible nodes' scores at once, in place.
template <typename P>
concept NormalizeScorePlugin =
    ScorePlugin<P> && requires(const P& p, const PodInfo& pod, std::span<int64_t> scores) {
      { p.NormalizeScore(pod, scores) } -> std::same_as<void>;
    };

// A PreFilter answering PluginStatus::Skip() has nothing to check for this
// pod: its Filter would pass every node, any copy of a node included, and
// the runner does not call it this cycle (kube-scheduler's Skip). A PreScore
// answering Skip scores no node: its Score is not called and every node
// gets 0 from it.
struct PreFilterResult {
  PluginStatus status;
  // When set, only these nodes can fit (e.g. NodeAffinity on metadata.name).
  std::optional<std::vector<std::string>> node_names;
};

// PreFilter: once per cycle before any Filter; may write CycleState.
template <typename P>
concept PreFilterPlugin = Plugin<P> && requires(const P& p, CycleState& state, const PodInfo& pod,
                                                 const Snapshot& snapshot) {
  { p.PreFilter(state, pod, snapshot) } -> std::same_as<PreFilterResult>;
};

// PreScore: once per cycle over the feasible nodes before any Score; the
// snapshot is there for plugins that count pods on every node (topology
// domains), feasible or not.
template <typename P>
concept PreScorePlugin = Plugin<P> && requires(const P& p, CycleState& state, const PodInfo& pod,
                                                const Snapshot& snapshot,
                                                std::span<const NodeInfo* const> feasible) {
  { p.PreScore(state, pod, snapshot, feasible) } -> std::same_as<PluginStatus>;
};

// Reserve / Unreserve: claim (and give back) per-node resources the cache
// does not count, once a node is chosen.
template <typename P>
concept ReservePlugin = Plugin<P> && requires(const P& p, CycleState& state, const PodInfo& pod,
                                               std::string_view node) {
  { p.Reserve(state, pod, node) } -> std::same_as<PluginStatus>;
  { p.Unreserve(state, pod, node) } -> std::same_as<void>;
};

struct PostFilterResult {
  PluginStatus status;
  std::string nominated_node;  // preemption: where the pod will fit once victims are gone
  std::vector<std::string> victims;  // uids of the pods to evict from nominated_node
  // uids of pods of lower priority nominated to nominated_node: the room
  // they were promised is now this pod's, so their nomination ends.
  std::vector<std::string> cleared_nominations;
  // No nomination, and an earlier one of the pod ends: no node can be made
  // to fit (kube-scheduler's result with an empty nominated node).
  bool clear_nomination = false;
};

// What a PostFilter plugin may ask of the cycle: would the pod pass the
// profile's filters on this node (as preemption would leave it)? Run as the
// cycle runs them, pods nominated to the node included. The runner writes one
// into the CycleState under kRunFiltersKey before PostFilter, so that a plugin
// needs no profile of its own and stays a function of its arguments
// (kube-scheduler hands its plugins a framework Handle for this).
struct RunFilters {
  std::function<PluginStatus(const CycleState&, const PodInfo&, const NodeInfo&)> run;
};
inline constexpr std::string_view kRunFiltersKey = "framework/RunFilters";

// PostFilter: runs when no node is feasible (preemption). The state holds a
// RunFilters under kRunFiltersKey.
template <typename P>
concept PostFilterPlugin =
    Plugin<P> && requires(const P& p, CycleState& state, const PodInfo& pod,
                          const Snapshot& snapshot, std::span<const NodeVerdict> verdicts) {
      { p.PostFilter(state, pod, snapshot, verdicts) } -> std::same_as<PostFilterResult>;
    };

// A plugin instance behind function pointers, so a profile can hold plugins
// of any type chosen at run time. An extension point the plugin does not
// implement is nullptr.
struct PluginInstance {
  std::string name;
  std::shared_ptr<const void> self;
  bool node_local = false;  // the type declares kNodeLocal (see IsNodeLocal)

  PluginStatus (*filter)(const void*, const CycleState&, const PodInfo&, const NodeInfo&) = nullptr;
  int64_t (*score)(const void*, const CycleState&, const PodInfo&, const NodeInfo&) = nullptr;
  void (*normalize_score)(const void*, const PodInfo&, std::span<int64_t>) = nullptr;
  PreFilterResult (*pre_filter)(const void*, CycleState&, const PodInfo&, const Snapshot&) = nullptr;
  PluginStatus (*pre_score)(const void*, CycleState&, const PodInfo&, const Snapshot&,
                            std::span<const NodeInfo* const>) = nullptr;
  PluginStatus (*reserve)(const void*, CycleState&, const PodInfo&, std::string_view) = nullptr;
  void (*unreserve)(const void*, CycleState&, const PodInfo&, std::string_view) = nullptr;
  PostFilterResult (*post_filter)(const void*, CycleState&, const PodInfo&, const Snapshot&,
                                  std::span<const NodeVerdict>) = nullptr;
};

// Wraps a plugin object, filling in the extension points its type models.
template <Plugin P>
PluginInstance MakePluginInstance(P plugin) {
  PluginInstance out;
  out.name = std::string(P::kName);
  out.self = std::make_shared<const P>(std::move(plugin));
  out.node_local = IsNodeLocal<P>();
  if constexpr (FilterPlugin<P>) {
    out.filter = [](const void* s, const CycleState& st, const PodInfo& pod, const NodeInfo& node) {
      return static_cast<const P*>(s)->Filter(st, pod, node);
    };
  }
  if constexpr (ScorePlugin<P>) {
    out.score = [](const void* s, const CycleState& st, const PodInfo& pod, const NodeInfo& node) {
      return static_cast<const P*>(s)->Score(st, pod, node);
    };
  }
  if constexpr (NormalizeScorePlugin<P>) {
    out.normalize_score = [](const void* s, const PodInfo& pod, std::span<int64_t> scores) {
      static_cast<const P*>(s)->NormalizeScore(pod, scores);
    };
  }
  if constexpr (PreFilterPlugin<P>) {
    out.pre_filter = [](const void* s, CycleState& st, const PodInfo& pod, const Snapshot& snap) {
      return static_cast<const P*>(s)->PreFilter(st, pod, snap);
    };
  }
  if constexpr (PreScorePlugin<P>) {
    out.pre_score = [](const void* s, CycleState& st, const PodInfo& pod, const Snapshot& snap,
                       std::span<const NodeInfo* const> feasible) {
      return static_cast<const P*>(s)->PreScore(st, pod, snap, feasible);
    };
  }
  if constexpr (ReservePlugin<P>) {
    out.reserve = [](const void* s, CycleState& st, const PodInfo& pod, std::string_view node) {
      return static_cast<const P*>(s)->Reserve(st, pod, node);
    };
    out.unreserve = [](const void* s, CycleState& st, const PodInfo& pod, std::string_view node) {
      static_cast<const P*>(s)->Unreserve(st, pod, node);
    };
  }
  if constexpr (PostFilterPlugin<P>) {
    out.post_filter = [](const void* s, CycleState& st, const PodInfo& pod, const Snapshot& snap,
                         std::span<const NodeVerdict> verdicts) {
      return static_cast<const P*>(s)->PostFilter(st, pod, snap, verdicts);
    };
  }
  return out;
}

}  // namespace podflow::scheduler
