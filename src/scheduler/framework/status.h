// PluginStatus: a plugin's verdict, as kube-scheduler's framework.Status.
// "Rejected" is not "broken": Unschedulable and UnschedulableAndUnresolvable
// are expected outcomes with reasons; Error is for bugs.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podflow::scheduler {

enum class PluginCode : int {
  kSuccess = 0,
  // The pod does not fit this node now; preempting pods might make it fit.
  kUnschedulable = 1,
  // The pod cannot fit this node whatever is preempted.
  kUnschedulableAndUnresolvable = 2,
  // Something is broken; the cycle fails and the pod is retried.
  kError = 3,
  // PreFilter / PreScore only: the plugin has nothing to do for this pod
  // this cycle (plugin.h). Never a node's verdict.
  kSkip = 4,
};

std::string_view PluginCodeName(PluginCode code);

class PluginStatus {
 public:
  PluginStatus() = default;  // Success
  PluginStatus(PluginCode code, std::vector<std::string> reasons)
      : code_(code), reasons_(std::move(reasons)) {}

  static PluginStatus Success() { return {}; }
  static PluginStatus Unschedulable(std::string reason) {
    return {PluginCode::kUnschedulable, {std::move(reason)}};
  }
  static PluginStatus UnschedulableAndUnresolvable(std::string reason) {
    return {PluginCode::kUnschedulableAndUnresolvable, {std::move(reason)}};
  }
  static PluginStatus Error(std::string reason) { return {PluginCode::kError, {std::move(reason)}}; }
  static PluginStatus Skip() { return {PluginCode::kSkip, {}}; }

  bool IsSuccess() const { return code_ == PluginCode::kSuccess; }
  bool IsRejected() const {
    return code_ == PluginCode::kUnschedulable || code_ == PluginCode::kUnschedulableAndUnresolvable;
  }
  PluginCode code() const { return code_; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  // The plugin that returned this status; set by the runner. Points into the
  // Profile, which outlives every Decision it made.
  std::string_view plugin() const { return plugin_; }
  void set_plugin(std::string_view plugin) { plugin_ = plugin; }

  // "Unschedulable (NodeResourcesFit): Insufficient cpu, Insufficient memory"
  std::string ToString() const;

 private:
  PluginCode code_ = PluginCode::kSuccess;
  std::vector<std::string> reasons_;
  std::string_view plugin_;
};

}  // namespace podflow::scheduler
