// SchedulerConfig: the `scheduler:` section of the cluster config, in the
// shape of kube-scheduler's KubeSchedulerConfiguration (v1):
//
//   scheduler:
//     seed: 1                        # podflow: tie-break seed
//     percentageOfNodesToScore: 0    # 0: adaptive; 1..100
//     profiles:
//       - schedulerName: default-scheduler
//         percentageOfNodesToScore: 50   # overrides the top-level value
//         plugins:
//           multiPoint: {enabled: [{name: X, weight: 2}], disabled: [{name: Y}]}
//           filter:     {enabled: [...], disabled: [{name: "*"}]}
//           score:      {enabled: [{name: NodeResourcesFit, weight: 1}]}
//           postFilter: {disabled: [{name: DefaultPreemption}]}
//         pluginConfig:
//           - name: NodeResourcesFit
//             args: {scoringStrategy: {type: MostAllocated}}
//
// Each extension point starts from the default profile's plugins; disabled
// names (or "*", all of them) are dropped, and enabled ones re-configure a
// default in place (keeping its order) or are appended. multiPoint enables
// a plugin at every point it implements, after the defaults and before the
// point's own list. A score plugin enabled without a weight takes its
// default weight when the default profile has one, and is otherwise an
// error. Without `profiles`, one default profile. apiVersion / kind may be
// given (kubescheduler.config.k8s.io/v1, KubeSchedulerConfiguration).
#pragma once

#include <cstdint>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/profile.h"
#include "scheduler/framework/registry.h"

namespace podflow::scheduler {

struct SchedulerConfig {
  // One per schedulerName, in the order given.
  std::vector<ProfileConfig> profiles;
};

// Parses and checks the section (null: the default profile). Errors are
// Invalid and name the field by its path, e.g.
// `scheduler.profiles[0].plugins.score.enabled[1]: plugin "Foo" has no weight`.
// Plugins are looked up in `registry` (to expand multiPoint and to reject
// unknown names); their args are checked when the profile is built.
Result<SchedulerConfig> ParseSchedulerConfig(const YAML::Node& section, const Registry& registry);

// Builds every profile of `config`; Invalid names the profile.
Result<std::vector<Profile>> BuildProfiles(const Registry& registry, const SchedulerConfig& config);

// The profile that schedules `pod` (by spec.schedulerName), or nullptr: a
// pod for a scheduler podflow does not run is left alone, as kube-scheduler
// leaves pods of other schedulers.
const Profile* ProfileFor(const std::vector<Profile>& profiles, const PodInfo& pod);

}  // namespace podflow::scheduler
