#include "scheduler/framework/profile.h"

#include <algorithm>

namespace podflow::scheduler {

ProfileConfig DefaultProfileConfig() {
  ProfileConfig config;
  config.filter = {"NodeUnschedulable", "NodeName",  "TaintToleration",
                   "NodeAffinity",      "NodePorts", "NodeResourcesFit",
                   "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "NodePressure",
                   "PodTopologySpread", "InterPodAffinity"};
  config.score = {{"TaintToleration", 3},
                  {"NodeAffinity", 2},
                  {"NodeResourcesFit", 1},
                  {"PodTopologySpread", 2},
                  {"InterPodAffinity", 2},
                  {"NodeResourcesBalancedAllocation", 1},
                  {"ImageLocality", 1},
                  {"NodePreferAvoidPods", 10000}};
  config.post_filter = {"DefaultPreemption"};
  return config;
}

namespace {

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Known(const Registry& registry) {
  std::string out;
  for (const auto& name : registry.Names()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

Result<Profile> Profile::Build(const Registry& registry, const ProfileConfig& config) {
  const std::string where = "profile " + Quoted(config.scheduler_name) + ": ";
  if (config.scheduler_name.empty()) return Status::Invalid("profile: schedulerName is empty");
  if (config.percentage_of_nodes_to_score < 0 || config.percentage_of_nodes_to_score > 100) {
    return Status::Invalid(where + "percentageOfNodesToScore must be in 0..100, got " +
                           std::to_string(config.percentage_of_nodes_to_score));
  }

  Profile profile;
  profile.config_ = config;
  // Instantiates `name` once; later uses share the instance.
  auto instance = [&](const std::string& point, const std::string& name) -> Result<const PluginInstance*> {
    for (const auto& existing : profile.instances_) {
      if (existing->name == name) return existing.get();
    }
    const PluginFactory* factory = registry.Find(name);
    if (factory == nullptr) {
      return Status::Invalid(where + point + " plugin " + Quoted(name) +
                             ": unknown plugin (known: " + Known(registry) + ")");
    }
    auto args_it = config.plugin_args.find(name);
    auto made = (*factory)(args_it != config.plugin_args.end() ? args_it->second : YAML::Node());
    if (!made.ok()) {
      return Status::Invalid(where + point + " plugin " + Quoted(name) + ": " +
                             made.status().message());
    }
    made->name = name;
    profile.instances_.push_back(std::make_unique<PluginInstance>(std::move(made).value()));
    return profile.instances_.back().get();
  };

  for (size_t i = 0; i < config.filter.size(); ++i) {
    const std::string& name = config.filter[i];
    if (std::find(config.filter.begin(), config.filter.begin() + i, name) !=
        config.filter.begin() + i) {
      return Status::Invalid(where + "filter plugin " + Quoted(name) + " is listed twice");
    }
    auto plugin = instance("filter", name);
    if (!plugin.ok()) return plugin.status();
    if ((*plugin)->filter == nullptr) {
      return Status::Invalid(where + "filter plugin " + Quoted(name) + " does not implement Filter");
    }
    profile.filter_.push_back(*plugin);
    if (!config.pre_filter && (*plugin)->pre_filter != nullptr) profile.pre_filter_.push_back(*plugin);
  }

  for (size_t i = 0; i < config.post_filter.size(); ++i) {
    const std::string& name = config.post_filter[i];
    if (std::find(config.post_filter.begin(), config.post_filter.begin() + i, name) !=
        config.post_filter.begin() + i) {
      return Status::Invalid(where + "postFilter plugin " + Quoted(name) + " is listed twice");
    }
    auto plugin = instance("postFilter", name);
    if (!plugin.ok()) return plugin.status();
    if ((*plugin)->post_filter == nullptr) {
      return Status::Invalid(where + "postFilter plugin " + Quoted(name) +
                             " does not implement PostFilter");
    }
    profile.post_filter_.push_back(*plugin);
  }

  for (size_t i = 0; i < config.score.size(); ++i) {
    const ScorePluginConfig& entry = config.score[i];
    for (size_t j = 0; j < i; ++j) {
      if (config.score[j].name == entry.name) {
        return Status::Invalid(where + "score plugin " + Quoted(entry.name) + " is listed twice");
      }
    }
    auto plugin = instance("score", entry.name);
    if (!plugin.ok()) return plugin.status();
    if ((*plugin)->score == nullptr) {
      return Status::Invalid(where + "score plugin " + Quoted(entry.name) +
                             " does not implement Score");
    }
    if (!entry.weight.has_value()) {
      return Status::Invalid(where + "score plugin " + Quoted(entry.name) + " has no weight");
    }
    if (*entry.weight <= 0) {
      return Status::Invalid(where + "score plugin " + Quoted(entry.name) +
                             ": weight must be positive, got " + std::to_string(*entry.weight));
    }
    profile.score_.push_back(ScoreEntry{*plugin, *entry.weight});
    if (!config.pre_score && (*plugin)->pre_score != nullptr) profile.pre_score_.push_back(*plugin);
  }
  // Explicit PreFilter / PreScore lists.
  auto explicit_list = [&](const std::optional<std::vector<std::string>>& names, const std::string& point,
                           bool want_pre_filter, std::vector<const PluginInstance*>& out) -> Status {
    if (!names) return Status::Ok();
    for (size_t i = 0; i < names->size(); ++i) {
      const std::string& name = (*names)[i];
      if (std::find(names->begin(), names->begin() + i, name) != names->begin() + i) {
        return Status::Invalid(where + point + " plugin " + Quoted(name) + " is listed twice");
      }
      auto plugin = instance(point, name);
      if (!plugin.ok()) return plugin.status();
      if ((want_pre_filter ? (*plugin)->pre_filter == nullptr : (*plugin)->pre_score == nullptr)) {
        return Status::Invalid(where + point + " plugin " + Quoted(name) + " does not implement " +
                               (want_pre_filter ? "PreFilter" : "PreScore"));
      }
      out.push_back(*plugin);
    }
    return Status::Ok();
  };
  PODFLOW_RETURN_IF_ERROR(explicit_list(config.pre_filter, "preFilter", true, profile.pre_filter_));
  PODFLOW_RETURN_IF_ERROR(explicit_list(config.pre_score, "preScore", false, profile.pre_score_));
  // The runner keeps one bit per filter / score plugin (skipped ones).
  if (profile.filter_.size() > kMaxPluginsPerPoint || profile.score_.size() > kMaxPluginsPerPoint) {
    return Status::Invalid(where + "at most " + std::to_string(kMaxPluginsPerPoint) +
                           " filter and " + std::to_string(kMaxPluginsPerPoint) + " score plugins");
  }
  // Args of a plugin no extension point enables are ignored, as
  // kube-scheduler does; args of a plugin nobody knows are a typo.
  for (const auto& [name, args] : config.plugin_args) {
    if (registry.Find(name) == nullptr) {
      return Status::Invalid(where + "pluginConfig " + Quoted(name) + ": unknown plugin (known: " +
                             Known(registry) + ")");
    }
  }
  return profile;
}

bool Profile::Handles(const PodInfo& pod) const {
  if (pod.scheduler_name.empty()) return config_.scheduler_name == kDefaultSchedulerName;
  return pod.scheduler_name == config_.scheduler_name;
}

}  // namespace podflow::scheduler
