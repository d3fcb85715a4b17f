// The exact words kubelet (v1.32) uses in events and container states, in
// one place. Each cites its kubelet source: pkg/kubelet/images/image_manager.go
// (pulls), pkg/kubelet/kuberuntime/kuberuntime_container.go (create, start).
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"

namespace podflow::runtime::kubelet_text {

// Event reasons (pkg/kubelet/events/event.go).
inline constexpr char kPulling[] = "Pulling";
inline constexpr char kPulled[] = "Pulled";
inline constexpr char kCreated[] = "Created";
inline constexpr char kStarted[] = "Started";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kBackOff[] = "BackOff";
inline constexpr char kKilling[] = "Killing";
inline constexpr char kFailedPostStartHook[] = "FailedPostStartHook";
// Since Kubernetes 1.26 the event says only this (the hook's own message,
// which may hold secrets, stays in kubelet's log).
inline constexpr char kPostStartHookFailed[] = "PostStartHook failed";
inline constexpr char kFailedPreStopHook[] = "FailedPreStopHook";
inline constexpr char kPreStopHookFailed[] = "PreStopHook failed";
inline constexpr char kErrImageNeverPull[] = "ErrImageNeverPull";
inline constexpr char kFailedCreatePodSandBox[] = "FailedCreatePodSandBox";
inline constexpr char kUnhealthy[] = "Unhealthy";
inline constexpr char kInspectFailed[] = "InspectFailed";
inline constexpr char kFailedMount[] = "FailedMount";
// pkg/kubelet/active_deadline.go: the event, the pod's reason and message.
inline constexpr char kDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kDeadlineExceededMessage[] = "Pod was active on the node longer than the specified deadline";

// Container waiting reasons.
inline constexpr char kContainerCreating[] = "ContainerCreating";
inline constexpr char kPodInitializing[] = "PodInitializing";
inline constexpr char kErrImagePull[] = "ErrImagePull";
inline constexpr char kImagePullBackOff[] = "ImagePullBackOff";
inline constexpr char kCrashLoopBackOff[] = "CrashLoopBackOff";
inline constexpr char kInvalidImageName[] = "InvalidImageName";
inline constexpr char kCreateContainerConfigError[] = "CreateContainerConfigError";

// Container terminated reasons.
inline constexpr char kCompleted[] = "Completed";
inline constexpr char kError[] = "Error";
inline constexpr char kOOMKilled[] = "OOMKilled";
// The runtime could not start the container's process (exit code 128).
inline constexpr char kStartError[] = "StartError";

// What the runtime says of a process it could not start, as runc words the
// last part of its error ("exec: \"x\": executable file not found in $PATH").
inline std::string StartFailed(std::string_view why) {
  return "failed to start container process: unable to start container process: " + std::string(why);
}

inline std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The Killing event of a container stopped because its pod is deleted.
inline std::string StoppingContainer(std::string_view name) { return "Stopping container " + std::string(name); }

inline std::string PullingImage(std::string_view image) { return "Pulling image " + Quoted(image); }
// Successfully pulled image "nginx:1.14.2" in 500ms (500ms including waiting).
// Image size: 44000000 bytes.
inline std::string SuccessfullyPulled(std::string_view image, SimDuration pull,
                                      SimDuration with_wait, int64_t size_bytes) {
  return "Successfully pulled image " + Quoted(image) + " in " + FormatGoDuration(pull) + " (" +
         FormatGoDuration(with_wait) +
         " including waiting). Image size: " + std::to_string(size_bytes) + " bytes.";
}
inline std::string AlreadyPresent(std::string_view image) {
  return "Container image " + Quoted(image) + " already present on machine";
}
// A reference the image parser refuses (`why`: model::InvalidImageReference).
inline std::string InvalidImage(std::string_view image, std::string_view why) {
  return "Failed to apply default image tag " + Quoted(image) + ": couldn't parse image name " + Quoted(image) +
         ": " + std::string(why);
}
inline std::string NeverPull(std::string_view image) {
  return "Container image " + Quoted(image) + " is not present with pull policy of Never";
}
// What containerd answers for an image the registry does not have.
inline std::string PullNotFound(std::string_view canonical) {
  const std::string c = Quoted(canonical);
  return "rpc error: code = NotFound desc = failed to pull and unpack image " + c +
         ": failed to resolve reference " + c + ": " + std::string(canonical) + ": not found";
}
inline std::string FailedToPull(std::string_view image, std::string_view error) {
  return "Failed to pull image " + Quoted(image) + ": " + std::string(error);
}
// The volume manager's event for a volume it could not set up.
inline std::string MountSetUpFailed(std::string_view volume, std::string_view why) {
  return "MountVolume.SetUp failed for volume " + Quoted(volume) + " : " + std::string(why);
}
inline std::string Error(std::string_view reason) { return "Error: " + std::string(reason); }
inline std::string BackOffPulling(std::string_view image) {
  return "Back-off pulling image " + Quoted(image);
}
inline std::string CreatedContainer(std::string_view name) {
  return "Created container: " + std::string(name);
}
inline std::string StartedContainer(std::string_view name) {
  return "Started container " + std::string(name);
}

// kubelet's name of a pod in its messages (format.Pod): "name_namespace(uid)".
inline std::string PodText(std::string_view name, std::string_view namespace_, std::string_view uid) {
  return std::string(name) + "_" + std::string(namespace_.empty() ? "default" : namespace_) + "(" +
         std::string(uid) + ")";
}

// The restart back-off (pkg/kubelet/kuberuntime/kuberuntime_manager.go,
// doBackOff); `pod` is PodText's.
inline std::string BackOffRestarting(std::string_view container, std::string_view pod) {
  return "Back-off restarting failed container " + std::string(container) + " in pod " + std::string(pod);
}
inline std::string BackOffRestartingMessage(SimDuration backoff, std::string_view container,
                                            std::string_view pod) {
  return "back-off " + FormatGoDuration(backoff) + " restarting failed container=" + std::string(container) +
         " pod=" + std::string(pod);
}
// The Killing event of a container a probe failed (pkg/kubelet/
// kuberuntime/kuberuntime_manager.go, computePodActions and the sidecars'
// computeInitContainerActions); `probe` is "liveness" or "startup".
inline std::string FailedProbe(std::string_view container, std::string_view probe, bool sidecar,
                               bool will_restart) {
  return std::string(sidecar ? "Init container " : "Container ") + std::string(container) + " failed " +
         std::string(probe) + " probe" + (will_restart ? ", will be restarted" : "");
}

}  // namespace podflow::runtime::kubelet_text
