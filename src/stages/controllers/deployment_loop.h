// The Deployment controller's loop: follows the Deployments and the
// ReplicaSets (and the pods while a Deployment uses Recreate) with
// informers and syncs each Deployment that changed or whose ReplicaSets
// did, from a rate-limited work queue, writing through the API as
// system:serviceaccount:kube-system:deployment-controller.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kDeploymentController = "deployment-controller";

// Runs until `stopping`.
void RunDeploymentController(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
