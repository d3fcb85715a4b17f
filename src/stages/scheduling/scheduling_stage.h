// The scheduling stage: kube-scheduler on the bus. It follows nodes and pods
// (list, then watch) into its cache, queues the pods that have no node
// (SchedulingQueue), runs a scheduling cycle per pod (scheduler::Schedule),
// assumes the chosen node in its cache and pushes the decision to binding.
// A pod that fits nowhere gets a FailedScheduling event and the condition
// PodScheduled=False (Unschedulable), and waits for a cluster event.
#pragma once

#include <memory>

#include <yaml-cpp/yaml.h>

#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduling {

class SchedulingStage {
 public:
  static constexpr std::string_view kName = "scheduling";
  // Parses the `scheduler:` section (scheduler::ParseSchedulerConfig) and
  // builds its profiles; Invalid names the problem.
  static Result<std::unique_ptr<SchedulingStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  SchedulingStage(pipeline::StageContext& context, scheduler::Registry registry,
                  std::vector<scheduler::Profile> profiles)
      : context_(context), registry_(std::move(registry)), profiles_(std::move(profiles)) {}

  pipeline::StageContext& context_;
  scheduler::Registry registry_;  // outlives profiles_, whose plugins it made
  std::vector<scheduler::Profile> profiles_;
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<SchedulingStage>);

}  // namespace podflow::scheduling
