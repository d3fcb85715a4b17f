// Profile: which plugins run at each extension point, in which order, with
// which score weights; built from a ProfileConfig and checked against the
// registry (kubernetes apis/config KubeSchedulerProfile, default_plugins.go).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/registry.h"

namespace podflow::scheduler {

struct ScorePluginConfig {
  std::string name;
  std::optional<int32_t> weight;  // required, > 0
};

struct ProfileConfig {
  // Pods whose spec.schedulerName is this (empty counts as
  // "default-scheduler") are scheduled by this profile.
  std::string scheduler_name{kDefaultSchedulerName};
  // Run in this order; the first rejection wins. A filter plugin that also
  // implements PreFilter has it run once per cycle before any Filter.
  std::vector<std::string> filter;
  // A score plugin that also implements PreScore has it run once per cycle
  // over the feasible nodes before any Score.
  std::vector<ScorePluginConfig> score;
  // When set, exactly these plugins run PreFilter / PreScore (each must
  // implement it); unset: every filter (score) plugin that implements
  // PreFilter (PreScore). Disabling a PreFilter its Filter needs is the
  // configuration's mistake; the plugin then reports an Error.
  std::optional<std::vector<std::string>> pre_filter;
  std::optional<std::vector<std::string>> pre_score;
  // Run in order when no node is feasible, until one nominates a node
  // (DefaultPreemption).
  std::vector<std::string> post_filter;
  // pluginConfig: args by plugin name, handed to the plugin's factory.
  std::map<std::string, YAML::Node, std::less<>> plugin_args;
  // kube-scheduler's percentageOfNodesToScore: 0 is adaptive (50% minus
  // 1% per 125 nodes, at least 5%); clusters under 100 nodes are always
  // filtered whole. 1..100 fixes the percentage.
  int32_t percentage_of_nodes_to_score = 0;
  // Seed of the tie-break among nodes of equal best score.
  uint64_t seed = 0;
};

// kube-scheduler's default profile restricted to the plugins podflow has, in
// its order and with its weights (TaintToleration 3, NodeAffinity 2,
// NodeResourcesFit 1, PodTopologySpread 2, NodeResourcesBalancedAllocation 1,
// ImageLocality 1; postFilter DefaultPreemption), plus two of the seeds'
// checks kube-scheduler dropped: the NodePressure filter (node conditions,
// after the volume filters) and the NodePreferAvoidPods score (weight 10000).
// The lists themselves are in profile.cc.
ProfileConfig DefaultProfileConfig();

inline constexpr size_t kMaxPluginsPerPoint = 64;

class Profile {
 public:
  struct ScoreEntry {
    const PluginInstance* plugin;
    int64_t weight;
  };

  // Instantiates each named plugin once (a plugin used at several points is
  // one instance). Invalid, naming the entry, when: the scheduler name is
  // empty; a plugin is unknown to `registry`; a plugin is listed twice at one
  // point; a plugin lacks the extension point it is listed at; a score
  // plugin has no weight or a weight <= 0; the percentage is outside 0..100.
  static Result<Profile> Build(const Registry& registry, const ProfileConfig& config);

  Profile(Profile&&) = default;
  Profile& operator=(Profile&&) = default;
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  const std::string& scheduler_name() const { return config_.scheduler_name; }
  const ProfileConfig& config() const { return config_; }
  const std::vector<const PluginInstance*>& filter_plugins() const { return filter_; }
  // The filter plugins that implement PreFilter, in filter order.
  const std::vector<const PluginInstance*>& pre_filter_plugins() const { return pre_filter_; }
  const std::vector<const PluginInstance*>& post_filter_plugins() const { return post_filter_; }
  // The score plugins that implement PreScore, in score order.
  const std::vector<const PluginInstance*>& pre_score_plugins() const { return pre_score_; }
  const std::vector<ScoreEntry>& score_plugins() const { return score_; }

  // Whether this profile schedules `pod` (by spec.schedulerName).
  bool Handles(const PodInfo& pod) const;

 private:
  Profile() = default;

  ProfileConfig config_;
  // Heap-held so that names and plugin pointers stay put when a Profile moves.
  std::vector<std::unique_ptr<PluginInstance>> instances_;
  std::vector<const PluginInstance*> filter_;
  std::vector<const PluginInstance*> pre_filter_;
  std::vector<const PluginInstance*> post_filter_;
  std::vector<const PluginInstance*> pre_score_;
  std::vector<ScoreEntry> score_;
};

}  // namespace podflow::scheduler
