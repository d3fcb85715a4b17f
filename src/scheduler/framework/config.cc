#include "scheduler/framework/config.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "base/yaml_reader.h"

namespace podflow::scheduler {
namespace {

constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";
constexpr std::string_view kKind = "KubeSchedulerConfiguration";
constexpr std::string_view kAll = "*";

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }
using yaml::Index;

struct Entry {
  std::string name;
  std::optional<int32_t> weight;
};

// One extension point's `enabled` / `disabled` lists.
struct PluginSet {
  std::vector<Entry> enabled;
  std::set<std::string, std::less<>> disabled;
  bool present = false;
};

Status CheckKeys(const YAML::Node& node, const std::string& path,
                 std::initializer_list<std::string_view> known) {
  if (!node.IsMap()) return Status::Invalid(path + ": expected a map");
  for (const auto& kv : node) {
    const std::optional<std::string> key_text = yaml::As<std::string>(kv.first);
    if (!key_text) return Status::Invalid(path + ": keys must be strings");
    const std::string& key = *key_text;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return Status::Invalid(path + "." + key + ": unknown field (known: " + list + ")");
    }
  }
  return Status::Ok();
}

template <typename T>
Result<T> Scalar(const YAML::Node& node, const std::string& path, std::string_view what) {
  return yaml::Scalar<T>(node, path, "expected " + std::string(what));
}

