// The `controllers:` section of the cluster config: kube-controller-manager's
// flags for the controllers this stage runs.
#pragma once

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "stages/controllers/node_lifecycle.h"

namespace podflow::controllers {

struct ControllersConfig {
  NodeLifecycleConfig node_lifecycle;
};

// Reads `section` (absent: the defaults). Keys, Go durations as the flags
// take them: nodeMonitorPeriod (5s), nodeMonitorGracePeriod (50s),
// nodeStartupGracePeriod (60s). Invalid, naming the key, on an unknown key,
// a value that is not a duration, or a grace period not longer than the
// monitor period.
Result<ControllersConfig> ParseControllersConfig(const YAML::Node& section);

}  // namespace podflow::controllers
