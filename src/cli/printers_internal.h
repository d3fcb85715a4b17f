// Per-kind row builders behind BuildTable (internal to src/cli).
#pragma once

#include <string>
#include <vector>

#include "api_generated.h"
#include "cli/printers.h"

namespace podflow::cli {

std::vector<std::string> PodRow(const api::PodT& pod, const PrintOptions& options, TimePoint now);

}  // namespace podflow::cli
