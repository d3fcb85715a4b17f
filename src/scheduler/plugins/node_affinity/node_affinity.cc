#include "scheduler/plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "scheduler/plugins/helper/normalize_score.h"

namespace podflow::scheduler::plugins {
namespace {

using Op = api::NodeSelectorOperator;

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, nothing else.
std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.starts_with('+')) {
    s.remove_prefix(1);
    if (s.starts_with('-')) return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool Listed(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

bool MatchesLabelRequirement(const NodeSelectorRequirement& r, const NodeInfo& node) {
  const std::string* value = FindLabel(node.labels, r.key);
  switch (r.op) {
    case Op::In:
      return !r.values.empty() && value != nullptr && Listed(r.values, *value);
    case Op::NotIn:
      return !r.values.empty() && (value == nullptr || !Listed(r.values, *value));
    case Op::Exists:
      return r.values.empty() && value != nullptr;
    case Op::DoesNotExist:
      return r.values.empty() && value == nullptr;
    case Op::Gt:
    case Op::Lt: {
      if (r.values.size() != 1) return false;
      auto want = ParseInt(r.values[0]);
      if (!want || value == nullptr) return false;
      auto have = ParseInt(*value);
      if (!have) return false;
      return r.op == Op::Gt ? *have > *want : *have < *want;
    }
    case Op::Unset:
      return false;
  }
  return false;
}

bool MatchesFieldRequirement(const NodeSelectorRequirement& r, const NodeInfo& node) {
  if (r.values.size() != 1) return false;
  // fields.Set{"metadata.name": name}: other keys read as "".
  std::string_view field = r.key == "metadata.name" ? std::string_view(node.name) : std::string_view();
  switch (r.op) {
    case Op::In: return field == r.values[0];
    case Op::NotIn: return field != r.values[0];
    default: return false;
  }
}

bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const NodeInfo& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    if (!MatchesLabelRequirement(r, node)) return false;
  }
  for (const auto& r : term.match_fields) {
    if (!MatchesFieldRequirement(r, node)) return false;
  }
  return true;
}

bool MatchesNodeSelector(const NodeSelector& selector, const NodeInfo& node) {
  return std::any_of(selector.terms.begin(), selector.terms.end(),
                     [&](const NodeSelectorTerm& t) { return MatchesNodeSelectorTerm(t, node); });
}

PluginStatus NodeAffinity::Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (added_required_.has_value() && !MatchesNodeSelector(*added_required_, node)) {
    return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonEnforced));
  }
  bool match = std::all_of(pod.node_selector.begin(), pod.node_selector.end(), [&](const auto& kv) {
    const std::string* value = FindLabel(node.labels, kv.first);
    return value != nullptr && *value == kv.second;
  });
  if (match && pod.required_node_affinity.has_value()) {
    match = MatchesNodeSelector(*pod.required_node_affinity, node);
  }
  if (match) return PluginStatus::Success();
  return PluginStatus::UnschedulableAndUnresolvable(std::string(kErrReasonPod));
}

int64_t NodeAffinity::Score(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  int64_t count = 0;
  for (const PreferredSchedulingTerm& t : added_preferred_) {
    if (MatchesNodeSelectorTerm(t.preference, node)) count += t.weight;
  }
  for (const PreferredSchedulingTerm& t : pod.preferred_node_affinity) {
    if (MatchesNodeSelectorTerm(t.preference, node)) count += t.weight;
  }
  return count;
}

void NodeAffinity::NormalizeScore(const PodInfo&, std::span<int64_t> scores) const {
  helper::DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
}

}  // namespace podflow::scheduler::plugins
