// Schedule: one cycle, phase by phase. The phases live in runner_filter.cc
// (PreFilter, Filter, PostFilter) and runner_score.cc (PreScore, Score,
// selection); runner_internal.h says what each does.
#include "scheduler/framework/runner.h"

#include "scheduler/framework/fit_error.h"
#include "scheduler/framework/runner_internal.h"

namespace podflow::scheduler {
namespace internal {
namespace {

// The cycle of runner.h's Schedule, phase by phase; `timer` is nullptr when
// the cycle is not measured.
Result<Decision> ScheduleCycle(const Profile& profile, const PodInfo& pod, const Snapshot& snapshot,
                               const ScheduleOptions& options, CycleTimer* timer) {
  Decision d;
  const std::vector<NodeInfo>& nodes = snapshot.nodes();
  const size_t n = nodes.size();
  d.num_all_nodes = n;
  d.tie_break_seed = TieBreakSeed(profile.config().seed, pod.uid);
  if (n == 0) {
    d.message = std::string(kNoNodesAvailable);
    return d;
  }
  const bool sampled = timer != nullptr && timer->sample;
  Cycle c{profile, pod, snapshot, options, timer,
          sampled ? timer->filter_us.data() : nullptr,
          sampled ? timer->score_us.data() : nullptr,
          options.start_node_index % n, CycleState()};

  // 0. PreFilter: a rejection rejects every node; a plugin may narrow the
  // nodes worth visiting (the intersection of all such answers).
  const Clock::time_point pre_filter_began = Clock::now();
  Result<PreFilterOutcome> pre = RunPreFilter(c);
  if (!pre.ok()) return pre.status();
  if (pre->rejection.has_value()) {
    RejectAllNodes(c, std::move(*pre->rejection), pre->filter_skips, pre_filter_began, d);
    return d;
  }
  RecordPoint(timer, ExtensionPoint::kPreFilter, pre_filter_began);
  const Clock::time_point filter_began = Clock::now();
  RejectNodesLeftOut(c, *pre, d);

  // A pod that preemption nominated to a node tries that node first.
  Result<bool> placed = TryNominatedNode(c, *pre, d);
  if (!placed.ok()) return placed.status();
  if (*placed) {
    RecordPoint(timer, ExtensionPoint::kFilter, filter_began);
    return d;
  }

  // The equivalence cache serves this cycle when every filter it runs is
  // node-local (equivalence_cache.h).
  EquivalenceCache::Class* cached = nullptr;
  if (options.cache != nullptr && &options.cache->profile() == &profile &&
      AllNodeLocal(profile.filter_plugins(), pre->filter_skips,
                   [](const PluginInstance* p) { return p; })) {
    cached = &options.cache->Acquire(EquivalenceSignature(pod), n, snapshot.ObjectsGeneration(),
                                     pre->filter_skips);
  }

  // 1. Filter.
  Result<std::vector<size_t>> feasible = FindFeasibleNodes(c, *pre, cached, d);
  if (!feasible.ok()) return feasible.status();
  RecordPoint(timer, ExtensionPoint::kFilter, filter_began);

  // 2. None or one.
  if (feasible->empty()) {
    d.message = FitErrorMessage(n, d.verdicts);
    RunPostFilter(c, pre->filter_skips, d);
    return d;
  }
  if (feasible->size() == 1) {
    d.node = nodes[(*feasible)[0]].name;
    d.tied_nodes = 1;
    return d;
  }

  // 3. PreScore, then Score.
  Result<ScoreTable> table = ScoreNodes(c, *feasible, cached);
  if (!table.ok()) return table.status();

  // 4. Select: reservoir sampling over the best totals, then the explanation.
  const Selection selected = SelectNode(*table, d.tie_break_seed);
  d.node = nodes[(*feasible)[selected.index]].name;
  d.tied_nodes = selected.tied;
  ExplainScores(c, *feasible, *table, selected.index, d);
  return d;
}

}  // namespace
}  // namespace internal

namespace {

constexpr size_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

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
  using internal::Clock;
  using internal::ScheduleCycle;
  if (options.metrics == nullptr) return ScheduleCycle(profile, pod, snapshot, options, nullptr);
  const Clock::time_point began = Clock::now();
  internal::CycleTimer timer;
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
                              internal::MicrosSince(began));
  return d;
}

}  // namespace podflow::scheduler
