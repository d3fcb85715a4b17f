// A cycle's PreFilter, Filter and PostFilter phases (runner_internal.h).
#include <algorithm>
#include <iterator>
#include <memory>

#include "scheduler/framework/runner_internal.h"

namespace podflow::scheduler::internal {
namespace {

constexpr std::string_view kFilteredByPreFilter = "node is filtered out by the prefilter result";

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

// Internal: a filter plugin failed on `node` (a bug, not a verdict).
Status FilterError(const PluginStatus& verdict, const NodeInfo& node) {
  return Status::Internal("running " + Quoted(verdict.plugin()) + " filter plugin on node " +
                          node.name + ": " + verdict.ToString());
}

bool InNarrowing(const PreFilterOutcome& pre, const std::string& node) {
  return !pre.only.has_value() || std::binary_search(pre.only->begin(), pre.only->end(), node);
}

// The reason of an empty narrowing: as kube-scheduler, the plugins that
// narrowed the set, and no preemption can change that.
std::string EmptyNarrowingReason(const std::vector<std::string_view>& narrowed_by) {
  if (narrowed_by.size() == 1) return "node(s) didn't satisfy plugin " + std::string(narrowed_by[0]);
  std::string reason = "node(s) didn't satisfy plugin(s) [";
  for (size_t i = 0; i < narrowed_by.size(); ++i) {
    reason += (i ? " " : "") + std::string(narrowed_by[i]);
  }
  return reason + "] simultaneously";
}

}  // namespace

Result<PreFilterOutcome> RunPreFilter(Cycle& c) {
  PreFilterOutcome out;
  std::vector<std::string_view> narrowed_by;
  std::vector<const PluginInstance*> skipped;
  auto filter_skips = [&] {
    return SkipMask(c.profile.filter_plugins(), skipped, [](const PluginInstance* p) { return p; });
  };
  auto reject_all = [&](PluginStatus status) -> Result<PreFilterOutcome> {
    out.filter_skips = filter_skips();
    out.rejection = std::move(status);
    return out;
  };
  for (const PluginInstance* plugin : c.profile.pre_filter_plugins()) {
    PreFilterResult r = TimedCall(c.timer, plugin->name, ExtensionPoint::kPreFilter, [&] {
      return plugin->pre_filter(plugin->self.get(), c.state, c.pod, c.snapshot);
    });
    if (r.status.code() == PluginCode::kSkip) {
      skipped.push_back(plugin);
      continue;
    }
    if (r.status.IsSuccess()) {
      if (r.node_names.has_value()) {
        narrowed_by.push_back(plugin->name);
        std::sort(r.node_names->begin(), r.node_names->end());
        if (!out.only.has_value()) {
          out.only = std::move(r.node_names);
        } else {
          std::vector<std::string> both;
          std::set_intersection(out.only->begin(), out.only->end(), r.node_names->begin(),
                                r.node_names->end(), std::back_inserter(both));
          out.only = std::move(both);
        }
        if (out.only->empty()) {
          PluginStatus status =
              PluginStatus::UnschedulableAndUnresolvable(EmptyNarrowingReason(narrowed_by));
          status.set_plugin(plugin->name);
          return reject_all(std::move(status));
        }
      }
      continue;
    }
    r.status.set_plugin(plugin->name);
    if (r.status.code() == PluginCode::kError) {
      return Status::Internal("running " + Quoted(plugin->name) +
                              " prefilter plugin: " + r.status.ToString());
    }
    return reject_all(std::move(r.status));
  }
  out.filter_skips = filter_skips();
  if (!narrowed_by.empty()) out.narrowed_by = narrowed_by.back();
  return out;
}

void RejectAllNodes(Cycle& c, PluginStatus status, uint64_t filter_skips,
                    Clock::time_point pre_filter_began, Decision& d) {
  // kube-scheduler words this "0/N nodes are available: <reason>." and
  // counts the status for every node (preemption reads it).
  const std::vector<NodeInfo>& nodes = c.snapshot.nodes();
  d.verdicts.reserve(nodes.size());
  for (const NodeInfo& node : nodes) d.verdicts.push_back(NodeVerdict{node.name, status});
  std::string reasons;
  for (const std::string& reason : status.reasons()) {
    if (!reasons.empty()) reasons += ", ";
    reasons += reason;
  }
  d.message = "0/" + std::to_string(nodes.size()) + " nodes are available: " + reasons + ".";
  RecordPoint(c.timer, ExtensionPoint::kPreFilter, pre_filter_began);
  RunPostFilter(c, filter_skips, d);
}

void RejectNodesLeftOut(const Cycle& c, const PreFilterOutcome& pre, Decision& d) {
  // kube-scheduler records them so, and counts them in the event: "2 node is
  // filtered out by the prefilter result".
  if (!pre.only.has_value()) return;
  PluginStatus out = PluginStatus::UnschedulableAndUnresolvable(std::string(kFilteredByPreFilter));
  out.set_plugin(pre.narrowed_by);
  for (const NodeInfo& node : c.snapshot.nodes()) {
    if (!InNarrowing(pre, node.name)) d.verdicts.push_back(NodeVerdict{node.name, out});
  }
}

Result<bool> TryNominatedNode(Cycle& c, const PreFilterOutcome& pre, Decision& d) {
  // As kube-scheduler's evaluateNominatedNode: passing there, the pod is
  // placed unscored; otherwise every node is filtered as usual.
  if (c.pod.nominated_node_name.empty()) return false;
  const NodeInfo* nominated = c.snapshot.FindNode(c.pod.nominated_node_name);
  if (nominated == nullptr || !InNarrowing(pre, nominated->name)) return false;
  PluginStatus verdict = RunFiltersWithNominatedPods(c.profile, pre.filter_skips, c.state, c.pod,
                                                     *nominated, c.snapshot, c.filter_us);
  if (verdict.code() == PluginCode::kError) return FilterError(verdict, *nominated);
  if (!verdict.IsSuccess()) return false;
  d.verdicts.push_back(NodeVerdict{nominated->name, std::move(verdict)});
  d.feasible_nodes = 1;
  d.node = nominated->name;
  d.tied_nodes = 1;
  d.next_start_node_index = c.start;
  return true;
}

Result<std::vector<size_t>> FindFeasibleNodes(Cycle& c, const PreFilterOutcome& pre,
                                              EquivalenceCache::Class* cached, Decision& d) {
  const std::vector<NodeInfo>& nodes = c.snapshot.nodes();
  const size_t n = nodes.size();
  const size_t to_find = NumFeasibleNodesToFind(c.profile.config().percentage_of_nodes_to_score, n);
  std::vector<size_t> feasible_at;  // positions in nodes
  feasible_at.reserve(to_find);
  d.verdicts.reserve(std::min(n, 2 * to_find));
  size_t visited = 0;
  for (; visited < n && feasible_at.size() < to_find; ++visited) {
    const size_t at = (c.start + visited) % n;
    const NodeInfo& node = nodes[at];
    if (!InNarrowing(pre, node.name)) continue;
    // Pods nominated here make the verdict depend on more than the node.
    const bool reusable = cached != nullptr && (!c.snapshot.HasNominatedPods() ||
                                                c.snapshot.NominatedPods(node.name).empty());
    if (reusable && cached->node_generation[at] == c.snapshot.NodeGeneration(at)) {
      if (cached->verdict[at].IsSuccess()) feasible_at.push_back(at);
      d.verdicts.push_back(NodeVerdict{node.name, cached->verdict[at]});
      continue;
    }
    PluginStatus verdict = RunFiltersWithNominatedPods(c.profile, pre.filter_skips, c.state, c.pod,
                                                       node, c.snapshot, c.filter_us);
    if (verdict.code() == PluginCode::kError) return FilterError(verdict, node);
    if (reusable) {
      cached->node_generation[at] = c.snapshot.NodeGeneration(at);
      cached->verdict[at] = verdict;
      cached->scored[at] = 0;
    }
    if (verdict.IsSuccess()) feasible_at.push_back(at);
    d.verdicts.push_back(NodeVerdict{node.name, std::move(verdict)});
  }
  d.next_start_node_index = (c.start + visited) % n;
  d.feasible_nodes = feasible_at.size();
  return feasible_at;
}

void RunPostFilter(Cycle& c, uint64_t filter_skips, Decision& d) {
  // When no PostFilter plugin nominates a node, their reasons, joined with
  // ", ", complete the message as kube-scheduler's FitError does:
  // " <reasons>.".
  if (c.profile.post_filter_plugins().empty()) return;
  const Clock::time_point began = Clock::now();
  c.state.Write<RunFilters>(
      std::string(kRunFiltersKey),
      std::make_shared<const RunFilters>(RunFilters{
          [&profile = c.profile, &snapshot = c.snapshot, filter_skips](
              const CycleState& st, const PodInfo& p, const NodeInfo& node) {
            return RunFiltersWithNominatedPods(profile, filter_skips, st, p, node, snapshot);
          }}));
  std::string said;
  for (const PluginInstance* plugin : c.profile.post_filter_plugins()) {
    PostFilterResult r = TimedCall(c.timer, plugin->name, ExtensionPoint::kPostFilter, [&] {
      return plugin->post_filter(plugin->self.get(), c.state, c.pod, c.snapshot, d.verdicts);
    });
    if (r.status.IsSuccess() && !r.nominated_node.empty()) {
      d.nominated_node = std::move(r.nominated_node);
      d.victims = std::move(r.victims);
      d.cleared_nominations = std::move(r.cleared_nominations);
      RecordPoint(c.timer, ExtensionPoint::kPostFilter, began);
      return;
    }
    if (r.clear_nomination) d.clear_nomination = true;
    for (const std::string& reason : r.status.reasons()) {
      if (!said.empty()) said += ", ";
      said += reason;
    }
  }
  if (!said.empty()) d.message += " " + said + ".";
  RecordPoint(c.timer, ExtensionPoint::kPostFilter, began);
}

}  // namespace podflow::scheduler::internal
