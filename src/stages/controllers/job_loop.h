// The Job controller's loop: follows the Jobs (and, while there is one or
// a pod still carries its tracking finalizer, the pods) with informers and
// syncs each Job that changed or whose pods did, from a rate-limited work
// queue, writing through the API as
// system:serviceaccount:kube-system:job-controller; a finished Job with
// ttlSecondsAfterFinished is deleted once it expires, as
// system:serviceaccount:kube-system:ttl-after-finished-controller.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kJobController = "job-controller";
inline constexpr std::string_view kTtlAfterFinishedController = "ttl-after-finished-controller";

// Runs until `stopping`.
void RunJobController(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
