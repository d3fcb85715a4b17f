// The binding stage: the second write of a pod. It pulls the scheduler's
// decisions and writes spec.nodeName, the PodScheduled condition and the
// Scheduled event in one transaction guarded by the pod revision the
// decision was made on. A pod that changed meanwhile is not bound: the
// scheduler sees the newer revision and decides again.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "bus/bus.h"
#include "pipeline/stage.h"

namespace podflow::binding {

class BindingStage {
 public:
  static constexpr std::string_view kName = "binding";
  static Result<std::unique_ptr<BindingStage>> Create(pipeline::StageContext& context);

  // Binds the decisions channel before returning.
  Status Start();
  void Stop();

 private:
  explicit BindingStage(pipeline::StageContext& context) : context_(context) {}
  void Loop();

  pipeline::StageContext& context_;
  std::unique_ptr<bus::Puller> decisions_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};
static_assert(pipeline::Stage<BindingStage>);

}  // namespace podflow::binding