Result<std::vector<Entry>> ParseEntries(const YAML::Node& node, const std::string& path,
                                        const Registry& registry, bool may_be_all) {
  std::vector<Entry> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence()) return Status::Invalid(path + ": expected a list of {name, weight}");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = Index(path, i);
    PODFLOW_RETURN_IF_ERROR(CheckKeys(node[i], at, {"name", "weight"}));
    if (!node[i]["name"]) return Status::Invalid(at + ".name: required");
    Result<std::string> name = Scalar<std::string>(node[i]["name"], at + ".name", "a plugin name");
    if (!name.ok()) return name.status();
    const bool all = *name == kAll;
    if (all && !may_be_all) return Status::Invalid(at + ".name: \"*\" may only be disabled");
    if (!all && registry.Find(*name) == nullptr) {
      std::string known;
      for (const auto& n : registry.Names()) known += (known.empty() ? "" : ", ") + n;
      return Status::Invalid(at + ".name: unknown plugin " + Quoted(*name) + " (known: " + known + ")");
    }
    Entry e{std::move(name).value(), std::nullopt};
    if (node[i]["weight"]) {
      Result<int32_t> w = Scalar<int32_t>(node[i]["weight"], at + ".weight", "an integer");
      if (!w.ok()) return w.status();
      if (*w <= 0) return Status::Invalid(at + ".weight: must be positive, got " + std::to_string(*w));
      e.weight = *w;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<PluginSet> ParsePluginSet(const YAML::Node& node, const std::string& path, const Registry& registry) {
  PluginSet set;
  if (!node || node.IsNull()) return set;
  PODFLOW_RETURN_IF_ERROR(CheckKeys(node, path, {"enabled", "disabled"}));
  set.present = true;
  auto enabled = ParseEntries(node["enabled"], path + ".enabled", registry, false);
  if (!enabled.ok()) return enabled.status();
  set.enabled = std::move(enabled).value();
  auto disabled = ParseEntries(node["disabled"], path + ".disabled", registry, true);
  if (!disabled.ok()) return disabled.status();
  for (Entry& e : *disabled) set.disabled.insert(std::move(e.name));
  return set;
}

// kube-scheduler's merge of one extension point: defaults minus the
// disabled ones ("*": all), a default enabled again is re-configured where it
// stands, other enabled plugins follow in the order given.
std::vector<Entry> Merge(const std::vector<Entry>& defaults, const PluginSet& custom) {
  std::vector<Entry> out;
  std::vector<bool> used(custom.enabled.size(), false);
  if (!custom.disabled.contains(kAll)) {
    for (const Entry& d : defaults) {
      if (custom.disabled.contains(d.name)) continue;
      Entry e = d;
      for (size_t i = 0; i < custom.enabled.size(); ++i) {
        if (!used[i] && custom.enabled[i].name == d.name) {
          used[i] = true;
          if (custom.enabled[i].weight) e.weight = custom.enabled[i].weight;
          break;
        }
      }
      out.push_back(std::move(e));
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!used[i]) out.push_back(custom.enabled[i]);
  }
  return out;
}

std::vector<Entry> Entries(const std::vector<std::string>& names) {
  std::vector<Entry> out;
  for (const auto& n : names) out.push_back({n, std::nullopt});
  return out;
}

std::vector<std::string> Names(const std::vector<Entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

// Which extension points a plugin implements, learned from an instance
// built without args.
struct Points {
  bool pre_filter = false, filter = false, post_filter = false, pre_score = false, score = false;
};
Result<Points> PointsOf(const Registry& registry, const std::string& name) {
  const PluginFactory* factory = registry.Find(name);
  if (factory == nullptr) return Status::Invalid("unknown plugin " + Quoted(name));
  Result<PluginInstance> p = (*factory)(YAML::Node());
  if (!p.ok()) return p.status();
  return Points{p->pre_filter != nullptr, p->filter != nullptr, p->post_filter != nullptr,
                p->pre_score != nullptr, p->score != nullptr};
}

Result<ProfileConfig> ParseProfile(const YAML::Node& node, const std::string& path, const Registry& registry,
                                   const ProfileConfig& base) {
  PODFLOW_RETURN_IF_ERROR(CheckKeys(node, path, {"schedulerName", "percentageOfNodesToScore", "plugins",
                                                 "pluginConfig"}));
  ProfileConfig config = base;
  if (node["schedulerName"]) {
    auto name = Scalar<std::string>(node["schedulerName"], path + ".schedulerName", "a name");
    if (!name.ok()) return name.status();
    if (name->empty()) return Status::Invalid(path + ".schedulerName: must not be empty");
    config.scheduler_name = *name;
  }
  if (node["percentageOfNodesToScore"]) {
    auto pct = Scalar<int32_t>(node["percentageOfNodesToScore"], path + ".percentageOfNodesToScore",
                               "an integer in 0..100");
    if (!pct.ok()) return pct.status();
    if (*pct < 0 || *pct > 100) {
      return Status::Invalid(path + ".percentageOfNodesToScore: must be in 0..100, got " + std::to_string(*pct));
    }
    config.percentage_of_nodes_to_score = *pct;
  }

  if (const YAML::Node plugins = node["plugins"]; plugins && !plugins.IsNull()) {
    const std::string at = path + ".plugins";
    if (!plugins.IsMap()) return Status::Invalid(at + ": expected a map");
    std::map<std::string, PluginSet, std::less<>> sets;
    for (const auto& kv : plugins) {
      const std::optional<std::string> point_text = yaml::As<std::string>(kv.first);
      if (!point_text) return Status::Invalid(at + ": keys must be strings");
      const std::string& point = *point_text;
      static constexpr std::string_view kFixed[] = {"queueSort", "preEnqueue", "reserve", "permit",
                                                    "preBind",   "bind",       "postBind"};
      if (std::find(std::begin(kFixed), std::end(kFixed), point) != std::end(kFixed)) {
        return Status::Invalid(at + "." + point +
                               ": not configurable in podflow (one queue order: priority, then "
                               "creation time; binding is the binding stage)");
      }
      static constexpr std::string_view kPoints[] = {"multiPoint", "preFilter", "filter",
                                                     "postFilter", "preScore",  "score"};
      if (std::find(std::begin(kPoints), std::end(kPoints), point) == std::end(kPoints)) {
        return Status::Invalid(at + "." + point +
                               ": unknown extension point (known: multiPoint, preFilter, filter, "
                               "postFilter, preScore, score)");
      }
      auto set = ParsePluginSet(kv.second, at + "." + point, registry);
      if (!set.ok()) return set.status();
      sets[point] = std::move(set).value();
    }

    // Defaults of each point, from the base profile.
    std::vector<Entry> filter = Entries(base.filter);
    std::vector<Entry> post_filter = Entries(base.post_filter);
    std::vector<Entry> score;
    for (const auto& s : base.score) score.push_back({s.name, s.weight});
    std::vector<Entry> pre_filter, pre_score;
    for (const auto& e : filter) {
      auto p = PointsOf(registry, e.name);
      if (!p.ok()) return Status::Invalid(at + ": " + p.status().message());
      if (p->pre_filter) pre_filter.push_back({e.name, std::nullopt});
    }
    for (const auto& e : score) {
      auto p = PointsOf(registry, e.name);
      if (!p.ok()) return Status::Invalid(at + ": " + p.status().message());
      if (p->pre_score) pre_score.push_back({e.name, std::nullopt});
    }

    // multiPoint: disabled names leave every point; enabled plugins join
    // every point they implement (a point's own list may re-configure them).
    PluginSet& multi = sets["multiPoint"];
    auto add_multi = [&](PluginSet& set, bool Points::*has, bool scored) -> Status {
      for (const std::string& d : multi.disabled) set.disabled.insert(d);
      for (const Entry& e : multi.enabled) {
        auto p = PointsOf(registry, e.name);
        if (!p.ok()) return Status::Invalid(at + ".multiPoint: " + p.status().message());
        if (!((*p).*has)) continue;
        const bool named = std::any_of(set.enabled.begin(), set.enabled.end(),
                                       [&](const Entry& x) { return x.name == e.name; });
        if (!named) set.enabled.push_back({e.name, scored ? e.weight : std::nullopt});
      }
      return Status::Ok();
    };
    PODFLOW_RETURN_IF_ERROR(add_multi(sets["preFilter"], &Points::pre_filter, false));
    PODFLOW_RETURN_IF_ERROR(add_multi(sets["filter"], &Points::filter, false));
    PODFLOW_RETURN_IF_ERROR(add_multi(sets["postFilter"], &Points::post_filter, false));
    PODFLOW_RETURN_IF_ERROR(add_multi(sets["preScore"], &Points::pre_score, false));
    PODFLOW_RETURN_IF_ERROR(add_multi(sets["score"], &Points::score, true));

    config.filter = Names(Merge(filter, sets["filter"]));
    config.post_filter = Names(Merge(post_filter, sets["postFilter"]));
    config.score.clear();
    for (Entry& e : Merge(score, sets["score"])) {
      std::optional<int32_t> weight = e.weight;
      if (!weight) {
        for (const auto& d : base.score) {
          if (d.name == e.name) weight = d.weight;
        }
      }
      if (!weight) {
        return Status::Invalid(at + ".score: plugin " + Quoted(e.name) +
                               " has no weight (give it one: {name: " + e.name + ", weight: 1})");
      }
      config.score.push_back({e.name, weight});
    }
    if (sets["preFilter"].present || multi.present) config.pre_filter = Names(Merge(pre_filter, sets["preFilter"]));
    if (sets["preScore"].present || multi.present) config.pre_score = Names(Merge(pre_score, sets["preScore"]));
  }

  if (const YAML::Node args = node["pluginConfig"]; args && !args.IsNull()) {
    const std::string at = path + ".pluginConfig";
    if (!args.IsSequence()) return Status::Invalid(at + ": expected a list of {name, args}");
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string item = Index(at, i);
      PODFLOW_RETURN_IF_ERROR(CheckKeys(args[i], item, {"name", "args"}));
      auto name = Scalar<std::string>(args[i]["name"], item + ".name", "a plugin name");
      if (!name.ok()) return name.status();
      if (registry.Find(*name) == nullptr) {
        return Status::Invalid(item + ".name: unknown plugin " + Quoted(*name));
      }
      if (config.plugin_args.contains(*name)) {
        return Status::Invalid(item + ".name: args for " + Quoted(*name) + " are given twice");
      }
      config.plugin_args[*name] = YAML::Clone(args[i]["args"]);
    }
  }
  return config;
}

}  // namespace

