// A container's securityContext as kubelet hands it to the container
// runtime: the pod's settings with the container's own taking precedence
// (runAsUser, runAsGroup, runAsNonRoot), the pod's groups, the container's
// capabilities, privileged, allowPrivilegeEscalation and
// readOnlyRootFilesystem; and kubelet's runAsNonRoot check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pod_generated.h"
#include "stages/runtime/container_host.h"

namespace podflow::runtime {

// What `container` of `pod` runs with (ContainerSecurity: container_host.h).
ContainerSecurity SecurityOf(const api::PodT& pod, const api::ContainerT& container);

// kubelet's refusal of a container whose effective runAsNonRoot it cannot
// honour (a CreateContainerConfigError), or "" when it may run.
// `image_user` is the uid the image runs as when runAsUser is unset;
// nullopt where the image's user is not known (a simulated node), where
// only an explicit runAsUser 0 is refused. The refusal names the pod as
// kubelet does ("name_namespace(uid)").
std::string RunAsNonRootError(const api::PodT& pod, const api::ContainerT& container,
                              std::optional<int64_t> image_user);

}  // namespace podflow::runtime
