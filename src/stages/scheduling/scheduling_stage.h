// The scheduling stage: kube-scheduler on the bus. It follows nodes and pods
// (list, then watch) into its cache, queues the pods that have no node
// (SchedulingQueue), runs a scheduling cycle per pod (scheduler::Schedule),
// assumes the chosen node in its cache and pushes the decision to binding.
// A pod that fits nowhere gets a FailedScheduling event and the condition
// PodScheduled=False (Unschedulable), and waits for a cluster event.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "pipeline/stage.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduling {

// The `scheduler:` section of the cluster config:
//   seed: 1                       # tie-break seed (default 0)
//   percentageOfNodesToScore: 0   # 0 = Kubernetes' adaptive default; 1..100
// Unknown keys are errors.
Result<scheduler::ProfileConfig> ParseSchedulerConfig(const YAML::Node& section);

class SchedulingStage {
 public:
  static constexpr std::string_view kName = "scheduling";
  // Parses the section and builds the profile; Invalid names the problem.
  static Result<std::unique_ptr<SchedulingStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  SchedulingStage(pipeline::StageContext& context, scheduler::Registry registry, scheduler::Profile profile)
      : context_(context), registry_(std::move(registry)), profile_(std::move(profile)) {}
  void Loop();

  pipeline::StageContext& context_;
  scheduler::Registry registry_;  // outlives profile_, whose plugins it made
  scheduler::Profile profile_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};
static_assert(pipeline::Stage<SchedulingStage>);

}  // namespace podflow::scheduling
