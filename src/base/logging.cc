#include "base/logging.h"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace podflow {

std::shared_ptr<spdlog::logger> Logger(const std::string& name) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  return logger;
}

}  // namespace podflow
