// The phases of one scheduling cycle (runner.h's Schedule), shared by
// runner.cc (the cycle in order, timing), runner_filter.cc (PreFilter,
// Filter, PostFilter) and runner_score.cc (PreScore, Score, selection and
// the explanation of the scores). Internal to src/scheduler/framework.
//
// Thread safety: a Cycle belongs to the one call of Schedule that made it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/equivalence_cache.h"
#include "scheduler/framework/metrics.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/profile.h"
#include "scheduler/framework/runner.h"
#include "scheduler/framework/snapshot.h"

namespace podflow::scheduler::internal {

using Clock = std::chrono::steady_clock;

inline double MicrosSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// One cycle's timing for SchedulerMetrics (ScheduleOptions::metrics).
struct CycleTimer {
  SchedulerMetrics* metrics = nullptr;
  bool sample = false;  // plugins are timed one by one this cycle
  // Sampled cycles: time per plugin, by position in the profile's filter /
  // score list, summed over nodes.
  std::vector<double> filter_us;
  std::vector<double> score_us;
};

// Adds the time since `since` to `point` when the cycle is measured.
inline void RecordPoint(CycleTimer* timer, ExtensionPoint point, Clock::time_point since) {
  if (timer != nullptr) timer->metrics->AddPoint(point, MicrosSince(since));
}

// Calls `call` (one plugin at a once-per-cycle point), timing it on sampled
// cycles.
template <typename F>
auto TimedCall(CycleTimer* timer, std::string_view plugin, ExtensionPoint point, F&& call) {
  if (timer == nullptr || !timer->sample) return call();
  const Clock::time_point at = Clock::now();
  auto result = call();
  timer->metrics->AddPlugin(plugin, point, MicrosSince(at));
  return result;
}

inline std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Bit i set when plugins[i] (as `get` reads it) is one of `skipped`.
template <typename List, typename Get>
uint64_t SkipMask(const List& plugins, const std::vector<const PluginInstance*>& skipped, Get get) {
  uint64_t mask = 0;
  if (skipped.empty()) return mask;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (std::find(skipped.begin(), skipped.end(), get(plugins[i])) != skipped.end()) {
      mask |= uint64_t{1} << i;
    }
  }
  return mask;
}

// Whether every plugin of `plugins` not in `skips` is node-local.
template <typename List, typename Get>
bool AllNodeLocal(const List& plugins, uint64_t skips, Get get) {
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (((skips >> i) & 1) == 0 && !get(plugins[i])->node_local) return false;
  }
  return true;
}

// What every phase of one cycle reads, and the CycleState they share.
struct Cycle {
  const Profile& profile;
  const PodInfo& pod;
  const Snapshot& snapshot;
  const ScheduleOptions& options;
  CycleTimer* timer = nullptr;  // nullptr: the cycle is not measured
  // Sampled cycles: where each filter / score plugin's time is added (the
  // timer's vectors); nullptr otherwise.
  double* filter_us = nullptr;
  double* score_us = nullptr;
  size_t start = 0;  // the first node visited (start_node_index modulo the nodes)
  CycleState state;
};

// --- PreFilter, Filter, PostFilter (runner_filter.cc) ---

// What PreFilter decided.
struct PreFilterOutcome {
  uint64_t filter_skips = 0;  // bit i: filter plugin i answered Skip
  // When plugins narrowed the nodes worth visiting: the intersection of
  // their answers, sorted; `narrowed_by` is the last plugin that narrowed.
  std::optional<std::vector<std::string>> only;
  std::string_view narrowed_by;
  // Set when PreFilter rejected every node (a rejection, or an empty
  // narrowing); the plugins after it did not run.
  std::optional<PluginStatus> rejection;
};

// Runs the profile's PreFilter plugins in order. Internal when a plugin
// returns Error.
Result<PreFilterOutcome> RunPreFilter(Cycle& c);

// Every node rejected with `status` (PreFilter's rejection), the message
// kube-scheduler words for it, then PostFilter. `pre_filter_began` closes
// the PreFilter timing.
void RejectAllNodes(Cycle& c, PluginStatus status, uint64_t filter_skips,
                    Clock::time_point pre_filter_began, Decision& d);

// The nodes PreFilter left out, each rejected as UnschedulableAndUnresolvable
// ("node is filtered out by the prefilter result") without running filters.
void RejectNodesLeftOut(const Cycle& c, const PreFilterOutcome& pre, Decision& d);

// A pod nominated to a node tries it first: true when it passes there (then
// `d` is complete: that node, unscored). Internal on a plugin Error.
Result<bool> TryNominatedNode(Cycle& c, const PreFilterOutcome& pre, Decision& d);

// Filter from c.start round the snapshot until enough feasible nodes are
// found (NumFeasibleNodesToFind), reusing and filling `cached` (nullable).
// Appends each visited node's verdict to `d` and sets its feasible_nodes and
// next_start_node_index. Returns the feasible nodes' positions in
// snapshot.nodes(), in visit order. Internal on a plugin Error.
Result<std::vector<size_t>> FindFeasibleNodes(Cycle& c, const PreFilterOutcome& pre,
                                              EquivalenceCache::Class* cached, Decision& d);

// No node is feasible: the PostFilter plugins run in order until one
// nominates a node (preemption); otherwise their reasons complete
// d.message. No-op for a profile without PostFilter plugins.
void RunPostFilter(Cycle& c, uint64_t filter_skips, Decision& d);

// --- PreScore, Score, selection (runner_score.cc) ---

// Every score plugin's numbers on the feasible nodes, one column per plugin:
// element [p * nodes + i] is plugin p on feasible node i.
struct ScoreTable {
  size_t nodes = 0;
  std::vector<int64_t> raw;
  std::vector<int64_t> normalized;  // after NormalizeScore, 0..100
  std::vector<int64_t> totals;      // per node: the sum of normalized * weight
};

// PreScore, then Score on `feasible` (positions in snapshot.nodes()),
// reusing and filling `cached` (nullable), NormalizeScore and weights.
// Internal when a PreScore plugin fails or a normalized score leaves 0..100.
Result<ScoreTable> ScoreNodes(Cycle& c, const std::vector<size_t>& feasible,
                              EquivalenceCache::Class* cached);

// The best total, ties broken by reservoir sampling over the feasible order
// with a draw seeded by `seed`: the selected index into the table's nodes,
// and how many nodes tied.
struct Selection {
  size_t index = 0;
  size_t tied = 1;
};
Selection SelectNode(const ScoreTable& table, uint64_t seed);

// d.scores: the selected node and the best others by total (at most
// kMaxExplainedScoredNodes), in visit order, with each plugin's numbers.
void ExplainScores(const Cycle& c, const std::vector<size_t>& feasible, const ScoreTable& table,
                   size_t selected, Decision& d);

}  // namespace podflow::scheduler::internal
