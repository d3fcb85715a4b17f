#include "stages/scheduling/scheduling_stage.h"

#include <random>

#include "base/logging.h"
#include "bus/bus.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"
#include "stages/persistence/informer.h"
#include "stages/status/status.h"

namespace podflow::scheduling {

using scheduler::SchedulerCore;

namespace {

constexpr uint32_t kEventNamerInstance = 300;
// Cycles run back to back before the informers are read again.
constexpr int kCyclesPerPoll = 64;
// How often the stage logs what its cycles measured (a line per interval
// with attempts, their outcome and where the time went).
constexpr std::chrono::seconds kMetricsLogInterval{30};

// A run id: distinct across starts of the stage (time and randomness).
uint64_t NewRunId() {
  std::random_device device;
  const uint64_t r = (static_cast<uint64_t>(device()) << 32) ^ device();
  return r ^ static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The `scheduler:` section as YAML text ("" when absent).
std::string ConfigText(const YAML::Node& section) {
  if (!section || section.IsNull()) return "";
  YAML::Emitter out;
  out << section;
  return out.c_str();
}

}  // namespace

Result<std::unique_ptr<SchedulingStage>> SchedulingStage::Create(pipeline::StageContext& context) {
  Result<scheduler::Registry> registry = scheduler::plugins::NewInTreeRegistry();
  if (!registry.ok()) return registry.status();
  Result<scheduler::SchedulerConfig> config =
      scheduler::ParseSchedulerConfig(context.config.Section("scheduler"), *registry);
  if (!config.ok()) return config.status();
  Result<std::vector<scheduler::Profile>> profiles = scheduler::BuildProfiles(*registry, *config);
  if (!profiles.ok()) return Status(profiles.status().code(), "scheduler: " + profiles.status().message());
  return std::unique_ptr<SchedulingStage>(
      new SchedulingStage(context, std::move(*registry), std::move(*profiles)));
}

Status SchedulingStage::Start() {
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void SchedulingStage::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void SchedulingStage::Loop() {
  auto log = Logger("stage.scheduling");
  using Clock = SchedulerCore::Clock;
  persistence::Client client(context_.zmq, context_.Endpoint("api"), std::string(kName));
  bus::Pusher decisions(context_.zmq, context_.Endpoint("decisions"));
  status::EventNamer namer(kEventNamerInstance);
  SchedulerCore core(profiles_);

  // One informer per thing the core follows (SchedulerCore::Feeds: nodes,
  // services, pods, ...), listed and polled in that order.
  struct Followed {
    std::unique_ptr<persistence::Informer> informer;
    persistence::Informer::Handlers handlers;
  };
  std::vector<Followed> followed;
  for (SchedulerCore::Feed& feed : core.Feeds()) {
    followed.push_back(
        {std::make_unique<persistence::Informer>(context_.zmq, context_.Endpoint("api"), context_.Endpoint("watch"),
                                                 feed.prefix),
         persistence::Informer::Handlers{
             [upsert = feed.upsert](const KeyValue& kv) {
               upsert(scheduler::StoredObject{kv.key, kv.value, kv.mod_revision}, Clock::now());
             },
             [remove = feed.remove](const std::string& key) { remove(key, Clock::now()); }}});
  }

  // This start of the stage, recorded with its configuration so that
  // podflow-replay --verify-scheduling re-runs decisions with the same profiles.
  const uint64_t run = NewRunId();
  uint64_t seq = 0;
  const std::string run_key = scheduler::SchedulerRunKey(run);
  const std::string run_record = scheduler::EncodeSchedulerRun(run, NowMs(), ConfigText(context_.config.Section("scheduler")));
  bool run_recorded = false;
  // The explanation of `outcome`, stored beside its binding or its FailedScheduling.
  auto explain = [&](const SchedulerCore::Outcome& outcome) {
    scheduler::DecisionContext c;
    c.pod_key = outcome.key;
    c.pod_uid = outcome.uid;
    c.pod_mod_revision = outcome.mod_revision.value();
    c.profile = outcome.profile->scheduler_name();
    c.start_node_index = outcome.start_node_index;
    for (const Followed& f : followed) {
      c.sources.push_back({f.informer->prefix(), f.informer->list_revision().value(), f.informer->revision().value()});
    }
    c.run = run;
    c.seq = ++seq;
    c.assumed_pods = core.assumed_pods();
    c.decided_at_ms = NowMs();
    return scheduler::EncodeDecisionRecord(outcome.decision, c);
  };

  // Records why a pod fits nowhere: FailedScheduling and PodScheduled=False,
  // in one write guarded by the revision decided on.
  // Evicts the victims preemption chose, as kube-scheduler's preemption
  // does: each is deleted with a Preempted event about it, guarded by the
  // revision the cache saw (retried at the current revision while it is the
  // same pod whose status alone moved on). A victim this stage deleted leaves
  // the core at once: its room goes to the nominated pod, which is queued
  // again (kube-scheduler: AssignedPodDelete).
  auto evict_victims = [&](const SchedulerCore::Outcome& outcome) {
    for (const SchedulerCore::Outcome::Victim& victim : outcome.victims) {
      std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(victim.pod_bytes);
      if (!pod->metadata) continue;
      status::PackedEvent event = status::PackEvent(
          status::PreemptedEvent(*pod, outcome.uid, outcome.decision.nominated_node, runtime::WallClockNow(),
                                 namer, outcome.profile->scheduler_name()));
      Revision guard = victim.mod_revision;
      for (int attempt = 0; attempt < 3; ++attempt) {
        Result<persistence::WriteResult> written = client.Write(
            {DeleteOp{victim.key, guard}, PutOp{event.key, event.bytes, std::nullopt, status::kEventTtlSeconds}});
        if (!written.ok()) {
          log->warn("preempting {} for {}: {}", victim.key, outcome.key, written.status().ToString());
          break;
        }
        if (written->succeeded) {
          log->info("{}: preempted {} on {}", outcome.key, victim.key, outcome.decision.nominated_node);
          core.RemovePod(victim.key, Clock::now());
          break;
        }
        if (!written->current) break;  // gone already
        std::unique_ptr<api::PodT> now = model::Unpack<api::Pod>(written->current->value);
        if (!now->metadata || now->metadata->uid != victim.uid) break;  // another pod now
        guard = written->current->mod_revision;
      }
    }
  };

  // Pods of lower priority nominated to the node preemption chose lose their
  // nomination, as kube-scheduler clears it: status.nominatedNodeName is
  // removed in a write guarded by the revision the cache saw (retried at the
  // current revision while it is the same pod still naming that node). The
  // cache may not show the nomination yet (this stage wrote it moments ago):
  // the stored pod is read then.
  auto clear_nominations = [&](const SchedulerCore::Outcome& outcome) {
    for (const SchedulerCore::Outcome::Victim& cleared : outcome.cleared_nominations) {
      std::string bytes = cleared.pod_bytes;
      Revision guard = cleared.mod_revision;
      bool read = false;
      for (int attempt = 0; attempt < 3; ++attempt) {
        std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(bytes);
        if (!pod->metadata || pod->metadata->uid != cleared.uid) break;
        if (!pod->status || pod->status->nominated_node_name != outcome.decision.nominated_node) {
          if (read) break;
          read = true;
          RangeRequest request;
          request.key = cleared.key;
          Result<RangeResult> now = client.Read(request);
          if (!now.ok() || now->kvs.empty() ||
              !model::VerifyObject(model::Kind("Pod"), now->kvs[0].value).ok()) {
            break;
          }
          bytes = std::move(now->kvs[0].value);
          guard = now->kvs[0].mod_revision;
          continue;
        }
        pod->status->nominated_node_name.clear();
        Result<persistence::WriteResult> written = client.Write({PutOp{cleared.key, model::Pack(*pod), guard}});
        if (!written.ok()) {
          log->warn("clearing the nomination of {}: {}", cleared.key, written.status().ToString());
          break;
        }
        if (written->succeeded) {
          log->info("{}: nomination of {} to {} cleared", outcome.key, cleared.key, outcome.decision.nominated_node);
          break;
        }
        if (!written->current) break;  // gone
        bytes = written->current->value;
        guard = written->current->mod_revision;
        read = true;
      }
    }
  };

  auto record_unschedulable = [&](const SchedulerCore::Outcome& outcome) {
    evict_victims(outcome);
    clear_nominations(outcome);
    std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(outcome.pod_bytes);
    if (!pod->metadata || !pod->spec) return;
    if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
    const runtime::SimTime now = runtime::WallClockNow();
    status::SetCondition(*pod->status,
                         {"PodScheduled", api::ConditionStatus::False, "Unschedulable", outcome.decision.message},
                         runtime::FormatTime(now));
    if (!outcome.decision.nominated_node.empty()) pod->status->nominated_node_name = outcome.decision.nominated_node;
    if (outcome.decision.clear_nomination) pod->status->nominated_node_name.clear();
    status::PackedEvent event = status::PackEvent(
        status::FailedSchedulingEvent(*pod, outcome.decision.message, now, namer, status::SchedulerOf(*pod)));
    Result<persistence::WriteResult> written =
        client.Write({PutOp{outcome.key, model::Pack(*pod), outcome.mod_revision},
                      PutOp{std::move(event.key), std::move(event.bytes), std::nullopt, status::kEventTtlSeconds},
                      PutOp{scheduler::DecisionKeyOfPod(outcome.key), explain(outcome), std::nullopt,
                            status::kEventTtlSeconds}});
    if (!written.ok()) {
      log->warn("recording FailedScheduling for {}: {}", outcome.key, written.status().ToString());
    } else if (written->succeeded) {
      core.OwnWrite(outcome.key, written->revision);
    }
  };

  // What the cycles measured, logged at most every kMetricsLogInterval.
  Clock::time_point metrics_logged = Clock::now();
  bool synced = false;
  while (!stopping_) {
    if (Clock::now() - metrics_logged >= kMetricsLogInterval && core.metrics().total_attempts() > 0) {
      log->info("scheduling: {}", core.metrics().Summary());
      core.metrics().Reset();
      metrics_logged = Clock::now();
    }
    if (!run_recorded) {
      Result<persistence::WriteResult> w = client.Write({PutOp{run_key, run_record}});
      if (!w.ok()) {
        log->warn("recording the scheduler run: {}", w.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      run_recorded = true;
    }
    if (!synced) {
      Status s;
      for (Followed& f : followed) {
        if (s.ok()) s = f.informer->Sync(f.handlers);
      }
      if (!s.ok()) {
        log->warn("listing nodes and pods: {}", s.ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      synced = true;
    }
    const bool busy = core.queue().active_size() > 0;
    // The last informer (pods) waits a little when there is nothing to do.
    Status polled;
    for (size_t i = 0; i < followed.size() && polled.ok(); ++i) {
      const bool last = i + 1 == followed.size();
      polled = followed[i].informer->Poll(std::chrono::milliseconds(last && !busy ? 20 : 0), followed[i].handlers);
    }
    if (!polled.ok()) {
      log->warn("following nodes and pods: {}", polled.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    core.ExpireAssumed(Clock::now());

    for (int i = 0; i < kCyclesPerPoll && !stopping_; ++i) {
      std::optional<Result<SchedulerCore::Outcome>> next = core.Next(Clock::now());
      if (!next) break;
      if (!next->ok()) {
        log->error("scheduling cycle failed: {}", next->status().ToString());
        continue;
      }
      const SchedulerCore::Outcome& outcome = **next;
      if (!outcome.decision.scheduled()) {
        log->info("{}: {}", outcome.key, outcome.decision.message);
        record_unschedulable(outcome);
        continue;
      }
      // Binding stores the explanation in the transaction that binds the pod.
      const std::string explanation = explain(outcome);
      flatbuffers::FlatBufferBuilder fbb(1024 + explanation.size());
      auto body = msg::CreateDecision(
          fbb, fbb.CreateString(outcome.key), fbb.CreateString(outcome.uid), outcome.mod_revision.value(),
          fbb.CreateString(outcome.decision.node), fbb.CreateString(outcome.profile->scheduler_name()),
          fbb.CreateVector(reinterpret_cast<const uint8_t*>(explanation.data()), explanation.size()),
          fbb.CreateVector(reinterpret_cast<const uint8_t*>(outcome.pod_bytes.data()), outcome.pod_bytes.size()));
      Status pushed = decisions.Push(bus::FinishFrame(fbb, msg::Body::Decision, body.Union()));
      if (!pushed.ok()) {
        log->warn("handing {} to binding: {}", outcome.key, pushed.ToString());
        core.Unassume(outcome.key, Clock::now());
        continue;
      }
      log->debug("{} -> {} ({} feasible of {})", outcome.key, outcome.decision.node, outcome.decision.feasible_nodes,
                 outcome.decision.num_all_nodes);
    }
  }
}

}  // namespace podflow::scheduling
