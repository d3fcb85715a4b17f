#include "stages/status/fold.h"

#include <algorithm>

#include "model/conditions.h"
#include "model/events.h"

namespace podflow::status {
namespace {

// Object API vectors hold unique_ptrs: copies are deep, element by element.
template <typename T>
std::vector<std::unique_ptr<T>> DeepCopy(const std::vector<std::unique_ptr<T>>& from) {
  std::vector<std::unique_ptr<T>> out;
  out.reserve(from.size());
  for (const auto& p : from) out.push_back(p ? std::make_unique<T>(*p) : nullptr);
  return out;
}

bool IsTerminal(api::PodPhase p) {
  return p == api::PodPhase::Succeeded || p == api::PodPhase::Failed;
}

}  // namespace

std::string_view FoldVerdictName(FoldVerdict verdict) {
  switch (verdict) {
    case FoldVerdict::kApplied:
      return "Applied";
    case FoldVerdict::kUidMismatch:
      return "UidMismatch";
    case FoldVerdict::kNodeMismatch:
      return "NodeMismatch";
    case FoldVerdict::kStale:
      return "Stale";
  }
  return "?";
}

int64_t ReportLedger::LastFolded(std::string_view pod_uid) const {
  auto it = last_.find(std::string(pod_uid));
  return it == last_.end() ? 0 : it->second;
}

void ReportLedger::Record(const model::Report& report) {
  int64_t& last = last_[report.pod_uid];
  last = std::max(last, report.observed_mod_revision);
}

void ReportLedger::Forget(std::string_view pod_uid) { last_.erase(std::string(pod_uid)); }

FoldResult FoldReport(const api::PodT& current_pod, const model::Report& report, SimTime now,
                      model::EventNamer& namer, ReportLedger& ledger) {
  FoldResult out;
  const api::ObjectMetaT& meta = *current_pod.metadata;
  const api::PodSpecT& spec = *current_pod.spec;
  if (report.pod_uid != meta.uid) {
    out.verdict = FoldVerdict::kUidMismatch;
    out.why = "report for uid " + report.pod_uid + ", stored pod has uid " + meta.uid;
    return out;
  }
  if (report.node_name != spec.node_name) {
    out.verdict = FoldVerdict::kNodeMismatch;
    out.why =
        "report from node " + report.node_name + ", pod is bound to \"" + spec.node_name + "\"";
    return out;
  }
  if (const int64_t last = ledger.LastFolded(report.pod_uid); report.observed_mod_revision < last) {
    out.verdict = FoldVerdict::kStale;
    out.why = "report observed revision " + std::to_string(report.observed_mod_revision) +
              ", revision " + std::to_string(last) + " already folded";
    return out;
  }

  static const api::PodStatusT kEmpty;
  const api::PodStatusT& before = current_pod.status ? *current_pod.status : kEmpty;
  const api::PodStatusT& seen = report.status;
  api::PodStatusT& next = out.status = before;

  if (seen.phase != api::PodPhase::Unset &&
      !(IsTerminal(before.phase) && !IsTerminal(seen.phase))) {
    next.phase = seen.phase;
  }
  if (!seen.host_ip.empty()) {
    next.host_ip = seen.host_ip;
    next.host_ips = DeepCopy(seen.host_ips);
  }
  if (!seen.pod_ip.empty()) {
    next.pod_ip = seen.pod_ip;
    next.pod_ips = DeepCopy(seen.pod_ips);
  }
  if (next.start_time.empty()) next.start_time = seen.start_time;
  next.init_container_statuses = DeepCopy(seen.init_container_statuses);
  next.container_statuses = DeepCopy(seen.container_statuses);
  if (!seen.ephemeral_container_statuses.empty()) {
    next.ephemeral_container_statuses = DeepCopy(seen.ephemeral_container_statuses);
  }
  next.message = seen.message;
  next.reason = seen.reason;

  // Conditions: kubelet's own first, in kubelet's order, then every other
  // condition as it was (PodScheduled, readiness gates, DisruptionTarget).
  const std::string now_text = FormatRfc3339(now);
  std::vector<std::unique_ptr<api::PodConditionT>> conditions;
  if (const api::PodConditionT* sandbox = model::FindCondition(seen, "PodReadyToStartContainers")) {
    conditions.push_back(model::StampCondition({sandbox->type, sandbox->status, sandbox->reason, sandbox->message},
                               before, now_text));
  }
  conditions.push_back(model::StampCondition(model::InitializedCondition(spec, next), before, now_text));
  conditions.push_back(model::StampCondition(model::ReadyCondition(spec, next), before, now_text));
  conditions.push_back(model::StampCondition(model::ContainersReadyCondition(spec, next), before, now_text));
  for (const auto& c : before.conditions) {
    const bool owned = std::any_of(conditions.begin(), conditions.end(),
                                   [&](const auto& mine) { return mine->type == c->type; });
    if (!owned) conditions.push_back(std::make_unique<api::PodConditionT>(*c));
  }
  // A pod the scheduler never saw (created with spec.nodeName) has no
  // PodScheduled yet: kubelet reports it True, as it runs there.
  if (model::FindCondition(before, "PodScheduled") == nullptr) {
    conditions.push_back(model::StampCondition({"PodScheduled", api::ConditionStatus::True, "", ""}, before, now_text));
  }
  next.conditions = std::move(conditions);

  const model::PodRef ref = model::RefOf(current_pod);
  for (const model::ReportEvent& e : report.events) {
    out.events.push_back(model::KubeletEvent(ref, report.node_name, e, namer.Next(ref.name, now)));
  }
  ledger.Record(report);
  return out;
}

}  // namespace podflow::status
