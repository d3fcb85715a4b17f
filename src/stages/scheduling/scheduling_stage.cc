#include "stages/scheduling/scheduling_stage.h"

#include "stages/scheduling/stage_loop.h"

namespace podflow::scheduling {

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
  loop_.Start([this](const std::atomic<bool>& stopping) { StageLoop(context_, profiles_).Run(stopping); });
  return Status::Ok();
}

void SchedulingStage::Stop() { loop_.Stop(); }

}  // namespace podflow::scheduling
