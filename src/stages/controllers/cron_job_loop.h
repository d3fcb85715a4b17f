// The CronJob controller's loop: follows the CronJobs and, while there are
// any, the Jobs, and syncs each CronJob when it or one of its Jobs changes
// and when its next scheduled time comes, on the pipeline's clock, writing
// through the API as system:serviceaccount:kube-system:cronjob-controller.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kCronJobController = "cronjob-controller";

// Runs until `stopping`.
void RunCronJobController(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
