#include "scheduler/framework/fit_error.h"

#include <algorithm>
#include <map>
#include <vector>

namespace podflow::scheduler {
namespace {

constexpr std::string_view kPreemptionNotHelpful = "Preemption is not helpful for scheduling";
constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
constexpr std::string_view kNotEligibleNever = "not eligible due to preemptionPolicy=Never.";

std::string Histogram(const std::map<std::string, size_t, std::less<>>& reasons) {
  std::vector<std::string> parts;
  parts.reserve(reasons.size());
  for (const auto& [reason, count] : reasons) parts.push_back(std::to_string(count) + " " + reason);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}

std::string WithHistogram(size_t num_all_nodes, const std::map<std::string, size_t, std::less<>>& reasons) {
  std::string out = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!reasons.empty()) out += " " + Histogram(reasons) + ".";
  return out;
}

}  // namespace

std::string FitErrorMessage(size_t num_all_nodes, std::span<const NodeVerdict> verdicts) {
  std::map<std::string, size_t, std::less<>> reasons;
  for (const NodeVerdict& v : verdicts) {
    for (const std::string& r : v.status.reasons()) ++reasons[r];
  }
  return WithHistogram(num_all_nodes, reasons);
}

std::string PreemptionMessage(const PodInfo& pod, size_t num_all_nodes,
                              std::span<const NodeVerdict> verdicts) {
  if (pod.preemption_policy == api::PreemptionPolicy::Never) return std::string(kNotEligibleNever);
  std::map<std::string, size_t, std::less<>> reasons;
  for (const NodeVerdict& v : verdicts) {
    if (v.status.code() == PluginCode::kUnschedulableAndUnresolvable) {
      ++reasons[std::string(kPreemptionNotHelpful)];
    } else if (v.status.code() == PluginCode::kUnschedulable) {
      ++reasons[std::string(kNoVictims)];
    }
  }
  return WithHistogram(num_all_nodes, reasons);
}

std::string FailedSchedulingMessage(const PodInfo& pod, size_t num_all_nodes,
                                    std::span<const NodeVerdict> verdicts) {
  if (num_all_nodes == 0) return std::string(kNoNodesAvailable);
  return FitErrorMessage(num_all_nodes, verdicts) + " preemption: " +
         PreemptionMessage(pod, num_all_nodes, verdicts) + ".";
}

}  // namespace podflow::scheduler
