#include "scheduler/framework/runner.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/equivalence_cache.h"
#include "scheduler/framework/fit_error.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler {
namespace {

constexpr size_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

constexpr std::string_view kFilteredByPreFilter = "node is filtered out by the prefilter result";

using Clock = std::chrono::steady_clock;

double MicrosSince(Clock::time_point t) {
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

void RecordPoint(CycleTimer* timer, ExtensionPoint point, Clock::time_point since) {
  if (timer != nullptr) timer->metrics->AddPoint(point, MicrosSince(since));
}

// Calls `call` (one plugin at a once-per-cycle point), timing it on sampled cycles.
template <typename F>
auto TimedCall(CycleTimer* timer, std::string_view plugin, ExtensionPoint point, F&& call) {
  if (timer == nullptr || !timer->sample) return call();
  const Clock::time_point at = Clock::now();
  auto result = call();
  timer->metrics->AddPlugin(plugin, point, MicrosSince(at));
  return result;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The profile's filters on `node` in order, those whose bit is set in
// `skips` left out; the first rejection (its plugin set) or Success. With
// `plugin_us`, each call's time is added to plugin_us[position].
PluginStatus RunFilterPlugins(const Profile& profile, uint64_t skips, const CycleState& state,
                              const PodInfo& pod, const NodeInfo& node, double* plugin_us) {
  const auto& plugins = profile.filter_plugins();
  for (size_t i = 0; i < plugins.size(); ++i) {
    if ((skips >> i) & 1) continue;
    const PluginInstance* plugin = plugins[i];
    const Clock::time_point at = plugin_us != nullptr ? Clock::now() : Clock::time_point();
    PluginStatus s = plugin->filter(plugin->self.get(), state, pod, node);
    if (plugin_us != nullptr) plugin_us[i] += MicrosSince(at);
    if (s.IsSuccess()) continue;
    s.set_plugin(plugin->name);
    return s;
  }
  return PluginStatus::Success();
}

// As kube-scheduler's RunFilterPluginsWithNominatedPods: when pods of equal or
// higher priority are nominated to the node, the filters run on the node with
// them added (the room preemption made for them is taken) and then on the
// node as it is (nothing is assumed of pods that are not there yet); the pod
// must pass both.
PluginStatus RunFiltersWithNominatedPods(const Profile& profile, uint64_t skips,
                                         const CycleState& state, const PodInfo& pod,
                                         const NodeInfo& node, const Snapshot& snapshot,
                                         double* plugin_us = nullptr) {
  if (snapshot.HasNominatedPods()) {
    std::optional<NodeInfo> with_nominated;
    for (const auto& nominated : snapshot.NominatedPods(node.name)) {
      if (nominated->uid == pod.uid || nominated->priority < pod.priority) continue;
      if (!with_nominated.has_value()) with_nominated.emplace(node);
      with_nominated->AddPod(nominated);
    }
    if (with_nominated.has_value()) {
      PluginStatus s = RunFilterPlugins(profile, skips, state, pod, *with_nominated, plugin_us);
      if (!s.IsSuccess()) return s;
    }
  }
  return RunFilterPlugins(profile, skips, state, pod, node, plugin_us);
}

// Bit i set when plugins[i] is one of `skipped`.
template <typename List, typename Get>
uint64_t SkipMask(const List& plugins, const std::vector<const PluginInstance*>& skipped, Get get) {
  uint64_t mask = 0;
  if (skipped.empty()) return mask;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (std::find(skipped.begin(), skipped.end(), get(plugins[i])) != skipped.end()) mask |= uint64_t{1} << i;
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

// No node is feasible: the PostFilter plugins run in order until one
// nominates a node (preemption). When none does, their reasons, joined with
// ", ", complete the message as kube-scheduler's FitError does: " <reasons>.".
// Nothing is added when a node was nominated, or when the profile has no
// PostFilter plugin.
void RunPostFilter(const Profile& profile, uint64_t filter_skips, CycleState& state,
                   const PodInfo& pod, const Snapshot& snapshot, Decision& d, CycleTimer* timer) {
  if (profile.post_filter_plugins().empty()) return;
  const Clock::time_point began = Clock::now();
  state.Write<RunFilters>(std::string(kRunFiltersKey),
                          std::make_shared<const RunFilters>(RunFilters{
                              [&profile, &snapshot, filter_skips](const CycleState& st, const PodInfo& p,
                                                                  const NodeInfo& node) {
                                return RunFiltersWithNominatedPods(profile, filter_skips, st, p, node,
                                                                   snapshot);
                              }}));
  std::string said;
  for (const PluginInstance* plugin : profile.post_filter_plugins()) {
    PostFilterResult r = TimedCall(timer, plugin->name, ExtensionPoint::kPostFilter, [&] {
      return plugin->post_filter(plugin->self.get(), state, pod, snapshot, d.verdicts);
    });
    if (r.status.IsSuccess() && !r.nominated_node.empty()) {
      d.nominated_node = std::move(r.nominated_node);
      d.victims = std::move(r.victims);
      d.cleared_nominations = std::move(r.cleared_nominations);
      RecordPoint(timer, ExtensionPoint::kPostFilter, began);
      return;
    }
    if (r.clear_nomination) d.clear_nomination = true;
    for (const std::string& reason : r.status.reasons()) {
      if (!said.empty()) said += ", ";
      said += reason;
    }
  }
  if (!said.empty()) d.message += " " + said + ".";
  RecordPoint(timer, ExtensionPoint::kPostFilter, began);
}

Result<Decision> ScheduleCycle(const Profile& profile, const PodInfo& pod, const Snapshot& snapshot,
                               const ScheduleOptions& options, CycleTimer* timer);

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
  if (options.metrics == nullptr) return ScheduleCycle(profile, pod, snapshot, options, nullptr);
  const Clock::time_point began = Clock::now();
  CycleTimer timer;
  timer.metrics = options.metrics;
  timer.sample = options.metrics->SamplePlugins();
  if (timer.sample) {
    timer.filter_us.assign(profile.filter_plugins().size(), 0);
    timer.score_us.assign(profile.score_plugins().size(), 0);
  }
  Result<Decision> d = ScheduleCycle(profile, pod, snapshot, options, &timer);
  for (size_t i = 0; i < timer.filter_us.size(); ++i) {
    if (timer.filter_us[i] > 0) {
      options.metrics->AddPlugin(profile.filter_plugins()[i]->name, ExtensionPoint::kFilter, timer.filter_us[i]);
    }
  }
  for (size_t i = 0; i < timer.score_us.size(); ++i) {
    if (timer.score_us[i] > 0) {
      options.metrics->AddPlugin(profile.score_plugins()[i].plugin->name, ExtensionPoint::kScore, timer.score_us[i]);
    }
  }
  options.metrics->AddAttempt(!d.ok()           ? AttemptResult::kError
                              : d->scheduled()  ? AttemptResult::kScheduled
                                                : AttemptResult::kUnschedulable,
                              MicrosSince(began));
  return d;
}

namespace {

Result<Decision> ScheduleCycle(const Profile& profile, const PodInfo& pod, const Snapshot& snapshot,
                               const ScheduleOptions& options, CycleTimer* timer) {
  Decision d;
  double* filter_us = timer != nullptr && timer->sample ? timer->filter_us.data() : nullptr;
  double* score_us = timer != nullptr && timer->sample ? timer->score_us.data() : nullptr;
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

  // 0. PreFilter: a rejection rejects every node; a plugin may narrow the
  // nodes worth visiting (the intersection of all such answers).
  const Clock::time_point pre_filter_began = Clock::now();
  std::optional<std::vector<std::string>> only;
  std::vector<std::string_view> narrowed_by;
  std::vector<const PluginInstance*> skipped;
  auto filter_skips = [&] {
    return SkipMask(profile.filter_plugins(), skipped, [](const PluginInstance* p) { return p; });
  };
  auto reject_all = [&](PluginStatus status) -> Result<Decision> {
    // kube-scheduler words this "0/N nodes are available: <reason>." and
    // counts the status for every node (preemption reads it).
    d.verdicts.reserve(n);
    for (const NodeInfo& node : nodes) d.verdicts.push_back(NodeVerdict{node.name, status});
    std::string reasons;
    for (const std::string& reason : status.reasons()) {
      if (!reasons.empty()) reasons += ", ";
      reasons += reason;
    }
    d.message = "0/" + std::to_string(n) + " nodes are available: " + reasons + ".";
    RecordPoint(timer, ExtensionPoint::kPreFilter, pre_filter_began);
    RunPostFilter(profile, filter_skips(), state, pod, snapshot, d, timer);
    return d;
  };
  for (const PluginInstance* plugin : profile.pre_filter_plugins()) {
    PreFilterResult r = TimedCall(timer, plugin->name, ExtensionPoint::kPreFilter,
                                  [&] { return plugin->pre_filter(plugin->self.get(), state, pod, snapshot); });
    if (r.status.code() == PluginCode::kSkip) {
      skipped.push_back(plugin);
      continue;
    }
    if (r.status.IsSuccess()) {
      if (r.node_names.has_value()) {
        narrowed_by.push_back(plugin->name);
        std::sort(r.node_names->begin(), r.node_names->end());
        if (!only.has_value()) {
          only = std::move(r.node_names);
        } else {
          std::vector<std::string> both;
          std::set_intersection(only->begin(), only->end(), r.node_names->begin(),
                                r.node_names->end(), std::back_inserter(both));
          only = std::move(both);
        }
        if (only->empty()) {
          // No node is left: as kube-scheduler, the plugins that narrowed
          // the set are the reason, and no preemption can change that.
          std::string reason;
          if (narrowed_by.size() == 1) {
            reason = "node(s) didn't satisfy plugin " + std::string(narrowed_by[0]);
          } else {
            reason = "node(s) didn't satisfy plugin(s) [";
            for (size_t i = 0; i < narrowed_by.size(); ++i) reason += (i ? " " : "") + std::string(narrowed_by[i]);
            reason += "] simultaneously";
          }
          PluginStatus status = PluginStatus::UnschedulableAndUnresolvable(std::move(reason));
          status.set_plugin(plugin->name);
          return reject_all(std::move(status));
        }
      }
      continue;
    }
    r.status.set_plugin(plugin->name);
    if (r.status.code() == PluginCode::kError) {
      return Status::Internal("running " + Quoted(plugin->name) + " prefilter plugin: " +
                              r.status.ToString());
    }
    return reject_all(std::move(r.status));
  }
  const uint64_t skips = filter_skips();
  RecordPoint(timer, ExtensionPoint::kPreFilter, pre_filter_began);
  const Clock::time_point filter_began = Clock::now();
  // Nodes a PreFilter ruled out are rejected as UnschedulableAndUnresolvable
  // without running the filters (kube-scheduler records them so, and counts
  // them in the event: "2 node is filtered out by the prefilter result").
  if (only.has_value()) {
    PluginStatus out = PluginStatus::UnschedulableAndUnresolvable(std::string(kFilteredByPreFilter));
    out.set_plugin(narrowed_by.back());
    for (const NodeInfo& node : nodes) {
      if (!std::binary_search(only->begin(), only->end(), node.name)) d.verdicts.push_back(NodeVerdict{node.name, out});
    }
  }

  // A pod that preemption nominated to a node tries that node first, as
  // kube-scheduler's evaluateNominatedNode: passing there, it is chosen
  // unscored; otherwise every node is filtered as usual.
  if (!pod.nominated_node_name.empty()) {
    const NodeInfo* nominated = snapshot.FindNode(pod.nominated_node_name);
    if (nominated != nullptr &&
        (!only.has_value() || std::binary_search(only->begin(), only->end(), nominated->name))) {
      PluginStatus verdict = RunFiltersWithNominatedPods(profile, skips, state, pod, *nominated, snapshot, filter_us);
      if (verdict.code() == PluginCode::kError) {
        return Status::Internal("running " + Quoted(verdict.plugin()) + " filter plugin on node " +
                                nominated->name + ": " + verdict.ToString());
      }
      if (verdict.IsSuccess()) {
        d.verdicts.push_back(NodeVerdict{nominated->name, std::move(verdict)});
        d.feasible_nodes = 1;
        d.node = nominated->name;
        d.tied_nodes = 1;
        d.next_start_node_index = start;
        RecordPoint(timer, ExtensionPoint::kFilter, filter_began);
        return d;
      }
    }
  }

  // The equivalence cache serves this cycle when every filter it runs is
  // node-local (equivalence_cache.h).
  EquivalenceCache::Class* cached = nullptr;
  if (options.cache != nullptr && &options.cache->profile() == &profile &&
      AllNodeLocal(profile.filter_plugins(), skips, [](const PluginInstance* p) { return p; })) {
    cached = &options.cache->Acquire(EquivalenceSignature(pod), n, snapshot.ObjectsGeneration(), skips);
  }

  // 1. Filter.
  const size_t to_find = NumFeasibleNodesToFind(profile.config().percentage_of_nodes_to_score, n);
  std::vector<size_t> feasible_at;  // positions in nodes
  feasible_at.reserve(to_find);
  d.verdicts.reserve(std::min(n, 2 * to_find));
  size_t visited = 0;
  for (; visited < n && feasible_at.size() < to_find; ++visited) {
    const size_t at = (start + visited) % n;
    const NodeInfo& node = nodes[at];
    if (only.has_value() && !std::binary_search(only->begin(), only->end(), node.name)) continue;
    // Pods nominated here make the verdict depend on more than the node.
    const bool reusable =
        cached != nullptr && (!snapshot.HasNominatedPods() || snapshot.NominatedPods(node.name).empty());
    if (reusable && cached->node_generation[at] == snapshot.NodeGeneration(at)) {
      if (cached->verdict[at].IsSuccess()) feasible_at.push_back(at);
      d.verdicts.push_back(NodeVerdict{node.name, cached->verdict[at]});
      continue;
    }
    PluginStatus verdict = RunFiltersWithNominatedPods(profile, skips, state, pod, node, snapshot, filter_us);
    if (verdict.code() == PluginCode::kError) {
      return Status::Internal("running " + Quoted(verdict.plugin()) + " filter plugin on node " +
                              node.name + ": " + verdict.ToString());
    }
    if (reusable) {
      cached->node_generation[at] = snapshot.NodeGeneration(at);
      cached->verdict[at] = verdict;
      cached->scored[at] = 0;
    }
    if (verdict.IsSuccess()) feasible_at.push_back(at);
    d.verdicts.push_back(NodeVerdict{node.name, std::move(verdict)});
  }
  d.next_start_node_index = (start + visited) % n;
  d.feasible_nodes = feasible_at.size();
  RecordPoint(timer, ExtensionPoint::kFilter, filter_began);

  // 2. None or one.
  if (feasible_at.empty()) {
    d.message = FitErrorMessage(n, d.verdicts);
    RunPostFilter(profile, skips, state, pod, snapshot, d, timer);
    return d;
  }
  if (feasible_at.size() == 1) {
    d.node = nodes[feasible_at[0]].name;
    d.tied_nodes = 1;
    return d;
  }

  // 3. PreScore, then Score.
  std::vector<const NodeInfo*> feasible(feasible_at.size());
  for (size_t i = 0; i < feasible_at.size(); ++i) feasible[i] = &nodes[feasible_at[i]];
  skipped.clear();
  const Clock::time_point pre_score_began = Clock::now();
  for (const PluginInstance* plugin : profile.pre_score_plugins()) {
    PluginStatus s = TimedCall(timer, plugin->name, ExtensionPoint::kPreScore,
                               [&] { return plugin->pre_score(plugin->self.get(), state, pod, snapshot, feasible); });
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
  RecordPoint(timer, ExtensionPoint::kPreScore, pre_score_began);
  const Clock::time_point score_began = Clock::now();
  // Scores are kept as one column per plugin; per-node detail (NodeScores)
  // is built afterwards for the best nodes only.
  const auto& score_plugins = profile.score_plugins();
  const size_t f = feasible.size();
  const size_t np = score_plugins.size();
  const uint64_t score_skips =
      SkipMask(score_plugins, skipped, [](const Profile::ScoreEntry& e) { return e.plugin; });
  const bool scores_cached =
      cached != nullptr && AllNodeLocal(score_plugins, score_skips, [](const Profile::ScoreEntry& e) { return e.plugin; });
  if (scores_cached) options.cache->SetScoreSkips(*cached, score_skips);
  std::vector<int64_t> raw(np * f, 0), normalized(np * f, 0), totals(f, 0);
  for (size_t i = 0; i < f; ++i) {
    const size_t at = feasible_at[i];
    // Every feasible node's verdict was found or made this cycle; its entry
    // is current unless pods nominated there kept it out.
    const bool reusable = scores_cached && cached->node_generation[at] == snapshot.NodeGeneration(at);
    int64_t* row = reusable ? cached->raw.data() + at * np : nullptr;
    if (reusable && cached->scored[at]) {
      for (size_t p = 0; p < np; ++p) raw[p * f + i] = row[p];
      continue;
    }
    for (size_t p = 0; p < np; ++p) {
      if ((score_skips >> p) & 1) continue;
      const PluginInstance& plugin = *score_plugins[p].plugin;
      const Clock::time_point called = score_us != nullptr ? Clock::now() : Clock::time_point();
      raw[p * f + i] = plugin.score(plugin.self.get(), state, pod, *feasible[i]);
      if (score_us != nullptr) score_us[p] += MicrosSince(called);
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
    std::span<int64_t> col(normalized.data() + p * f, f);
    std::copy(raw_col.begin(), raw_col.end(), col.begin());
    if (plugin.normalize_score != nullptr) {
      const Clock::time_point at = score_us != nullptr ? Clock::now() : Clock::time_point();
      plugin.normalize_score(plugin.self.get(), pod, col);
      if (score_us != nullptr) score_us[p] += MicrosSince(at);
    }
    const int64_t weight = score_plugins[p].weight;
    for (size_t i = 0; i < f; ++i) {
      if (col[i] < kMinNodeScore || col[i] > kMaxNodeScore) {
        return Status::Internal("plugin " + Quoted(plugin.name) + " returned an invalid score " +
                                std::to_string(col[i]) + " for node " + feasible[i]->name +
                                ", it should be in the range of [0, 100] after normalizing");
      }
      totals[i] += col[i] * weight;
    }
  }

  RecordPoint(timer, ExtensionPoint::kScore, score_began);

  // 4. Select: reservoir sampling over the best totals.
  std::mt19937_64 rng(d.tie_break_seed);
  size_t selected = 0;
  size_t ties = 1;
  for (size_t i = 1; i < f; ++i) {
    if (totals[i] > totals[selected]) {
      selected = i;
      ties = 1;
    } else if (totals[i] == totals[selected]) {
      ++ties;
      // Replace the candidate with probability 1/ties. The modulo keeps the
      // draw identical across standard libraries (uniform_int_distribution
      // is implementation-defined); its bias is below 2^-60.
      if (rng() % ties == 0) selected = i;
    }
  }
  d.node = feasible[selected]->name;
  d.tied_nodes = ties;

  // The explanation: the selected node and the best others by total (equal
  // totals in visit order), listed in visit order.
  std::vector<size_t> kept;
  if (f <= kMaxExplainedScoredNodes) {
    kept.resize(f);
    std::iota(kept.begin(), kept.end(), size_t{0});
  } else {
    std::vector<size_t> order(f);
    std::iota(order.begin(), order.end(), size_t{0});
    auto better = [&](size_t x, size_t y) { return totals[x] != totals[y] ? totals[x] > totals[y] : x < y; };
    std::nth_element(order.begin(), order.begin() + (kMaxExplainedScoredNodes - 1), order.end(), better);
    kept.assign(order.begin(), order.begin() + (kMaxExplainedScoredNodes - 1));
    if (std::find(kept.begin(), kept.end(), selected) == kept.end()) {
      kept.push_back(selected);
    } else {
      kept.push_back(order[kMaxExplainedScoredNodes - 1]);
    }
    std::sort(kept.begin(), kept.end());
  }
  d.scores.resize(kept.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    const size_t i = kept[k];
    NodeScores& out = d.scores[k];
    out.node = feasible[i]->name;
    out.total = totals[i];
    out.plugins.resize(np);
    for (size_t p = 0; p < np; ++p) {
      PluginScore& ps = out.plugins[p];
      ps.plugin = score_plugins[p].plugin->name;
      ps.raw = raw[p * f + i];
      ps.normalized = normalized[p * f + i];
      ps.weight = score_plugins[p].weight;
      ps.weighted = ps.normalized * ps.weight;
    }
  }
  return d;
}

}  // namespace

}  // namespace podflow::scheduler
