// The scheduling stage's loop, step by step: record this run, list and
// follow what the core needs, run cycles, hand decisions to binding and
// record the pods that fit nowhere. Private to the scheduling stage; runs
// on the stage's one thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/logging.h"
#include "bus/bus.h"
#include "client/client.h"
#include "pipeline/stage.h"
#include "scheduler/scheduler.h"
#include "base/clock.h"
#include "model/conditions.h"
#include "model/events.h"

namespace podflow::scheduling {

using scheduler::SchedulerCore;

class StageLoop {
 public:
  StageLoop(pipeline::StageContext& context, const std::vector<scheduler::Profile>& profiles);
  StageLoop(const StageLoop&) = delete;
  StageLoop& operator=(const StageLoop&) = delete;

  // Until `stopping`.
  void Run(const std::atomic<bool>& stopping);

 private:
  using Clock = SchedulerCore::Clock;
  using Outcome = SchedulerCore::Outcome;
  // One informer per thing the core follows (SchedulerCore::Feeds: nodes,
  // services, pods, ...), listed and polled in that order.
  struct Followed {
    std::unique_ptr<client::Informer> informer;
    client::Informer::Handlers handlers;
  };

  // Each step: false when it failed (logged) and the loop should pause.
  bool RecordRun();
  bool Sync();
  bool Poll();
  void LogMetrics();
  void RunCycles(const std::atomic<bool>& stopping);
  void HandToBinding(const Outcome& outcome);
  // The explanation of `outcome`, stored beside its binding or its FailedScheduling.
  std::string Explain(const Outcome& outcome);

  // unschedulable.cc: what a pod that fits nowhere leads to.
  void RecordUnschedulable(const Outcome& outcome);
  void EvictVictims(const Outcome& outcome);
  void ClearNominations(const Outcome& outcome);

  pipeline::StageContext& context_;
  std::shared_ptr<spdlog::logger> log_;
  client::ApiClient client_;
  bus::Pusher decisions_;
  model::EventNamer namer_;
  SchedulerCore core_;
  std::vector<Followed> followed_;
  // This start of the stage, recorded with its configuration so that
  // podflow-replay --verify-scheduling re-runs decisions with the same profiles.
  const uint64_t run_;
  uint64_t seq_ = 0;
  bool run_recorded_ = false;
  bool synced_ = false;
  Clock::time_point metrics_logged_;
};

}  // namespace podflow::scheduling
