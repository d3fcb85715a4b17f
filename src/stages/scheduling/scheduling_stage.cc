#include "stages/scheduling/scheduling_stage.h"

#include "base/logging.h"
#include "bus/bus.h"
#include "model/objects.h"
#include "stages/persistence/informer.h"
#include "stages/scheduling/core.h"
#include "stages/status/status.h"

namespace podflow::scheduling {
namespace {

constexpr uint32_t kEventNamerInstance = 300;
// Cycles run back to back before the informers are read again.
constexpr int kCyclesPerPoll = 64;

}  // namespace

Result<scheduler::ProfileConfig> ParseSchedulerConfig(const YAML::Node& section) {
  scheduler::ProfileConfig config = scheduler::DefaultProfileConfig();
  if (!section || section.IsNull()) return config;
  if (!section.IsMap()) return Status::Invalid("scheduler: expected a map");
  for (const auto& entry : section) {
    const std::string key = entry.first.as<std::string>();
    try {
      if (key == "seed") {
        config.seed = entry.second.as<uint64_t>();
      } else if (key == "percentageOfNodesToScore") {
        config.percentage_of_nodes_to_score = entry.second.as<int32_t>();
      } else {
        return Status::Invalid("scheduler." + key + ": unknown field (known: seed, percentageOfNodesToScore)");
      }
    } catch (const YAML::Exception&) {
      return Status::Invalid("scheduler." + key + ": expected a non-negative integer");
    }
  }
  return config;
}

Result<std::unique_ptr<SchedulingStage>> SchedulingStage::Create(pipeline::StageContext& context) {
  Result<scheduler::ProfileConfig> config = ParseSchedulerConfig(context.config.Section("scheduler"));
  if (!config.ok()) return config.status();
  Result<scheduler::Registry> registry = scheduler::plugins::NewInTreeRegistry();
  if (!registry.ok()) return registry.status();
  Result<scheduler::Profile> profile = scheduler::Profile::Build(*registry, *config);
  if (!profile.ok()) return Status(profile.status().code(), "scheduler: " + profile.status().message());
  return std::unique_ptr<SchedulingStage>(
      new SchedulingStage(context, std::move(*registry), std::move(*profile)));
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
  SchedulerCore core(profile_);

  persistence::Informer nodes(context_.zmq, context_.Endpoint("api"), context_.Endpoint("watch"),
                              model::KindPrefix(model::Kind("Node")));
  persistence::Informer pods(context_.zmq, context_.Endpoint("api"), context_.Endpoint("watch"),
                             model::KindPrefix(model::Kind("Pod")));
  persistence::Informer::Handlers node_handlers{
      [&](const KeyValue& kv) { core.UpsertNode(kv, Clock::now()); },
      [&](const std::string& key) { core.RemoveNode(key); }};
  persistence::Informer::Handlers pod_handlers{
      [&](const KeyValue& kv) { core.UpsertPod(kv, Clock::now()); },
      [&](const std::string& key) { core.RemovePod(key, Clock::now()); }};

  // Records why a pod fits nowhere: FailedScheduling and PodScheduled=False,
  // in one write guarded by the revision decided on.
  auto record_unschedulable = [&](const SchedulerCore::Outcome& outcome) {
    std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(outcome.pod_bytes);
    if (!pod->metadata || !pod->spec) return;
    if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
    const runtime::SimTime now = runtime::WallClockNow();
    status::SetCondition(*pod->status,
                         {"PodScheduled", api::ConditionStatus::False, "Unschedulable", outcome.decision.message},
                         runtime::FormatTime(now));
    status::PackedEvent event = status::PackEvent(
        status::FailedSchedulingEvent(*pod, outcome.decision.message, now, namer, status::SchedulerOf(*pod)));
    Result<persistence::WriteResult> written =
        client.Write({PutOp{outcome.key, model::Pack(*pod), outcome.mod_revision},
                      PutOp{std::move(event.key), std::move(event.bytes), std::nullopt, status::kEventTtlSeconds}});
    if (!written.ok()) {
      log->warn("recording FailedScheduling for {}: {}", outcome.key, written.status().ToString());
    } else if (written->succeeded) {
      core.OwnWrite(outcome.key, written->revision);
    }
  };

  bool synced = false;
  while (!stopping_) {
    if (!synced) {
      Status s = nodes.Sync(node_handlers);
      if (s.ok()) s = pods.Sync(pod_handlers);
      if (!s.ok()) {
        log->warn("listing nodes and pods: {}", s.ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      synced = true;
    }
    const bool busy = core.queue().active_size() > 0;
    Status polled = nodes.Poll(std::chrono::milliseconds(0), node_handlers);
    if (polled.ok()) polled = pods.Poll(std::chrono::milliseconds(busy ? 0 : 20), pod_handlers);
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
      // The per-node explanation is not sent yet: nothing downstream keeps it
      // (describe and replay will, with the scheduler's explained decisions).
      flatbuffers::FlatBufferBuilder fbb(512);
      auto body = msg::CreateDecision(
          fbb, fbb.CreateString(outcome.key), fbb.CreateString(outcome.uid), outcome.mod_revision.value(),
          fbb.CreateString(outcome.decision.node), fbb.CreateString(profile_.scheduler_name()), 0,
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
