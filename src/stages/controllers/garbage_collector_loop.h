// The garbage collector's loop: follows every kind but Events with
// informers into an OwnerGraph and, from a rate-limited work queue, deletes
// the objects whose owners are gone, releases the dependents of an owner
// deleted with the orphan finalizer and lets an owner deleted in the
// foreground go once its blocking dependents have, writing through the API
// as system:serviceaccount:kube-system:generic-garbage-collector.
#pragma once

#include <atomic>
#include <string_view>

#include "pipeline/stage.h"

namespace podflow::controllers {

inline constexpr std::string_view kGarbageCollector = "generic-garbage-collector";

// Runs until `stopping`.
void RunGarbageCollector(pipeline::StageContext& context, const std::atomic<bool>& stopping);

}  // namespace podflow::controllers
