// What one simulated container will do: its behaviour (the layers of
// model/sim_behavior.h merged over what its command reads as), and for
// each probe the spans of its run in which the probe fails and kubelet's
// words for the failure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/image_catalog.h"
#include "model/sim_behavior.h"
#include "pod_generated.h"
#include "stages/runtime/container_host.h"
#include "stages/runtime/shell_script.h"

namespace podflow::runtime {

enum class ProbeKind { kStartup, kLiveness, kReadiness };

// kubelet's name of the probe in its events: "Startup", "Liveness", "Readiness".
const char* ProbeName(ProbeKind kind);

// periodSeconds, 10 s when unset.
SimDuration ProbePeriod(const api::ProbeT& probe);

// [from, to) since the container's start; `to` may be model::kNever.
struct FailSpan {
  SimDuration from;
  SimDuration to;
  bool listening;  // whether the process accepts connections meanwhile
};

struct ContainerPlan {
  model::SimBehavior behavior;
  ScriptReading reading;
  // When each line of behavior.logs is printed, since the start: the
  // command's own times when its lines are the ones kept, else 0.
  std::vector<SimDuration> log_at;
  // Set when a behaviour annotation is invalid: the container is not
  // created (CreateContainerConfigError) and this says why.
  std::string config_error;
};

// Merges, for container `c` of `pod`: what its command reads as (after
// $(VAR) expansion against `kubelet_env`, its KubeletEnv), the catalog's
// behaviour for its image (`image` may be null), the pod's and the
// container's behaviour annotations.
ContainerPlan PlanContainer(const api::PodT& pod, const api::ContainerT& c,
                            const model::ResolvedImage* image, const EnvList& kubelet_env);

// The spans in which `probe` of kind `kind` fails, in time order.
std::vector<FailSpan> FailSpans(const ContainerPlan& plan, ProbeKind kind,
                                const api::ProbeT& probe);

// What kubelet puts after "<Kind> probe failed: " for `probe` failing in
// `span` on a pod at `pod_ip`.
std::string ProbeFailureOutput(const api::ProbeT& probe, const api::ContainerT& c,
                               const FailSpan& span, const std::string& pod_ip);

// A container's postStart hook as the runtime runs it: how long it takes
// (kNever: it does not end) and whether it fails.
struct HookRun {
  SimDuration takes{0};
  bool failed = false;
};

// The postStart hook of container `c` (nullopt: it has none), with `env` its
// environment: `sleep` takes its seconds; `exec` is its command read as a
// container's (`sleep 5; exit 1` takes 5 s and fails); an `httpGet` fails
// while the container does not listen yet (`readyAfter`).
std::optional<HookRun> PostStartHook(const ContainerPlan& plan, const api::ContainerT& c, const EnvList& env);

// The probe as the process runtime runs it for real, against a pod at
// `pod_ip` with the container's `env`; nullopt for what it does not run yet
// (https, grpc), which then follows the container's plan as on a simulated node.
std::optional<ProbeCheck> RealProbeCheck(const api::ProbeT& probe, const api::ContainerT& c,
                                         const std::string& pod_ip, const EnvList& env);

}  // namespace podflow::runtime

namespace podflow::runtime {

// kubelet's $(VAR) expansion: "$(NAME)" becomes NAME's value when `env`
// defines it and stays as written when not; "$$" is a literal "$" (so
// "$$(NAME)" is "$(NAME)"); any other "$" stays. A text whose expansion
// would pass 1 MiB is kept as written.
std::string ExpandKubeVars(std::string_view text, const EnvList& env);

// What a container runs on a process node, by kubelet's rules over the
// image's config: its command, else the image's entrypoint; then its args,
// else (when it has no command) the image's cmd; each $(VAR) expanded
// against `env`. An image the registry lists without entrypoint or cmd, or
// does not list, has those of a few well-known images: busybox and alpine
// run sh, debian and ubuntu bash, nginx a small HTTP server that answers
// nginx's welcome page on the container's first containerPort (80 without
// one). Empty when there is nothing to run.
std::vector<std::string> ProcessArgv(const api::ContainerT& c, const model::ResolvedImage* image,
                                     const EnvList& env);

// The process's environment: PATH, HOSTNAME and HOME as the runtime sets
// them, then `kubelet_env` (the container's KubeletEnv, pod_config.h),
// which may override them.
EnvList ContainerEnv(const api::PodT& pod, const EnvList& kubelet_env);

}  // namespace podflow::runtime
