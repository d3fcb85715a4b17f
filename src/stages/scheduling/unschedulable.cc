// What a pod that fits nowhere leads to: its FailedScheduling and
// PodScheduled=False, and — when preemption nominated a node — the eviction
// of the victims and the end of lower-priority nominations to that node.
#include "base/logging.h"
#include "client/update.h"
#include "model/objects.h"
#include "stages/scheduling/stage_loop.h"

namespace podflow::scheduling {
namespace {

// Evictions and cleared nominations: retried at the current revision while
// it is the same pod, a few times.
const client::UpdatePolicy kPreemptionPolicy{.max_attempts = 3};

}  // namespace

// Evicts the victims preemption chose, as kube-scheduler's preemption
// does: each is deleted with a Preempted event about it, guarded by the
// revision the cache saw (retried at the current revision while it is the
// same pod whose status alone moved on). A victim this stage deleted leaves
// the core at once: its room goes to the nominated pod, which is queued
// again (kube-scheduler: AssignedPodDelete).
void StageLoop::EvictVictims(const Outcome& outcome) {
  for (const SchedulerCore::Outcome::Victim& victim : outcome.victims) {
    std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(victim.pod_bytes);
    if (!pod->metadata) continue;
    model::PackedEvent event = model::PackEvent(
        model::PreemptedEvent(*pod, outcome.uid, outcome.decision.nominated_node, WallClockNow(),
                               namer_, outcome.profile->scheduler_name()));
    client::UpdateItem item{victim.key, KeyValue{victim.key, victim.pod_bytes, {}, victim.mod_revision},
                            [&](const KeyValue* current, bool fresh) -> client::Mutation {
                              if (current == nullptr) return client::Mutation::Skip();  // gone already
                              if (fresh) {
                                std::unique_ptr<api::PodT> now = model::Unpack<api::Pod>(current->value);
                                if (!now->metadata || now->metadata->uid != victim.uid) {
                                  return client::Mutation::Skip();  // another pod now
                                }
                              }
                              return client::Mutation::Delete({PutOp{event.key, event.bytes, std::nullopt,
                                                                     model::kEventTtlSeconds}});
                            }};
    client::UpdateOutcome evicted = client::Update(client_, std::move(item), kPreemptionPolicy);
    if (evicted.written) {
      log_->info("{}: preempted {} on {}", outcome.key, victim.key, outcome.decision.nominated_node);
      core_.RemovePod(victim.key, Clock::now());
    } else if (!evicted.status.ok() && evicted.status.code() != Code::kConflict) {
      log_->warn("preempting {} for {}: {}", victim.key, outcome.key, evicted.status.ToString());
    }
  }
}

// Pods of lower priority nominated to the node preemption chose lose their
// nomination, as kube-scheduler clears it: status.nominatedNodeName is
// removed in a write guarded by the revision the cache saw (retried at the
// current revision while it is the same pod still naming that node). The
// cache may not show the nomination yet (this stage wrote it moments ago):
// the stored pod is read then.
void StageLoop::ClearNominations(const Outcome& outcome) {
  for (const SchedulerCore::Outcome::Victim& cleared : outcome.cleared_nominations) {
    client::UpdateItem item{
        cleared.key, KeyValue{cleared.key, cleared.pod_bytes, {}, cleared.mod_revision},
        [&](const KeyValue* current, bool fresh) -> client::Mutation {
          if (current == nullptr) return client::Mutation::Skip();  // gone
          if (fresh && !model::VerifyObject(model::Kind("Pod"), current->value).ok()) return client::Mutation::Skip();
          std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(current->value);
          if (!pod->metadata || pod->metadata->uid != cleared.uid) return client::Mutation::Skip();
          if (!pod->status || pod->status->nominated_node_name != outcome.decision.nominated_node) {
            return client::Mutation::Refresh();
          }
          pod->status->nominated_node_name.clear();
          return client::Mutation::Put(model::Pack(*pod));
        }};
    client::UpdateOutcome written = client::Update(client_, std::move(item), kPreemptionPolicy);
    if (written.written) {
      log_->info("{}: nomination of {} to {} cleared", outcome.key, cleared.key, outcome.decision.nominated_node);
    } else if (!written.status.ok() && written.status.code() != Code::kConflict) {
      log_->warn("clearing the nomination of {}: {}", cleared.key, written.status.ToString());
    }
  }
}

// Records why a pod fits nowhere: FailedScheduling and PodScheduled=False,
// in one write guarded by the revision decided on (a pod that changed
// since is decided again anyway).
void StageLoop::RecordUnschedulable(const Outcome& outcome) {
  EvictVictims(outcome);
  ClearNominations(outcome);
  client::UpdateItem item{
      outcome.key, KeyValue{outcome.key, outcome.pod_bytes, {}, outcome.mod_revision},
      [&](const KeyValue* current, bool) -> client::Mutation {
        if (current == nullptr) return client::Mutation::Skip();
        std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(current->value);
        if (!pod->metadata || !pod->spec) return client::Mutation::Skip();
        if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
        const SimTime now = WallClockNow();
        model::SetCondition(*pod->status,
                             {"PodScheduled", api::ConditionStatus::False, "Unschedulable", outcome.decision.message},
                             FormatRfc3339(now));
        if (!outcome.decision.nominated_node.empty()) {
          pod->status->nominated_node_name = outcome.decision.nominated_node;
        }
        if (outcome.decision.clear_nomination) pod->status->nominated_node_name.clear();
        model::PackedEvent event = model::PackEvent(
            model::FailedSchedulingEvent(*pod, outcome.decision.message, now, namer_, model::SchedulerOf(*pod)));
        return client::Mutation::Put(
            model::Pack(*pod),
            {PutOp{std::move(event.key), std::move(event.bytes), std::nullopt, model::kEventTtlSeconds},
             PutOp{scheduler::DecisionKeyOfPod(outcome.key), Explain(outcome), std::nullopt,
                   model::kEventTtlSeconds}});
      }};
  client::UpdatePolicy once;
  once.max_attempts = 1;
  client::UpdateOutcome written = client::Update(client_, std::move(item), once);
  if (written.written) {
    core_.OwnWrite(outcome.key, written.revision);
  } else if (!written.status.ok() && written.status.code() != Code::kConflict) {
    log_->warn("recording FailedScheduling for {}: {}", outcome.key, written.status.ToString());
  }
}

}  // namespace podflow::scheduling
