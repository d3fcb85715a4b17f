// The ReplicaSet controller's loop: follows the ReplicaSets (and, while
// there are any, the pods) with informers and syncs each ReplicaSet that
// changed or whose pods did, from a rate-limited work queue, writing through
// the API as system:serviceaccount:kube-system:replicaset-controller.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kReplicaSetController = "replicaset-controller";

// Runs until `stopping`.
void RunReplicaSetController(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
