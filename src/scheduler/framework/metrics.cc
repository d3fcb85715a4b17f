#include "scheduler/framework/metrics.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace podflow::scheduler {
namespace {

std::string Micros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

}  // namespace

std::string_view ExtensionPointName(ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kPreFilter: return "PreFilter";
    case ExtensionPoint::kFilter: return "Filter";
    case ExtensionPoint::kPostFilter: return "PostFilter";
    case ExtensionPoint::kPreScore: return "PreScore";
    case ExtensionPoint::kScore: return "Score";
  }
  return "Unknown";
}

std::string_view AttemptResultName(AttemptResult result) {
  switch (result) {
    case AttemptResult::kScheduled: return "scheduled";
    case AttemptResult::kUnschedulable: return "unschedulable";
    case AttemptResult::kError: return "error";
  }
  return "unknown";
}

void SchedulerMetrics::AddPlugin(std::string_view plugin, ExtensionPoint point, double us) {
  std::string key(plugin);
  key += '/';
  key += ExtensionPointName(point);
  auto it = plugins_.find(key);
  if (it == plugins_.end()) it = plugins_.emplace(std::move(key), Timing{}).first;
  it->second.Add(us);
}

std::string SchedulerMetrics::Summary(size_t top_plugins) const {
  std::string out = std::to_string(total_attempts()) + " attempts (";
  for (size_t r = 0; r < kNumAttemptResults; ++r) {
    if (r > 0) out += ", ";
    out += std::to_string(attempts_[r]) + " " + std::string(AttemptResultName(static_cast<AttemptResult>(r)));
  }
  out += "), " + Micros(attempt_duration_.MeanUs()) + " mean, " + Micros(attempt_duration_.max_us) + " max";
  out += "; per cycle:";
  const double cycles = static_cast<double>(std::max<uint64_t>(1, total_attempts()));
  for (size_t p = 0; p < kNumExtensionPoints; ++p) {
    out += p > 0 ? ", " : " ";
    out += std::string(ExtensionPointName(static_cast<ExtensionPoint>(p))) + " " +
           Micros(points_[p].total_us / cycles);
  }
  std::vector<std::pair<double, const std::string*>> slowest;
  for (const auto& [key, timing] : plugins_) slowest.emplace_back(timing.MeanUs(), &key);
  std::sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (!slowest.empty() && top_plugins > 0) {
    out += "; slowest plugins (sampled cycles):";
    for (size_t i = 0; i < slowest.size() && i < top_plugins; ++i) {
      out += (i > 0 ? ", " : " ") + *slowest[i].second + " " + Micros(slowest[i].first);
    }
  }
  return out;
}

}  // namespace podflow::scheduler
