// A cycle's PreScore and Score phases, the selection of the best node and
// the explanation of the scores (runner_internal.h).
#include <algorithm>
#include <numeric>
#include <random>
#include <span>

#include "scheduler/framework/runner_internal.h"

namespace podflow::scheduler::internal {

Result<ScoreTable> ScoreNodes(Cycle& c, const std::vector<size_t>& feasible_at,
                              EquivalenceCache::Class* cached) {
  const std::vector<NodeInfo>& nodes = c.snapshot.nodes();
  std::vector<const NodeInfo*> feasible(feasible_at.size());
  for (size_t i = 0; i < feasible_at.size(); ++i) feasible[i] = &nodes[feasible_at[i]];
  std::vector<const PluginInstance*> skipped;
  const Clock::time_point pre_score_began = Clock::now();
  for (const PluginInstance* plugin : c.profile.pre_score_plugins()) {
    PluginStatus s = TimedCall(c.timer, plugin->name, ExtensionPoint::kPreScore, [&] {
      return plugin->pre_score(plugin->self.get(), c.state, c.pod, c.snapshot, feasible);
    });
    if (s.code() == PluginCode::kSkip) {
      skipped.push_back(plugin);
      continue;
    }
    if (!s.IsSuccess()) {
      s.set_plugin(plugin->name);
      return Status::Internal("running " + Quoted(plugin->name) + " prescore plugin: " +
                              s.ToString());
    }
  }
  RecordPoint(c.timer, ExtensionPoint::kPreScore, pre_score_began);
  const Clock::time_point score_began = Clock::now();
  // Scores are kept as one column per plugin; per-node detail (NodeScores)
  // is built afterwards for the best nodes only.
  const auto& score_plugins = c.profile.score_plugins();
  const size_t f = feasible.size();
  const size_t np = score_plugins.size();
  auto plugin_of = [](const Profile::ScoreEntry& e) { return e.plugin; };
  const uint64_t score_skips = SkipMask(score_plugins, skipped, plugin_of);
  const bool scores_cached =
      cached != nullptr && AllNodeLocal(score_plugins, score_skips, plugin_of);
  if (scores_cached) c.options.cache->SetScoreSkips(*cached, score_skips);
  ScoreTable table;
  table.nodes = f;
  table.raw.assign(np * f, 0);
  table.normalized.assign(np * f, 0);
  table.totals.assign(f, 0);
  std::vector<int64_t>& raw = table.raw;
  for (size_t i = 0; i < f; ++i) {
    const size_t at = feasible_at[i];
    // Every feasible node's verdict was found or made this cycle; its entry
    // is current unless pods nominated there kept it out.
    const bool reusable =
        scores_cached && cached->node_generation[at] == c.snapshot.NodeGeneration(at);
    int64_t* row = reusable ? cached->raw.data() + at * np : nullptr;
    if (reusable && cached->scored[at]) {
      for (size_t p = 0; p < np; ++p) raw[p * f + i] = row[p];
      continue;
    }
    for (size_t p = 0; p < np; ++p) {
      if ((score_skips >> p) & 1) continue;
      const PluginInstance& plugin = *score_plugins[p].plugin;
      const Clock::time_point called = c.score_us != nullptr ? Clock::now() : Clock::time_point();
      raw[p * f + i] = plugin.score(plugin.self.get(), c.state, c.pod, *feasible[i]);
      if (c.score_us != nullptr) c.score_us[p] += MicrosSince(called);
    }
    if (reusable) {
      for (size_t p = 0; p < np; ++p) row[p] = raw[p * f + i];
      cached->scored[at] = 1;
    }
  }
  for (size_t p = 0; p < np; ++p) {
    if ((score_skips >> p) & 1) continue;
    const PluginInstance& plugin = *score_plugins[p].plugin;
    std::span<const int64_t> raw_col(raw.data() + p * f, f);
    std::span<int64_t> col(table.normalized.data() + p * f, f);
    std::copy(raw_col.begin(), raw_col.end(), col.begin());
    if (plugin.normalize_score != nullptr) {
      const Clock::time_point at = c.score_us != nullptr ? Clock::now() : Clock::time_point();
      plugin.normalize_score(plugin.self.get(), c.pod, col);
      if (c.score_us != nullptr) c.score_us[p] += MicrosSince(at);
    }
    const int64_t weight = score_plugins[p].weight;
    for (size_t i = 0; i < f; ++i) {
      if (col[i] < kMinNodeScore || col[i] > kMaxNodeScore) {
        return Status::Internal("plugin " + Quoted(plugin.name) + " returned an invalid score " +
                                std::to_string(col[i]) + " for node " + feasible[i]->name +
                                ", it should be in the range of [0, 100] after normalizing");
      }
      table.totals[i] += col[i] * weight;
    }
  }
  RecordPoint(c.timer, ExtensionPoint::kScore, score_began);
  return table;
}

Selection SelectNode(const ScoreTable& table, uint64_t seed) {
  const std::vector<int64_t>& totals = table.totals;
  std::mt19937_64 rng(seed);
  Selection s;
  for (size_t i = 1; i < table.nodes; ++i) {
    if (totals[i] > totals[s.index]) {
      s.index = i;
      s.tied = 1;
    } else if (totals[i] == totals[s.index]) {
      ++s.tied;
      // Replace the candidate with probability 1/ties. The modulo keeps the
      // draw identical across standard libraries (uniform_int_distribution
      // is implementation-defined); its bias is below 2^-60.
      if (rng() % s.tied == 0) s.index = i;
    }
  }
  return s;
}

void ExplainScores(const Cycle& c, const std::vector<size_t>& feasible_at, const ScoreTable& table,
                   size_t selected, Decision& d) {
  // The selected node and the best others by total (equal totals in visit
  // order), listed in visit order.
  const size_t f = table.nodes;
  const std::vector<int64_t>& totals = table.totals;
  std::vector<size_t> kept;
  if (f <= kMaxExplainedScoredNodes) {
    kept.resize(f);
    std::iota(kept.begin(), kept.end(), size_t{0});
  } else {
    std::vector<size_t> order(f);
    std::iota(order.begin(), order.end(), size_t{0});
    auto better = [&](size_t x, size_t y) {
      return totals[x] != totals[y] ? totals[x] > totals[y] : x < y;
    };
    std::nth_element(order.begin(), order.begin() + (kMaxExplainedScoredNodes - 1), order.end(),
                     better);
    kept.assign(order.begin(), order.begin() + (kMaxExplainedScoredNodes - 1));
    if (std::find(kept.begin(), kept.end(), selected) == kept.end()) {
      kept.push_back(selected);
    } else {
      kept.push_back(order[kMaxExplainedScoredNodes - 1]);
    }
    std::sort(kept.begin(), kept.end());
  }
  const auto& score_plugins = c.profile.score_plugins();
  const size_t np = score_plugins.size();
  d.scores.resize(kept.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    const size_t i = kept[k];
    NodeScores& out = d.scores[k];
    out.node = c.snapshot.nodes()[feasible_at[i]].name;
    out.total = totals[i];
    out.plugins.resize(np);
    for (size_t p = 0; p < np; ++p) {
      PluginScore& ps = out.plugins[p];
      ps.plugin = score_plugins[p].plugin->name;
      ps.raw = table.raw[p * f + i];
      ps.normalized = table.normalized[p * f + i];
      ps.weight = score_plugins[p].weight;
      ps.weighted = ps.normalized * ps.weight;
    }
  }
}

}  // namespace podflow::scheduler::internal
