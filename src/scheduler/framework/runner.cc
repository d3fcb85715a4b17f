#include "scheduler/framework/runner.h"

#include <random>
#include <vector>

#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/fit_error.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler {
namespace {

constexpr size_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

size_t NumFeasibleNodesToFind(int32_t percentage, size_t num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage <= 0) {
    percentage = 50 - static_cast<int32_t>(num_all_nodes / 125);
    if (percentage < kMinFeasibleNodesPercentageToFind) percentage = kMinFeasibleNodesPercentageToFind;
  }
  size_t num = num_all_nodes * static_cast<size_t>(percentage) / 100;
  return num < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : num;
}

uint64_t TieBreakSeed(uint64_t profile_seed, std::string_view pod_uid) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : pod_uid) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return profile_seed ^ (h + 0x9e3779b97f4a7c15ull + (profile_seed << 6) + (profile_seed >> 2));
}

Result<Decision> Schedule(const Profile& profile, const PodInfo& pod, const Snapshot& snapshot,
                          const ScheduleOptions& options) {
  Decision d;
  const std::vector<NodeInfo>& nodes = snapshot.nodes();
  const size_t n = nodes.size();
  d.num_all_nodes = n;
  d.tie_break_seed = TieBreakSeed(profile.config().seed, pod.uid);
  if (n == 0) {
    d.message = std::string(kNoNodesAvailable);
    return d;
  }
  const size_t start = options.start_node_index % n;
  CycleState state;

  // 1. Filter.
  const size_t to_find = NumFeasibleNodesToFind(profile.config().percentage_of_nodes_to_score, n);
  std::vector<const NodeInfo*> feasible;
  feasible.reserve(to_find);
  size_t visited = 0;
  for (; visited < n && feasible.size() < to_find; ++visited) {
    const NodeInfo& node = nodes[(start + visited) % n];
    PluginStatus verdict;
    for (const PluginInstance* plugin : profile.filter_plugins()) {
      PluginStatus s = plugin->filter(plugin->self.get(), state, pod, node);
      if (s.IsSuccess()) continue;
      s.set_plugin(plugin->name);
      if (s.code() == PluginCode::kError) {
        return Status::Internal("running " + Quoted(plugin->name) + " filter plugin on node " +
                                node.name + ": " + s.ToString());
      }
      verdict = std::move(s);
      break;
    }
    if (verdict.IsSuccess()) feasible.push_back(&node);
    d.verdicts.push_back(NodeVerdict{node.name, std::move(verdict)});
  }
  d.next_start_node_index = (start + visited) % n;
  d.feasible_nodes = feasible.size();

  // 2. None or one.
  if (feasible.empty()) {
    d.message = FailedSchedulingMessage(pod, n, d.verdicts);
    return d;
  }
  if (feasible.size() == 1) {
    d.node = feasible[0]->name;
    d.tied_nodes = 1;
    return d;
  }

  // 3. Score.
  const auto& score_plugins = profile.score_plugins();
  d.scores.resize(feasible.size());
  for (size_t i = 0; i < feasible.size(); ++i) {
    d.scores[i].node = feasible[i]->name;
    d.scores[i].plugins.resize(score_plugins.size());
  }
  std::vector<int64_t> column(feasible.size());
  for (size_t p = 0; p < score_plugins.size(); ++p) {
    const PluginInstance& plugin = *score_plugins[p].plugin;
    for (size_t i = 0; i < feasible.size(); ++i) {
      column[i] = plugin.score(plugin.self.get(), state, pod, *feasible[i]);
      d.scores[i].plugins[p].raw = column[i];
    }
    if (plugin.normalize_score != nullptr) plugin.normalize_score(plugin.self.get(), pod, column);
    for (size_t i = 0; i < feasible.size(); ++i) {
      if (column[i] < kMinNodeScore || column[i] > kMaxNodeScore) {
        return Status::Internal("plugin " + Quoted(plugin.name) + " returned an invalid score " +
                                std::to_string(column[i]) + " for node " + feasible[i]->name +
                                ", it should be in the range of [0, 100] after normalizing");
      }
      PluginScore& ps = d.scores[i].plugins[p];
      ps.plugin = plugin.name;
      ps.normalized = column[i];
      ps.weight = score_plugins[p].weight;
      ps.weighted = column[i] * score_plugins[p].weight;
      d.scores[i].total += ps.weighted;
    }
  }

  // 4. Select: reservoir sampling over the best totals.
  std::mt19937_64 rng(d.tie_break_seed);
  size_t selected = 0;
  size_t ties = 1;
  for (size_t i = 1; i < d.scores.size(); ++i) {
    if (d.scores[i].total > d.scores[selected].total) {
      selected = i;
      ties = 1;
    } else if (d.scores[i].total == d.scores[selected].total) {
      ++ties;
      // Replace the candidate with probability 1/ties. The modulo keeps the
      // draw identical across standard libraries (uniform_int_distribution
      // is implementation-defined); its bias is below 2^-60.
      if (rng() % ties == 0) selected = i;
    }
  }
  d.node = d.scores[selected].node;
  d.tied_nodes = ties;
  return d;
}

}  // namespace podflow::scheduler
