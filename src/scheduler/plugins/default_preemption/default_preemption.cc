#include "scheduler/plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <memory>

#include "base/yaml_reader.h"
#include "scheduler/framework/fit_error.h"

namespace podflow::scheduler::plugins {
namespace {

std::string Preemption(std::string_view message) { return "preemption: " + std::string(message); }

// A start time for ordering: RFC 3339 at one precision sorts as text; a pod
// not started yet counts as starting now, after every started pod.
std::string_view StartKey(const PodInfo& pod) {
  return pod.start_time.empty() ? std::string_view("\x7f") : std::string_view(pod.start_time);
}

// Keeps the candidates (indices) with the highest score; a no-op once one is left.
template <typename ScoreFn>
void KeepBest(std::vector<size_t>& kept, ScoreFn score) {
  if (kept.size() <= 1) return;
  auto best = score(kept[0]);
  std::vector<size_t> next{kept[0]};
  for (size_t i = 1; i < kept.size(); ++i) {
    auto s = score(kept[i]);
    if (s > best) {
      best = s;
      next.assign(1, kept[i]);
    } else if (s == best) {
      next.push_back(kept[i]);
    }
  }
  kept = std::move(next);
}

}  // namespace

Result<DefaultPreemption> DefaultPreemption::FromArgs(const YAML::Node& args) {
  DefaultPreemption p;
  if (!args || args.IsNull()) return p;
  if (!args.IsMap()) return Status::Invalid("args: expected a map");
  for (const auto& entry : args) {
    const std::optional<std::string> key_text = yaml::As<std::string>(entry.first);
    if (!key_text) return Status::Invalid("args: keys must be strings");
    const std::string& key = *key_text;
    int32_t* field = key == "minCandidateNodesPercentage" ? &p.min_candidate_nodes_percentage_
                     : key == "minCandidateNodesAbsolute" ? &p.min_candidate_nodes_absolute_
                                                          : nullptr;
    if (field == nullptr) {
      return Status::Invalid("args." + key +
                             ": unknown field (known: minCandidateNodesAbsolute, "
                             "minCandidateNodesPercentage)");
    }
    const std::optional<int32_t> value = yaml::As<int32_t>(entry.second);
    if (!value) return Status::Invalid("args." + key + ": expected an integer");
    *field = *value;
  }
  if (p.min_candidate_nodes_percentage_ < 0 || p.min_candidate_nodes_percentage_ > 100) {
    return Status::Invalid("args.minCandidateNodesPercentage: not in valid range [0, 100], got " +
                           std::to_string(p.min_candidate_nodes_percentage_));
  }
  if (p.min_candidate_nodes_absolute_ < 0) {
    return Status::Invalid("args.minCandidateNodesAbsolute: not in valid range [0, inf), got " +
                           std::to_string(p.min_candidate_nodes_absolute_));
  }
  if (p.min_candidate_nodes_percentage_ == 0 && p.min_candidate_nodes_absolute_ == 0) {
    return Status::Invalid(
        "args: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero");
  }
  return p;
}

size_t DefaultPreemption::NumCandidates(size_t potential) const {
  size_t n = potential * static_cast<size_t>(min_candidate_nodes_percentage_) / 100;
  n = std::max(n, static_cast<size_t>(min_candidate_nodes_absolute_));
  return std::min(n, potential);
}

bool DefaultPreemption::MoreImportant(const PodInfo& a, const PodInfo& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return StartKey(a) < StartKey(b);
}

PluginStatus DefaultPreemption::SelectVictims(const CycleState& state, const RunFilters& filters,
                                              const PodInfo& pod, const NodeInfo& node,
                                              std::vector<const PodInfo*>& victims) {
  victims.clear();
  std::vector<std::shared_ptr<const PodInfo>> potential;
  for (const auto& p : node.pods()) {
    if (p->priority < pod.priority) potential.push_back(p);
  }
  if (potential.empty()) return PluginStatus::UnschedulableAndUnresolvable(std::string(kNoVictims));

  // With every lower-priority pod gone, does the pod fit at all?
  NodeInfo trial = node;
  for (const auto& p : potential) (void)trial.RemovePod(p->uid);
  PluginStatus fits = filters.run(state, pod, trial);
  if (!fits.IsSuccess()) return fits;

  // Reprieve as many as possible, most important first; stable so that equal
  // pods keep the node's order and a replay decides the same.
  std::stable_sort(potential.begin(), potential.end(),
                   [](const auto& a, const auto& b) { return MoreImportant(*a, *b); });
  for (const auto& p : potential) {
    trial.AddPod(p);
    if (filters.run(state, pod, trial).IsSuccess()) continue;
    (void)trial.RemovePod(p->uid);
    victims.push_back(p.get());
  }
  return PluginStatus::Success();
}

size_t DefaultPreemption::PickNode(std::span<const Candidate> candidates) {
  std::vector<size_t> kept(candidates.size());
  for (size_t i = 0; i < kept.size(); ++i) kept[i] = i;
  // 1. Fewest PodDisruptionBudget violations: podflow has none.
  // 2. The lowest highest-victim priority (victims are most important first).
  KeepBest(kept, [&](size_t i) { return -int64_t{candidates[i].victims.front()->priority}; });
  // 3. The smallest sum of priorities, each shifted to be non-negative.
  KeepBest(kept, [&](size_t i) {
    int64_t sum = 0;
    for (const PodInfo* v : candidates[i].victims) sum += int64_t{v->priority} + (int64_t{1} << 31);
    return -sum;
  });
  // 4. The fewest victims.
  KeepBest(kept, [&](size_t i) { return -static_cast<int64_t>(candidates[i].victims.size()); });
  // 5. The latest of the earliest starts among the highest-priority victims.
  KeepBest(kept, [&](size_t i) {
    const auto& victims = candidates[i].victims;
    std::string_view earliest = StartKey(*victims.front());
    for (const PodInfo* v : victims) {
      if (v->priority == victims.front()->priority) earliest = std::min(earliest, StartKey(*v));
    }
    return earliest;
  });
  // 6. The first.
  return kept.front();
}

PostFilterResult DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod,
                                               const Snapshot& snapshot,
                                               std::span<const NodeVerdict> verdicts) const {
  PostFilterResult out;
  if (pod.preemption_policy == api::PreemptionPolicy::Never) {
    out.status = PluginStatus::Unschedulable(Preemption(kNotEligibleNever));
    return out;
  }
  const RunFilters* filters = state.Read<RunFilters>(kRunFiltersKey);
  if (filters == nullptr || !filters->run) {
    out.status = PluginStatus::Error("the cycle state holds no RunFilters");
    return out;
  }

  size_t potential = 0;
  for (const NodeVerdict& v : verdicts) {
    if (v.status.code() == PluginCode::kUnschedulable) ++potential;
  }
  const size_t wanted = NumCandidates(potential);
  // Each dry-run node's preemption verdict, for the message when none helps.
  std::vector<NodeVerdict> statuses;
  std::vector<Candidate> candidates;
  for (const NodeVerdict& v : verdicts) {
    if (candidates.size() >= wanted) break;
    if (v.status.code() != PluginCode::kUnschedulable) continue;
    const NodeInfo* node = snapshot.FindNode(v.node);
    if (node == nullptr) continue;
    Candidate c{v.node, {}};
    PluginStatus s = SelectVictims(state, *filters, pod, *node, c.victims);
    if (s.IsSuccess() && !c.victims.empty()) {
      candidates.push_back(std::move(c));
      continue;
    }
    // Fitting with no victim cannot follow from an Unschedulable filter
    // verdict; a PreFilter rejection may say so of every node, and then
    // evicting pods does not help either.
    if (s.IsSuccess()) s = PluginStatus::UnschedulableAndUnresolvable(std::string(kNoVictims));
    statuses.push_back(NodeVerdict{v.node, std::move(s)});
  }

  if (candidates.empty()) {
    // Every other node, visited or not, cannot be helped.
    const size_t all = snapshot.NumNodes();
    const PluginStatus not_helpful = PluginStatus::UnschedulableAndUnresolvable(std::string(kNotHelpful));
    while (statuses.size() < all) statuses.push_back(NodeVerdict{"", not_helpful});
    out.status = PluginStatus::Unschedulable(Preemption(FitErrorMessage(all, statuses)));
    out.clear_nomination = true;
    return out;
  }
  const Candidate& best = candidates[PickNode(candidates)];
  out.nominated_node = best.node;
  out.victims.reserve(best.victims.size());
  for (const PodInfo* v : best.victims) out.victims.push_back(v->uid);
  // Pods of lower priority nominated there lose the room they were promised.
  for (const auto& nominated : snapshot.NominatedPods(best.node)) {
    if (nominated->uid != pod.uid && nominated->priority < pod.priority) {
      out.cleared_nominations.push_back(nominated->uid);
    }
  }
  return out;
}

}  // namespace podflow::scheduler::plugins
