// Decision: the outcome of one scheduling cycle and why: every evaluated
// node's verdict, and for feasible nodes each score plugin's raw,
// normalized and weighted score. The stage turns it into a binding or a
// FailedScheduling event; podflow-replay prints it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/framework/status.h"

namespace podflow::scheduler {

struct NodeVerdict {
  std::string node;
  PluginStatus status;  // Success, or the first filter that rejected the node
};

struct PluginScore {
  std::string_view plugin;  // points into the Profile
  int64_t raw = 0;          // Score
  int64_t normalized = 0;   // after NormalizeScore (raw when the plugin has none); 0..100
  int64_t weight = 0;
  int64_t weighted = 0;     // normalized * weight
};

struct NodeScores {
  std::string node;
  int64_t total = 0;  // sum of weighted scores
  std::vector<PluginScore> plugins;  // in the profile's score order
};

// How many feasible nodes a Decision keeps per-plugin scores for.
inline constexpr size_t kMaxExplainedScoredNodes = 64;

struct Decision {
  // The chosen node; empty when the pod fits no node.
  std::string node;
  bool scheduled() const { return !node.empty(); }

  size_t num_all_nodes = 0;
  size_t feasible_nodes = 0;
  // Verdicts of the nodes the filters visited, in visit order. When enough
  // feasible nodes were found early (large clusters) the rest were not visited.
  std::vector<NodeVerdict> verdicts;
  // Scores of the feasible nodes, in visit order; empty when one node was
  // feasible (then kube-scheduler does not score either). With more than
  // kMaxExplainedScoredNodes feasible nodes, only the selected node and the
  // best others by total are kept (every node was scored all the same).
  std::vector<NodeScores> scores;
  // How many feasible nodes shared the best total; the tie-break chose among them.
  size_t tied_nodes = 0;
  // The seed of the tie-break draw (profile seed mixed with the pod's uid).
  uint64_t tie_break_seed = 0;
  // Where the next cycle starts visiting nodes (kube-scheduler's
  // nextStartNodeIndex); pass it back in ScheduleOptions.
  size_t next_start_node_index = 0;

  // When !scheduled() and a PostFilter plugin (preemption) found room: the
  // node the pod is nominated to once `victims` (pod uids) are gone.
  std::string nominated_node;
  std::vector<std::string> victims;
  // With nominated_node: pods of lower priority nominated there before,
  // whose nomination ends (kube-scheduler clears their nominatedNodeName:
  // they may no longer fit once this pod takes the room).
  std::vector<std::string> cleared_nominations;
  // When !scheduled() and preemption found no node at all: the pod's earlier
  // nomination (status.nominatedNodeName) ends.
  bool clear_nomination = false;

  // When !scheduled(): the FailedScheduling event message, as kube-scheduler
  // words it ("0/3 nodes are available: 3 Insufficient cpu. preemption: ...").
  std::string message;

  // Several lines: the outcome, each node's verdict, each feasible node's scores.
  std::string Explain() const;
};

// How `b` differs from `a`, field by field (every verdict and every kept
// score included), as lines "verdicts[3].status: Success -> Unschedulable
// (NodePorts): ..."; empty when they are the same decision. At most
// `max_lines` lines.
std::vector<std::string> DecisionDifferences(const Decision& a, const Decision& b, size_t max_lines = 8);

}  // namespace podflow::scheduler
