// The pod printer: kubectl's printPod (pkg/printers/internalversion).
#include <optional>

#include "cli/print_util.h"
#include "cli/printers.h"
#include "cli/printers_internal.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

bool IsRestartableInit(const api::PodT& pod, const std::string& name) {
  if (!pod.spec) return false;
  for (const auto& c : pod.spec->init_containers) {
    if (c->name == name) return c->restart_policy == "Always";
  }
  return false;
}

bool HasTrueCondition(const api::PodT& pod, std::string_view type) {
  if (!pod.status) return false;
  for (const auto& c : pod.status->conditions) {
    if (c->type == type && c->status == api::ConditionStatus::True) return true;
  }
  return false;
}

const api::ContainerStateTerminatedT* LastTerminated(const api::ContainerStatusT& s) {
  return s.last_state ? s.last_state->terminated.get() : nullptr;
}

// What printPod computes besides the name and age.
struct PodSummary {
  int ready = 0;
  int total = 0;
  int restarts = 0;
  std::optional<TimePoint> last_restart;
  std::string reason;
};

void NoteRestart(const api::ContainerStatusT& s, std::optional<TimePoint>* last) {
  const api::ContainerStateTerminatedT* t = LastTerminated(s);
  if (t == nullptr) return;
  std::optional<TimePoint> at = ParseRfc3339(t->finished_at);
  if (at && (!*last || **last < *at)) *last = at;
}

PodSummary Summarize(const api::PodT& pod) {
  static const api::PodStatusT kNoStatus;
  static const api::PodSpecT kNoSpec;
  const api::PodStatusT& status = pod.status ? *pod.status : kNoStatus;
  const api::PodSpecT& spec = pod.spec ? *pod.spec : kNoSpec;

  PodSummary out;
  out.total = static_cast<int>(spec.containers.size());
  const api::PodPhase phase = status.phase;
  out.reason = phase == api::PodPhase::Unset ? "" : api::EnumNamePodPhase(phase);
  if (!status.reason.empty()) out.reason = status.reason;
  for (const auto& c : status.conditions) {
    if (c->type == "PodScheduled" && c->reason == "SchedulingGated") out.reason = "SchedulingGated";
  }
  for (const auto& c : spec.init_containers) {
    if (c->restart_policy == "Always") ++out.total;
  }

  int sidecar_restarts = 0;
  std::optional<TimePoint> sidecar_last_restart;
  bool initializing = false;
  for (size_t i = 0; i < status.init_container_statuses.size(); ++i) {
    const api::ContainerStatusT& c = *status.init_container_statuses[i];
    const bool restartable = IsRestartableInit(pod, c.name);
    out.restarts += c.restart_count;
    NoteRestart(c, &out.last_restart);
    if (restartable) {
      sidecar_restarts += c.restart_count;
      NoteRestart(c, &sidecar_last_restart);
    }
    const api::ContainerStateT* state = c.state.get();
    const api::ContainerStateTerminatedT* term = state ? state->terminated.get() : nullptr;
    const api::ContainerStateWaitingT* wait = state ? state->waiting.get() : nullptr;
    if (term != nullptr && term->exit_code == 0) continue;
    if (restartable && c.started.has_value() && *c.started) {
      if (c.ready) ++out.ready;
      continue;
    }
    if (term != nullptr) {
      // Initialization failed.
      if (term->reason.empty()) {
        out.reason = term->signal != 0 ? "Init:Signal:" + std::to_string(term->signal)
                                       : "Init:ExitCode:" + std::to_string(term->exit_code);
      } else {
        out.reason = "Init:" + term->reason;
      }
    } else if (wait != nullptr && !wait->reason.empty() && wait->reason != "PodInitializing") {
      out.reason = "Init:" + wait->reason;
    } else {
      out.reason = "Init:" + std::to_string(i) + "/" + std::to_string(spec.init_containers.size());
    }
    initializing = true;
    break;
  }

  if (!initializing || HasTrueCondition(pod, "Initialized")) {
    out.restarts = sidecar_restarts;
    out.last_restart = sidecar_last_restart;
    bool has_running = false;
    for (size_t i = status.container_statuses.size(); i-- > 0;) {
      const api::ContainerStatusT& c = *status.container_statuses[i];
      out.restarts += c.restart_count;
      NoteRestart(c, &out.last_restart);
      const api::ContainerStateT* state = c.state.get();
      const api::ContainerStateTerminatedT* term = state ? state->terminated.get() : nullptr;
      const api::ContainerStateWaitingT* wait = state ? state->waiting.get() : nullptr;
      if (wait != nullptr && !wait->reason.empty()) {
        out.reason = wait->reason;
      } else if (term != nullptr && !term->reason.empty()) {
        out.reason = term->reason;
      } else if (term != nullptr) {
        out.reason = term->signal != 0 ? "Signal:" + std::to_string(term->signal)
                                       : "ExitCode:" + std::to_string(term->exit_code);
      } else if (c.ready && state != nullptr && state->running) {
        has_running = true;
        ++out.ready;
      }
    }
    // A pod with a container still running is not Completed.
    if (out.reason == "Completed" && has_running) {
      out.reason = HasTrueCondition(pod, "Ready") ? "Running" : "NotReady";
    }
  }

  const bool deleting = pod.metadata && !pod.metadata->deletion_timestamp.empty();
  const bool terminal = phase == api::PodPhase::Succeeded || phase == api::PodPhase::Failed;
  if (deleting && status.reason == "NodeLost") {
    out.reason = "Unknown";
  } else if (deleting && !terminal) {
    out.reason = "Terminating";
  }
  return out;
}

}  // namespace

std::string PodStatusReason(const api::PodT& pod) { return Summarize(pod).reason; }

std::vector<std::string> PodRow(const api::PodT& pod, const PrintOptions& options, TimePoint now) {
  static const api::ObjectMetaT kNoMeta;
  const api::ObjectMetaT& meta = pod.metadata ? *pod.metadata : kNoMeta;
  PodSummary s = Summarize(pod);
  std::string restarts = std::to_string(s.restarts);
  if (s.restarts != 0 && s.last_restart) {
    restarts += " (" + HumanDuration(now - *s.last_restart) + " ago)";
  }
  std::vector<std::string> row = {meta.name,
                                  std::to_string(s.ready) + "/" + std::to_string(s.total),
                                  s.reason, restarts, TimestampSince(meta.creation_timestamp, now)};
  if (options.wide) {
    std::string ip = pod.status && !pod.status->pod_ips.empty() ? pod.status->pod_ips[0]->ip : "";
    std::string node = pod.spec ? pod.spec->node_name : "";
    std::string nominated = pod.status ? pod.status->nominated_node_name : "";
    std::string gates = "<none>";
    if (pod.spec && !pod.spec->readiness_gates.empty()) {
      int true_conditions = 0;
      for (const auto& gate : pod.spec->readiness_gates) {
        if (!pod.status) break;
        for (const auto& c : pod.status->conditions) {
          if (c->type == gate->condition_type) {
            if (c->status == api::ConditionStatus::True) ++true_conditions;
            break;
          }
        }
      }
      gates = std::to_string(true_conditions) + "/" + std::to_string(pod.spec->readiness_gates.size());
    }
    row.push_back(ip.empty() ? "<none>" : ip);
    row.push_back(node.empty() ? "<none>" : node);
    row.push_back(nominated.empty() ? "<none>" : nominated);
    row.push_back(gates);
  }
  return row;
}

}  // namespace podflow::cli
