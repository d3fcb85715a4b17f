#include "scheduler/framework/decision_record.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

namespace podflow::scheduler {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Persisted codes mirror PluginCode value for value.
static_assert(static_cast<int>(explain::VerdictCode::Success) == static_cast<int>(PluginCode::kSuccess));
static_assert(static_cast<int>(explain::VerdictCode::Unschedulable) ==
              static_cast<int>(PluginCode::kUnschedulable));
static_assert(static_cast<int>(explain::VerdictCode::UnschedulableAndUnresolvable) ==
              static_cast<int>(PluginCode::kUnschedulableAndUnresolvable));
static_assert(static_cast<int>(explain::VerdictCode::Error) == static_cast<int>(PluginCode::kError));

}  // namespace

std::string DecisionKey(std::string_view namespace_, std::string_view name) {
  return std::string(kDecisionPrefix) + std::string(namespace_.empty() ? "default" : namespace_) + "/" +
         std::string(name);
}

std::string DecisionKeyOfPod(std::string_view pod_key) {
  return std::string(kDecisionPrefix) + PodNameOfKey(pod_key);
}

std::string PodNameOfKey(std::string_view pod_key) {
  size_t slash = pod_key.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::string(pod_key);
  size_t ns = pod_key.rfind('/', slash - 1);
  return std::string(pod_key.substr(ns == std::string_view::npos ? 0 : ns + 1));
}

std::string SchedulerRunKey(uint64_t run) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(run));
  return std::string(kSchedulerRunPrefix) + hex;
}

std::string EncodeDecisionRecord(const Decision& d, const DecisionContext& c) {
  FlatBufferBuilder fbb(1024);
  // Score plugins: the profile's score order, as every NodeScores has it.
  std::vector<Offset<explain::ScorePlugin>> plugins;
  if (!d.scores.empty()) {
    for (const PluginScore& p : d.scores[0].plugins) {
      plugins.push_back(explain::CreateScorePlugin(fbb, fbb.CreateString(p.plugin), p.weight));
    }
  }
  // Feasible nodes: the selected one first (the tie-break may have chosen
  // any of the best), then by total; equal totals keep the visit order.
  std::vector<size_t> order(d.scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool sa = d.scores[a].node == d.node, sb = d.scores[b].node == d.node;
    if (sa != sb) return sa;
    return d.scores[a].total > d.scores[b].total;
  });
  if (order.size() > kMaxRecordedScoredNodes) order.resize(kMaxRecordedScoredNodes);
  std::vector<Offset<explain::NodeScore>> scores;
  for (size_t i : order) {
    const NodeScores& s = d.scores[i];
    std::vector<int64_t> raw, normalized, weighted;
    for (const PluginScore& p : s.plugins) {
      raw.push_back(p.raw);
      normalized.push_back(p.normalized);
      weighted.push_back(p.weighted);
    }
    scores.push_back(explain::CreateNodeScore(fbb, fbb.CreateString(s.node), s.total, fbb.CreateVector(raw),
                                              fbb.CreateVector(normalized), fbb.CreateVector(weighted)));
  }
  if (d.scores.empty() && d.scheduled()) {
    // One feasible node: chosen unscored.
    scores.push_back(explain::CreateNodeScore(fbb, fbb.CreateString(d.node)));
  }
  // Rejected nodes: the first ones in visit order, and a count per verdict.
  std::vector<Offset<explain::RejectedNode>> rejected;
  using VerdictKey = std::tuple<int, std::string, std::vector<std::string>>;
  std::map<VerdictKey, int64_t> counts;
  for (const NodeVerdict& v : d.verdicts) {
    if (v.status.IsSuccess()) continue;
    const std::vector<std::string>& reasons = v.status.reasons();
    if (rejected.size() < kMaxRecordedRejectedNodes) {
      rejected.push_back(explain::CreateRejectedNode(fbb, fbb.CreateString(v.node),
                                                     static_cast<explain::VerdictCode>(v.status.code()),
                                                     fbb.CreateString(v.status.plugin()),
                                                     fbb.CreateVectorOfStrings(reasons)));
    }
    ++counts[VerdictKey(static_cast<int>(v.status.code()), std::string(v.status.plugin()), reasons)];
  }
  std::vector<std::pair<VerdictKey, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<Offset<explain::RejectionCount>> rejection_counts;
  for (const auto& [key, count] : sorted) {
    rejection_counts.push_back(explain::CreateRejectionCount(
        fbb, static_cast<explain::VerdictCode>(std::get<0>(key)), fbb.CreateString(std::get<1>(key)),
        fbb.CreateVectorOfStrings(std::get<2>(key)), count));
  }
  std::vector<Offset<explain::CacheSource>> sources;
  int64_t revision = 0;
  for (const CacheSourceState& s : c.sources) {
    sources.push_back(explain::CreateCacheSource(fbb, fbb.CreateString(s.prefix), s.list_revision, s.revision));
    revision = std::max(revision, s.revision);
  }
  auto root = explain::CreateSchedulingDecision(
      fbb, fbb.CreateString(c.pod_key), fbb.CreateString(c.pod_uid), c.pod_mod_revision,
      fbb.CreateString(c.profile), fbb.CreateString(d.node), fbb.CreateString(d.message),
      fbb.CreateString(d.nominated_node), fbb.CreateVectorOfStrings(d.victims),
      static_cast<int64_t>(d.num_all_nodes), static_cast<int64_t>(d.feasible_nodes),
      static_cast<int64_t>(d.tied_nodes), d.tie_break_seed, static_cast<int64_t>(c.start_node_index),
      static_cast<int64_t>(d.next_start_node_index), revision, fbb.CreateVector(sources),
      fbb.CreateVector(plugins), fbb.CreateVector(scores), fbb.CreateVector(rejected),
      fbb.CreateVector(rejection_counts), c.run, c.seq, c.assumed_pods, c.decided_at_ms);
  fbb.Finish(root);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Result<const explain::SchedulingDecision*> ReadDecisionRecord(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (bytes.empty() || !verifier.VerifyBuffer<explain::SchedulingDecision>(nullptr)) {
    return Status::Invalid("not a scheduling decision record (" + std::to_string(bytes.size()) + " bytes)");
  }
  return flatbuffers::GetRoot<explain::SchedulingDecision>(bytes.data());
}

std::string EncodeSchedulerRun(uint64_t run, int64_t started_at_ms, std::string_view config_yaml) {
  FlatBufferBuilder fbb(256);
  fbb.Finish(explain::CreateSchedulerRun(fbb, run, started_at_ms, fbb.CreateString(config_yaml)));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Result<const explain::SchedulerRun*> ReadSchedulerRun(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (bytes.empty() || !verifier.VerifyBuffer<explain::SchedulerRun>(nullptr)) {
    return Status::Invalid("not a scheduler run record (" + std::to_string(bytes.size()) + " bytes)");
  }
  return flatbuffers::GetRoot<explain::SchedulerRun>(bytes.data());
}

}  // namespace podflow::scheduler
