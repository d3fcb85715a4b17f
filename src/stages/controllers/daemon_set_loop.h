// The DaemonSet controller's loop: follows the DaemonSets and, while there
// are any, the nodes and the pods, and syncs each DaemonSet that changed,
// whose pods did, or that a node's labels or taints concern, from a
// rate-limited work queue, writing through the API as
// system:serviceaccount:kube-system:daemon-set-controller.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kDaemonSetController = "daemon-set-controller";

// Runs until `stopping`.
void RunDaemonSetController(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