Result<SchedulerConfig> ParseSchedulerConfig(const YAML::Node& section, const Registry& registry) {
  SchedulerConfig out;
  ProfileConfig base = DefaultProfileConfig();
  if (!section || section.IsNull()) {
    out.profiles.push_back(std::move(base));
    return out;
  }
  const std::string path = "scheduler";
  PODFLOW_RETURN_IF_ERROR(
      CheckKeys(section, path, {"apiVersion", "kind", "seed", "percentageOfNodesToScore", "profiles"}));
  if (section["apiVersion"]) {
    auto v = Scalar<std::string>(section["apiVersion"], path + ".apiVersion", "a string");
    if (!v.ok()) return v.status();
    if (*v != kApiVersion) {
      return Status::Invalid(path + ".apiVersion: expected " + std::string(kApiVersion) + ", got " + Quoted(*v));
    }
  }
  if (section["kind"]) {
    auto k = Scalar<std::string>(section["kind"], path + ".kind", "a string");
    if (!k.ok()) return k.status();
    if (*k != kKind) return Status::Invalid(path + ".kind: expected " + std::string(kKind) + ", got " + Quoted(*k));
  }
  if (section["seed"]) {
    auto seed = Scalar<uint64_t>(section["seed"], path + ".seed", "a non-negative integer");
    if (!seed.ok()) return seed.status();
    base.seed = *seed;
  }
  if (section["percentageOfNodesToScore"]) {
    auto pct = Scalar<int32_t>(section["percentageOfNodesToScore"], path + ".percentageOfNodesToScore",
                               "an integer in 0..100");
    if (!pct.ok()) return pct.status();
    if (*pct < 0 || *pct > 100) {
      return Status::Invalid(path + ".percentageOfNodesToScore: must be in 0..100, got " + std::to_string(*pct));
    }
    base.percentage_of_nodes_to_score = *pct;
  }
  const YAML::Node profiles = section["profiles"];
  if (!profiles || profiles.IsNull()) {
    out.profiles.push_back(std::move(base));
    return out;
  }
  if (!profiles.IsSequence() || profiles.size() == 0) {
    return Status::Invalid(path + ".profiles: expected a non-empty list of profiles");
  }
  for (size_t i = 0; i < profiles.size(); ++i) {
    const std::string at = Index(path + ".profiles", i);
    auto profile = ParseProfile(profiles[i], at, registry, base);
    if (!profile.ok()) return profile.status();
    for (const ProfileConfig& earlier : out.profiles) {
      if (earlier.scheduler_name == profile->scheduler_name) {
        return Status::Invalid(at + ".schedulerName: duplicate profile with scheduler name " +
                               Quoted(profile->scheduler_name));
      }
    }
    out.profiles.push_back(std::move(profile).value());
  }
  return out;
}

Result<std::vector<Profile>> BuildProfiles(const Registry& registry, const SchedulerConfig& config) {
  std::vector<Profile> out;
  out.reserve(config.profiles.size());
  for (const ProfileConfig& p : config.profiles) {
    Result<Profile> built = Profile::Build(registry, p);
    if (!built.ok()) return built.status();
    out.push_back(std::move(built).value());
  }
  return out;
}

const Profile* ProfileFor(const std::vector<Profile>& profiles, const PodInfo& pod) {
  for (const Profile& p : profiles) {
    if (p.Handles(pod)) return &p;
  }
  return nullptr;
}

}  // namespace podflow::scheduler
