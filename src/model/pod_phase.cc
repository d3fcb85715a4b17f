#include "model/pod_phase.h"

#include <algorithm>

namespace podflow::model {
namespace {

enum class Kind { kUnknown, kRunning, kTerminated, kWaiting, kWaitingAfterExit };

Kind KindOf(const api::ContainerStatusT* s, int* exit_code, bool* last_exit_failed) {
  if (s == nullptr || s->state == nullptr) return Kind::kUnknown;
  const bool last_terminated = s->last_state && s->last_state->terminated;
  *last_exit_failed = last_terminated && s->last_state->terminated->exit_code != 0;
  if (s->state->running) return Kind::kRunning;
  if (s->state->terminated) {
    *exit_code = s->state->terminated->exit_code;
    return Kind::kTerminated;
  }
  if (s->state->waiting) return last_terminated ? Kind::kWaitingAfterExit : Kind::kWaiting;
  return Kind::kUnknown;
}

}  // namespace

bool IsRestartableInitContainer(const api::ContainerT& container) {
  return container.restart_policy == "Always";
}

bool IsRestartableInitContainer(const api::Container& container) {
  return container.restart_policy() != nullptr && container.restart_policy()->string_view() == "Always";
}

bool HasContainer(const api::PodSpec& spec, std::string_view name) {
  for (const auto* list : {spec.containers(), spec.init_containers()}) {
    if (list == nullptr) continue;
    for (const api::Container* c : *list) {
      if (c->name() && c->name()->string_view() == name) return true;
    }
  }
  return false;
}

const api::ContainerStatusT* FindStatus(
    const std::vector<std::unique_ptr<api::ContainerStatusT>>& statuses, std::string_view name) {
  for (const auto& s : statuses) {
    if (s && s->name == name) return s.get();
  }
  return nullptr;
}

bool AppContainersHaveStarted(const api::PodStatusT& status) {
  for (const auto& s : status.container_statuses) {
    if (s && s->state && (s->state->running || s->state->terminated)) return true;
    if (s && s->last_state && s->last_state->terminated) return true;
  }
  return false;
}

api::PodPhase KubeletPhase(const api::PodSpecT& spec, const api::PodStatusT& status) {
  int pending_init = 0, pending_sidecars = 0, failed_init = 0;
  int unknown = 0, running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const auto& c : spec.init_containers) {
    int exit_code = 0;
    bool last_failed = false;
    const api::ContainerStatusT* s = FindStatus(status.init_container_statuses, c->name);
    const Kind kind = KindOf(s, &exit_code, &last_failed);
    if (IsRestartableInitContainer(*c)) {
      switch (kind) {
        case Kind::kRunning:
          if (!s->started.has_value() || !*s->started) ++pending_sidecars;
          ++running;
          break;
        case Kind::kTerminated:
        case Kind::kWaitingAfterExit:
          break;
        case Kind::kWaiting:
          ++pending_sidecars;
          ++waiting;
          break;
        case Kind::kUnknown:
          ++pending_sidecars;
          ++unknown;
          break;
      }
      continue;
    }
    switch (kind) {
      case Kind::kTerminated:
        if (exit_code != 0) ++failed_init;
        break;
      case Kind::kWaitingAfterExit:
        if (last_failed) ++failed_init;
        break;
      default:
        ++pending_init;
        break;
    }
  }
  for (const auto& c : spec.containers) {
    int exit_code = 0;
    bool last_failed = false;
    switch (KindOf(FindStatus(status.container_statuses, c->name), &exit_code, &last_failed)) {
      case Kind::kRunning:
        ++running;
        break;
      case Kind::kTerminated:
        ++stopped;
        if (exit_code == 0) ++succeeded;
        break;
      case Kind::kWaitingAfterExit:
        ++stopped;
        break;
      case Kind::kWaiting:
        ++waiting;
        break;
      case Kind::kUnknown:
        ++unknown;
        break;
    }
  }
  const api::RestartPolicy policy = spec.restart_policy == api::RestartPolicy::Unset
                                        ? api::RestartPolicy::Always
                                        : spec.restart_policy;
  if (failed_init > 0 && policy == api::RestartPolicy::Never) return api::PodPhase::Failed;
  if (pending_init > 0 || (pending_sidecars > 0 && !AppContainersHaveStarted(status))) {
    return api::PodPhase::Pending;
  }
  if (waiting > 0) return api::PodPhase::Pending;
  if (running > 0 && unknown == 0) return api::PodPhase::Running;
  if (running == 0 && stopped > 0 && unknown == 0) {
    if (policy == api::RestartPolicy::Always) return api::PodPhase::Running;
    if (stopped == succeeded) return api::PodPhase::Succeeded;
    if (policy == api::RestartPolicy::Never) return api::PodPhase::Failed;
    return api::PodPhase::Running;
  }
  return api::PodPhase::Pending;
}

bool ContainersStopped(const api::PodStatusT& status) {
  auto stopped = [](const auto& statuses) {
    return std::all_of(statuses.begin(), statuses.end(), [](const auto& s) {
      return s->state != nullptr && s->state->terminated != nullptr;
    });
  };
  return stopped(status.init_container_statuses) && stopped(status.container_statuses);
}

}  // namespace podflow::model
