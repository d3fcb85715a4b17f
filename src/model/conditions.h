// The pod conditions kubelet derives from container statuses (pkg/kubelet/
// status/generate.go, v1.32): Initialized, ContainersReady and Ready, with
// Kubernetes' reasons and messages ("containers with unready status: [nginx]").
// Pure functions of the spec and the observed status; no times (the caller
// decides lastTransitionTime), plus setting a condition as the status stage,
// binding and scheduling write it.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "node_generated.h"
#include "pod_generated.h"

namespace podflow::model {

struct ConditionValue {
  std::string type;
  api::ConditionStatus status = api::ConditionStatus::Unset;
  std::string reason;
  std::string message;
};

// Reasons (pkg/kubelet/status/generate.go).
inline constexpr char kUnknownContainerStatuses[] = "UnknownContainerStatuses";
inline constexpr char kPodCompleted[] = "PodCompleted";
inline constexpr char kPodFailed[] = "PodFailed";
inline constexpr char kContainersNotReady[] = "ContainersNotReady";
inline constexpr char kContainersNotInitialized[] = "ContainersNotInitialized";
inline constexpr char kReadinessGatesNotReady[] = "ReadinessGatesNotReady";

ConditionValue InitializedCondition(const api::PodSpecT& spec, const api::PodStatusT& status);
ConditionValue ContainersReadyCondition(const api::PodSpecT& spec, const api::PodStatusT& status);
// Ready: ContainersReady, then the pod's readiness gates against `status.conditions`.
ConditionValue ReadyCondition(const api::PodSpecT& spec, const api::PodStatusT& status);

// The condition `type` in `status`, or nullptr.
const api::PodConditionT* FindCondition(const api::PodStatusT& status, std::string_view type);
const api::NodeConditionT* FindCondition(const api::NodeStatusT& status, std::string_view type);

// The condition `type` of a stored pod or node, or nullptr.
const api::PodCondition* FindCondition(const api::Pod& pod, std::string_view type);
const api::NodeCondition* FindCondition(const api::Node& node, std::string_view type);
// Its status, or nullopt when it has none.
std::optional<api::ConditionStatus> ConditionStatusOf(const api::Pod& pod, std::string_view type);
std::optional<api::ConditionStatus> ConditionStatusOf(const api::Node& node, std::string_view type);
// Whether a stored pod's or node's condition `type` is True.
template <typename Object>
bool ConditionIsTrue(const Object& object, std::string_view type) {
  return ConditionStatusOf(object, type) == api::ConditionStatus::True;
}

// The node conditions kubelet posts (and the node lifecycle controller marks
// Unknown when it stops posting them).
inline constexpr std::array<std::string_view, 4> kKubeletNodeConditions = {"Ready", "MemoryPressure",
                                                                           "DiskPressure", "PIDPressure"};

// `value` as it will be written: with the lastTransitionTime it had in
// `previous` when its status did not change, `now_rfc3339` otherwise.
std::unique_ptr<api::PodConditionT> StampCondition(const ConditionValue& value,
                                                   const api::PodStatusT& previous,
                                                   const std::string& now_rfc3339);

// Sets (replaces or appends) the condition `value.type` in `status`;
// lastTransitionTime is `now_rfc3339` unless the condition already had this
// status. Binding sets PodScheduled True with it, scheduling PodScheduled
// False (Unschedulable).
void SetCondition(api::PodStatusT& status, const ConditionValue& value, const std::string& now_rfc3339);

}  // namespace podflow::model
