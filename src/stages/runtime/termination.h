// Termination on delete of a pod this runtime has no runner for (one taken
// over as it was after a restart, see NodeAgentSet::AdoptPod): every
// container still running or waiting is stopped at once (a Killing event
// each, "Stopping container NAME"), and the pod's last status shows them
// all terminated. The status stage writes that status and then removes the
// pod, as kubelet's final delete with grace 0 does. Pods the runtime runs
// are stopped gracefully by their runner (PodRunner::Terminate).
#pragma once

#include <string>

#include "base/clock.h"
#include "model/report.h"
#include "pod_generated.h"

namespace podflow::runtime {

// The report that stops `pod` on `node_name` at `now` (its pod_key left for
// the caller). `mod_revision` is the pod's revision that asked for it.
model::Report TerminationReport(const api::PodT& pod, const std::string& node_name, int64_t mod_revision,
                                SimTime now);

}  // namespace podflow::runtime
