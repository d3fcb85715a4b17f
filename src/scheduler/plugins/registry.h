// The one list of in-tree plugins (kubernetes plugins/registry.go).
#pragma once

#include "base/result.h"
#include "scheduler/framework/registry.h"

namespace podflow::scheduler::plugins {

// Every in-tree plugin by name. An error here is a bug (two plugins with one
// name), reported rather than asserted so that tests can see it.
Result<Registry> NewInTreeRegistry();

}  // namespace podflow::scheduler::plugins
