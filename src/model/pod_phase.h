// The pod phase from container statuses, by kubelet's rules (getPhase in
// pkg/kubelet/kubelet_pods.go): Pending while regular init containers have
// not all succeeded or any app container is waiting for its first start;
// Running once every app container has started and one runs; Succeeded /
// Failed when all have terminated and the restart policy lets them stay so.
#pragma once

#include <string_view>

#include "pod_generated.h"

namespace podflow::model {

// An init container with restartPolicy Always: a sidecar, which keeps
// running beside the app containers.
bool IsRestartableInitContainer(const api::ContainerT& container);
bool IsRestartableInitContainer(const api::Container& container);

// Whether the pod has a container or an init container named `name`.
bool HasContainer(const api::PodSpec& spec, std::string_view name);

// Whether any app container has run (kubelet's podHasInitialized).
bool AppContainersHaveStarted(const api::PodStatusT& status);

api::PodPhase KubeletPhase(const api::PodSpecT& spec, const api::PodStatusT& status);

// Whether no container of the pod runs or waits to run any more: every
// status recorded is terminated (kubelet has stopped the pod).
bool ContainersStopped(const api::PodStatusT& status);

// The status of `name` in `statuses`, or nullptr.
const api::ContainerStatusT* FindStatus(
    const std::vector<std::unique_ptr<api::ContainerStatusT>>& statuses, std::string_view name);

}  // namespace podflow::model
