// One named spdlog logger per module ("log", "watch", "bus", "stage.admission").
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace podflow {

// Returns the logger called `name`, creating it (stderr, shared format) on
// first use. Thread safe.
std::shared_ptr<spdlog::logger> Logger(const std::string& name);

}  // namespace podflow
