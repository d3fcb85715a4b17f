// What a simulated container does once it runs: when it exits and with what
// code, what it prints, how much memory it uses, when its probes fail and
// how it takes SIGTERM. Times are measured from the container's start.
//
// A behaviour comes from, in rising precedence: what the runtime reads in
// the container's command (`sleep 5`, `exit 1`, ...), the registry
// catalog's entry for its image (runtime.registry[].behavior), the pod's
// annotation `podflow.io/behavior` (every container) and the annotation
// `behavior.podflow.io/<container name>`. Each layer sets only the fields it
// names; Overlay merges them.
//
// The textual form (config and annotations) is a YAML map, for instance
// `{exitAfter: 5s, exitCode: 1}`; config/README.md lists the keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"

namespace podflow::model {

// "never" in the textual form: a time that does not come.
inline constexpr SimDuration kNever = SimDuration::max();

struct SimBehavior {
  std::optional<SimDuration> exit_after;  // the process ends by itself (kNever: runs until stopped)
  std::optional<int32_t> exit_code;       // its exit code then (0..255)
  std::optional<std::vector<std::string>> logs;    // lines printed at start
  std::optional<int64_t> memory_bytes;             // working set reached ...
  std::optional<SimDuration> memory_after;         // ... this long after start
  std::optional<SimDuration> start_delay;          // Created -> running
  std::optional<SimDuration> ready_after;          // readiness and startup probes fail before
  std::optional<SimDuration> unready_after;        // readiness fails from ...
  std::optional<SimDuration> unready_for;          // ... for this long (kNever: for good)
  std::optional<SimDuration> liveness_fail_after;  // liveness fails from then on
  std::optional<std::string> termination_message;  // written to terminationMessagePath
  std::optional<SimDuration>
      stop_after;  // SIGTERM -> exit (kNever: ignored, SIGKILL at the grace period)

  // The fields `over` sets replace this one's.
  void Overlay(const SimBehavior& over);
  bool empty() const;
};

// Reads the YAML map at `path`; every error names the key ("<path>.exitCode:
// must be an integer 0..255"). Unknown keys are errors.
Result<SimBehavior> ParseSimBehavior(const YAML::Node& node, const std::string& path);

// An annotation's value (`{exitAfter: 5s}`), errors naming the annotation
// as kube-apiserver names a field: metadata.annotations[KEY].
Result<SimBehavior> ParseSimBehaviorText(std::string_view text, const std::string& annotation_key);

// The annotation keys.
inline constexpr char kPodBehaviorAnnotation[] = "podflow.io/behavior";
inline constexpr char kContainerBehaviorPrefix[] = "behavior.podflow.io/";

}  // namespace podflow::model
