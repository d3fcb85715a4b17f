// The status stage as a pipeline node: pulls the runtime's reports, folds
// each into the stored pod (FoldReport) and writes the new status together
// with the report's Events in one transaction, guarded by the pod's
// revision (a concurrent write makes it read and fold again).
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "bus/bus.h"
#include "pipeline/stage.h"

namespace podflow::status {

class StatusStage {
 public:
  static constexpr std::string_view kName = "status";
  static Result<std::unique_ptr<StatusStage>> Create(pipeline::StageContext& context);

  // Binds the reports channel before returning, so no report is pushed
  // into the void.
  Status Start();
  void Stop();

 private:
  explicit StatusStage(pipeline::StageContext& context) : context_(context) {}
  void Loop();

  pipeline::StageContext& context_;
  std::unique_ptr<bus::Puller> reports_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};
static_assert(pipeline::Stage<StatusStage>);

}  // namespace podflow::status
