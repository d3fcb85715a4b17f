#include "scheduler/framework/fit_error.h"

#include <algorithm>
#include <map>
#include <vector>

namespace podflow::scheduler {
namespace {

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

}  // namespace podflow::scheduler
