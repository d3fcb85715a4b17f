#include "scheduler/framework/status.h"

namespace podflow::scheduler {

std::string_view PluginCodeName(PluginCode code) {
  switch (code) {
    case PluginCode::kSuccess: return "Success";
    case PluginCode::kUnschedulable: return "Unschedulable";
    case PluginCode::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case PluginCode::kError: return "Error";
    case PluginCode::kSkip: return "Skip";
  }
  return "Unknown";
}

std::string PluginStatus::ToString() const {
  std::string out(PluginCodeName(code_));
  if (!plugin_.empty()) {
    out += " (";
    out += plugin_;
    out += ")";
  }
  for (size_t i = 0; i < reasons_.size(); ++i) {
    out += i == 0 ? ": " : ", ";
    out += reasons_[i];
  }
  return out;
}

}  // namespace podflow::scheduler
