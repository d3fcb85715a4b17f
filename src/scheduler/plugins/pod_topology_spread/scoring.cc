// PodTopologySpread PreScore, Score and NormalizeScore: the ScheduleAnyway
// constraints (kube-scheduler's podtopologyspread scoring).
//
// PreScore: the domains of a constraint are the values its key takes on the
// feasible nodes (a node without the label is in domain "" when the pod is
// spread by the system defaults; otherwise a feasible node lacking any
// topology key is not scored). Each constraint gets the weight
// ln(number of domains + 2), where for kubernetes.io/hostname the number is
// that of scored feasible nodes. Matching pods are then counted per domain
// over every node of the snapshot that has all the keys (system defaults:
// any node) and passes the constraint's inclusion policies.
//
// Score: the sum over the constraints whose key the node has of
//   count(domain of node) * weight + (maxSkew - 1)
// where for kubernetes.io/hostname the count is of the node's own pods (no
// inclusion policy), rounded half away from zero.
//
// NormalizeScore: with min / max over the scored nodes (max starting at 0),
// 100 * (max + min - score) / max in integer arithmetic; every scored node
// gets 100 when max is 0; an unscored node (raw kInvalidScore) gets 0.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "scheduler/plugins/pod_topology_spread/common.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";

struct ScoreConstraint {
  TopologySpreadConstraint constraint;
  bool hostname = false;  // counted per node at Score, not per domain
  // Matching pods per domain; keys view node labels (or are "").
  std::unordered_map<std::string_view, int64_t> counts;
  double weight = 0;
};

struct ScoreState {
  std::vector<ScoreConstraint> constraints;
  std::vector<std::string_view> keys;
  // The pod's own constraints, or defaults given as a List: nodes lacking a
  // topology key are neither scored nor counted.
  bool require_all_keys = true;
};

std::string_view ValueOf(const Labels& labels, std::string_view key) {
  const std::string* value = FindLabel(labels, key);
  return value != nullptr ? std::string_view(*value) : std::string_view();
}

}  // namespace

PluginStatus PodTopologySpread::PreScore(CycleState& state, const PodInfo& pod,
                                         const Snapshot& snapshot,
                                         std::span<const NodeInfo* const> feasible) const {
  std::vector<TopologySpreadConstraint> constraints =
      Constraints(pod, snapshot, api::UnsatisfiableConstraintAction::ScheduleAnyway);
  // Nothing to spread: no node is scored (kube-scheduler skips the plugin).
  if (constraints.empty() || feasible.empty()) return PluginStatus::Skip();

  auto s = std::make_shared<ScoreState>();
  s->require_all_keys = !pod.topology_spread_constraints.empty() || !system_defaulted_;
  s->constraints.resize(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    ScoreConstraint& sc = s->constraints[i];
    sc.constraint = std::move(constraints[i]);
    sc.hostname = sc.constraint.topology_key == kLabelHostname;
  }
  for (const ScoreConstraint& sc : s->constraints) s->keys.push_back(sc.constraint.topology_key);

  size_t ignored = 0;
  for (const NodeInfo* node : feasible) {
    if (s->require_all_keys && !spread::HasAllTopologyKeys(node->labels, s->keys)) {
      ++ignored;
      continue;
    }
    for (ScoreConstraint& sc : s->constraints) {
      if (!sc.hostname) sc.counts.try_emplace(ValueOf(node->labels, sc.constraint.topology_key), 0);
    }
  }
  for (ScoreConstraint& sc : s->constraints) {
    const size_t domains = sc.hostname ? feasible.size() - ignored : sc.counts.size();
    sc.weight = std::log(static_cast<double>(domains + 2));
  }

  spread::NodeInclusion inclusion(pod);
  for (const NodeInfo& node : snapshot.nodes()) {
    if (s->require_all_keys && !spread::HasAllTopologyKeys(node.labels, s->keys)) continue;
    inclusion.Reset(node);
    for (ScoreConstraint& sc : s->constraints) {
      if (sc.hostname || !inclusion.Includes(sc.constraint)) continue;
      auto it = sc.counts.find(ValueOf(node.labels, sc.constraint.topology_key));
      if (it == sc.counts.end()) continue;  // no feasible node in that domain
      it->second += spread::CountMatchingPods(node, sc.constraint.selector, pod.namespace_);
    }
  }
  state.Write<ScoreState>(std::string(kPreScoreStateKey), std::move(s));
  return PluginStatus::Success();
}

int64_t PodTopologySpread::Score(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  const ScoreState* s = state.Read<ScoreState>(kPreScoreStateKey);
  if (s == nullptr) return kInvalidScore;
  if (s->require_all_keys && !spread::HasAllTopologyKeys(node.labels, s->keys)) return kInvalidScore;
  double score = 0;
  for (const ScoreConstraint& sc : s->constraints) {
    const std::string* value = FindLabel(node.labels, sc.constraint.topology_key);
    if (value == nullptr) continue;
    int64_t count = 0;
    if (sc.hostname) {
      count = spread::CountMatchingPods(node, sc.constraint.selector, pod.namespace_);
    } else if (auto it = sc.counts.find(*value); it != sc.counts.end()) {
      count = it->second;
    }
    score += static_cast<double>(count) * sc.weight + static_cast<double>(sc.constraint.max_skew - 1);
  }
  return static_cast<int64_t>(std::round(score));
}

void PodTopologySpread::NormalizeScore(const PodInfo&, std::span<int64_t> scores) const {
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = 0;
  for (int64_t score : scores) {
    if (score == kInvalidScore) continue;
    min = std::min(min, score);
    max = std::max(max, score);
  }
  for (int64_t& score : scores) {
    if (score == kInvalidScore) {
      score = 0;
    } else if (max == 0) {
      score = kMaxNodeScore;
    } else {
      score = kMaxNodeScore * (max + min - score) / max;
    }
  }
}

}  // namespace podflow::scheduler::plugins
