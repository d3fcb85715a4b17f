// InterPodAffinity args, PreScore, Score and NormalizeScore.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/framework/affinity_index.h"
#include "scheduler/plugins/args_yaml.h"
#include "scheduler/plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kPreScoreKey = "PreScoreInterPodAffinity";

// Per topology key, the score of each of its domains.
struct PreScoreState {
  std::vector<std::pair<std::string, ValueCounts>> scores;

  void Add(const std::string& topology_key, const std::string& value, int64_t delta) {
    auto it = std::find_if(scores.begin(), scores.end(),
                           [&](const auto& s) { return s.first == topology_key; });
    if (it == scores.end()) {
      scores.emplace_back(topology_key, ValueCounts());
      it = scores.end() - 1;
    }
    // A domain stays listed at 0 too: it was scored.
    auto [at, _] = it->second.try_emplace(value, 0);
    at->second += delta;
  }
};

const Labels kNoLabels;

}  // namespace

Result<InterPodAffinity> InterPodAffinity::FromArgs(const YAML::Node& node) {
  PODFLOW_RETURN_IF_ERROR(
      args::CheckMap(node, "", {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}));
  InterPodAffinity out;
  if (args::Absent(node)) return out;
  if (const YAML::Node w = node["hardPodAffinityWeight"]; !args::Absent(w)) {
    auto weight = args::Int(w, "hardPodAffinityWeight");
    if (!weight.ok()) return weight.status();
    if (*weight < 0 || *weight > kMaxHardPodAffinityWeight) {
      return Status::Invalid("hardPodAffinityWeight: Invalid value: " + std::to_string(*weight) +
                             ": not in valid range [0-100]");
    }
    out.hard_pod_affinity_weight_ = static_cast<int32_t>(*weight);
  }
  if (const YAML::Node b = node["ignorePreferredTermsOfExistingPods"]; !args::Absent(b)) {
    Result<bool> value =
        yaml::Scalar<bool>(b, "ignorePreferredTermsOfExistingPods", "must be a boolean");
    if (!value.ok()) return value.status();
    out.ignore_preferred_terms_of_existing_pods_ = *value;
  }
  return out;
}

PluginStatus InterPodAffinity::PreScore(CycleState& cycle, const PodInfo& pod,
                                        const Snapshot& snapshot,
                                        std::span<const NodeInfo* const> feasible) const {
  // Skip: no term can score this pod, so every node would score 0 (a
  // missing state scores 0, and 0 everywhere normalizes to 0).
  if (feasible.empty()) return PluginStatus::Skip();
  const PodAffinityTerms& own = pod.pod_affinity;
  const bool has_preferred = !own.preferred_affinity.empty() || !own.preferred_anti_affinity.empty();
  if (ignore_preferred_terms_of_existing_pods_ && !has_preferred) return PluginStatus::Skip();
  // No running pod has terms that could score this one.
  if (!has_preferred && snapshot.affinity().scoring_pods() == 0) return PluginStatus::Skip();

  const Labels* own_ns = snapshot.NamespaceLabels(pod.namespace_);
  if (own_ns == nullptr) own_ns = &kNoLabels;
  auto state = std::make_shared<PreScoreState>();
  bool scored = false;

  // Adds `weight` to the existing pod's domain of `term` when `term`
  // matches the pod in `ns` with `labels`.
  auto process = [&](const AffinityTerm& term, int64_t weight, std::string_view ns,
                     const Labels& labels, const Labels* ns_labels, const NodeInfo& node) {
    if (!term.Matches(ns, labels, ns_labels)) return;
    const std::string* value = FindLabel(node.labels, term.topology_key);
    if (value == nullptr) return;
    state->Add(term.topology_key, *value, weight);
    scored = true;
  };

  auto visit = [&](const NodeInfo& node) {
    if (node.labels.empty()) return;
    // Without preferred terms of its own, only pods declaring affinity can
    // add to the pod's score.
    const auto& pods = has_preferred ? node.pods() : node.pods_with_affinity();
    for (const auto& existing_ptr : pods) {
      const PodInfo& existing = *existing_ptr;
      if (has_preferred) {
        const Labels* existing_ns = snapshot.NamespaceLabels(existing.namespace_);
        for (const WeightedAffinityTerm& w : own.preferred_affinity) {
          process(w.term, w.weight, existing.namespace_, existing.labels, existing_ns, node);
        }
        for (const WeightedAffinityTerm& w : own.preferred_anti_affinity) {
          process(w.term, -int64_t{w.weight}, existing.namespace_, existing.labels, existing_ns, node);
        }
      }
      const PodAffinityTerms& theirs = existing.pod_affinity;
      if (hard_pod_affinity_weight_ > 0) {
        for (const AffinityTerm& t : theirs.required_affinity) {
          process(t, hard_pod_affinity_weight_, pod.namespace_, pod.labels, own_ns, node);
        }
      }
      for (const WeightedAffinityTerm& w : theirs.preferred_affinity) {
        process(w.term, w.weight, pod.namespace_, pod.labels, own_ns, node);
      }
      for (const WeightedAffinityTerm& w : theirs.preferred_anti_affinity) {
        process(w.term, -int64_t{w.weight}, pod.namespace_, pod.labels, own_ns, node);
      }
    }
  };
  if (has_preferred) {
    for (const NodeInfo& node : snapshot.nodes()) visit(node);
  } else {
    // As kube-scheduler: only the nodes holding pods with affinity, not
    // every node of a large cluster on every cycle. The scores are sums,
    // so the order of the visit does not matter.
    for (const std::string& name : snapshot.NodesWithAffinityPods()) {
      if (const NodeInfo* node = snapshot.FindNode(name)) visit(*node);
    }
  }
  if (!scored) return PluginStatus::Skip();
  cycle.Write<PreScoreState>(std::string(kPreScoreKey), std::move(state));
  return PluginStatus::Success();
}

int64_t InterPodAffinity::Score(const CycleState& cycle, const PodInfo&, const NodeInfo& node) const {
  const PreScoreState* state = cycle.Read<PreScoreState>(kPreScoreKey);
  if (state == nullptr) return 0;
  int64_t score = 0;
  for (const auto& [topology_key, domains] : state->scores) {
    const std::string* value = FindLabel(node.labels, topology_key);
    if (value != nullptr) score += CountOf(domains, *value);
  }
  return score;
}

void InterPodAffinity::NormalizeScore(const PodInfo&, std::span<int64_t> scores) const {
  if (scores.empty()) return;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  for (int64_t s : scores) {
    min = std::min(min, s);
    max = std::max(max, s);
  }
  const int64_t diff = max - min;
  for (int64_t& s : scores) {
    // The same double arithmetic as kube-scheduler, truncated.
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(kMaxNodeScore) *
          (static_cast<double>(s - min) / static_cast<double>(diff));
    }
    s = static_cast<int64_t>(f);
  }
}

}  // namespace podflow::scheduler::plugins
