// The scheduling cycle over plain values: filter every node, score the
// feasible ones, pick the best, explain. Mirrors kube-scheduler's
// schedulePod / findNodesThatFitPod / prioritizeNodes / selectHost.
//
// Thread safety: Schedule only reads its arguments; concurrent calls over
// distinct or unchanging snapshots are safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/equivalence_cache.h"
#include "scheduler/framework/metrics.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/profile.h"
#include "scheduler/framework/snapshot.h"

namespace podflow::scheduler {

struct ScheduleOptions {
  // Index of the first node to visit (kube-scheduler's nextStartNodeIndex);
  // the stage passes back Decision::next_start_node_index.
  size_t start_node_index = 0;
  // Verdicts and raw scores of equivalent pods on unchanged nodes
  // (equivalence_cache.h); nullptr, or a cache of another profile, runs
  // every plugin on every visited node. The Decision is the same either way.
  EquivalenceCache* cache = nullptr;
  // Where to add this cycle's timings (metrics.h); nullptr: not measured.
  SchedulerMetrics* metrics = nullptr;
};

// Runs one cycle for `pod` over `snapshot`:
//  PreFilter: the profile's PreFilter plugins run once. A plugin answering
//     Skip is not called at Filter this cycle (nor in preemption's trials).
//     A rejection rejects
//     every node with it ("0/N nodes are available: <reason>."). Plugins may
//     narrow the nodes worth visiting: the intersection is visited, the
//     other nodes are rejected as UnschedulableAndUnresolvable ("node is
//     filtered out by the prefilter result"), and an empty intersection
//     rejects every node ("node(s) didn't satisfy plugin X", or "plugin(s)
//     [X Y] simultaneously").
//  0. A pod with a nominated node (pod.nominated_node_name) that passes the
//     filters there is placed there, unscored.
//  1. Filter: nodes are visited from start_node_index round the snapshot's
//     order; on each node the profile's filters run in order and the first
//     rejection is the node's verdict. Pods of equal or higher priority
//     nominated to the node count there too (the pod must pass with and
//     without them). Visiting stops once NumFeasibleNodesToFind feasible
//     nodes are found.
//  2. No feasible node: the PostFilter plugins run (preemption); Decision
//     with message (see fit_error.h), no node, and possibly a nominated node
//     and victims. One feasible node: it is chosen, unscored.
//  3. PreScore (a plugin answering Skip scores 0 on every node, uncalled),
//     then Score: each score plugin scores every feasible node (raw), its
//     NormalizeScore rescales them, each must then lie in 0..100, times the
//     weight; a node's total is the sum.
//  4. Select: the best total; ties are broken by reservoir sampling over the
//     feasible order (as selectHost), drawing from std::mt19937_64 seeded
//     with TieBreakSeed(profile seed, pod uid): same seed, same snapshot,
//     same pod -> same node.
// Returns Internal, naming the plugin and node, when a plugin returns Error
// or a score out of range after normalizing: a bug, not a verdict.
// The Decision's plugin names point into `profile`.
Result<Decision> Schedule(const Profile& profile, const PodInfo& pod, const Snapshot& snapshot,
                          const ScheduleOptions& options = {});

// kube-scheduler's numFeasibleNodesToFind (minFeasibleNodesToFind = 100,
// minFeasibleNodesPercentageToFind = 5).
size_t NumFeasibleNodesToFind(int32_t percentage_of_nodes_to_score, size_t num_all_nodes);

// The tie-break seed of a pod: the profile seed mixed with a stable (FNV-1a)
// hash of the pod's uid, so a decision re-run later draws the same.
uint64_t TieBreakSeed(uint64_t profile_seed, std::string_view pod_uid);

}  // namespace podflow::scheduler
