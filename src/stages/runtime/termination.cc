#include "stages/runtime/termination.h"

#include "stages/runtime/kubelet_text.h"

namespace podflow::runtime {
namespace {

// Marks each status terminated; a Killing event for each that was running.
void Stop(std::vector<std::unique_ptr<api::ContainerStatusT>>& statuses, const std::string& kind,
          const std::string& now, model::Report& report) {
  for (auto& s : statuses) {
    api::ContainerStateT& state = s->state ? *s->state : *(s->state = std::make_unique<api::ContainerStateT>());
    if (state.terminated != nullptr) continue;
    auto terminated = std::make_unique<api::ContainerStateTerminatedT>();
    terminated->exit_code = 0;
    terminated->reason = kubelet_text::kCompleted;
    terminated->finished_at = now;
    terminated->container_id = s->container_id;
    if (state.running != nullptr) {
      terminated->started_at = state.running->started_at;
      report.events.push_back({"Normal", kubelet_text::kKilling, kubelet_text::StoppingContainer(s->name), now,
                               kind + "{" + s->name + "}"});
    }
    state.running.reset();
    state.waiting.reset();
    state.terminated = std::move(terminated);
    s->ready = false;
    s->started = false;
  }
}

}  // namespace

model::Report TerminationReport(const api::PodT& pod, const std::string& node_name, int64_t mod_revision,
                                SimTime now) {
  model::Report report;
  report.node_name = node_name;
  report.pod_uid = pod.metadata ? pod.metadata->uid : "";
  report.observed_mod_revision = mod_revision;
  if (pod.status) report.status = *pod.status;
  const std::string at = FormatRfc3339(now);
  Stop(report.status.init_container_statuses, "spec.initContainers", at, report);
  Stop(report.status.container_statuses, "spec.containers", at, report);
  return report;
}

}  // namespace podflow::runtime
