#include "stages/controllers/config.h"

#include <string>
#include <utility>

#include "base/yaml_reader.h"

namespace podflow::controllers {

Result<ControllersConfig> ParseControllersConfig(const YAML::Node& section) {
  ControllersConfig config;
  if (yaml::Absent(section)) return config;
  if (!section.IsMap()) return Status::Invalid("controllers: must be a map");
  NodeLifecycleConfig& n = config.node_lifecycle;
  const std::pair<const char*, SimDuration*> keys[] = {{"nodeMonitorPeriod", &n.monitor_period},
                                                       {"nodeMonitorGracePeriod", &n.grace_period},
                                                       {"nodeStartupGracePeriod", &n.startup_grace_period}};
  for (const auto& entry : section) {
    const std::optional<std::string> key = yaml::As<std::string>(entry.first);
    bool known = false;
    for (const auto& [name, into] : keys) {
      if (key != name) continue;
      known = true;
      const std::string where = yaml::Child("controllers", name);
      Result<std::string> text = yaml::Scalar<std::string>(entry.second, where, "must be a duration such as 5s");
      if (!text.ok()) return text.status();
      std::optional<SimDuration> d = ParseGoDuration(*text);
      if (!d || d->count() <= 0) return Status::Invalid(where + ": must be a positive duration such as 5s, not \"" + *text + "\"");
      *into = *d;
    }
    if (!known) return Status::Invalid("controllers." + key.value_or("?") + ": unknown field");
  }
  // podflow's own rule: a node is looked at at least once within its grace
  // period, or it could time out between two looks unseen.
  if (n.grace_period <= n.monitor_period) {
    return Status::Invalid("controllers.nodeMonitorGracePeriod: must be longer than nodeMonitorPeriod");
  }
  return config;
}

}  // namespace podflow::controllers
