// The status stage as a pipeline node: pulls the runtime's reports, folds
// each into the stored pod (FoldReport) and writes the new status together
// with the report's Events in one transaction, guarded by the pod's
// revision (a concurrent write makes it read and fold again).
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "bus/bus.h"
#include "model/report.h"
#include "pipeline/stage.h"
#include "pipeline/workers.h"

namespace podflow::status {

class StatusStage {
 public:
  static constexpr std::string_view kName = "status";
  static Result<std::unique_ptr<StatusStage>> Create(pipeline::StageContext& context);

  ~StatusStage();  // out of line: Worker is complete only in the .cc

  // Binds the reports channel before returning, so no report is pushed
  // into the void.
  Status Start();
  void Stop();

 private:
  explicit StatusStage(pipeline::StageContext& context);
  void Loop();
  // Folds a batch of reports (a pod's merged into one) and writes every
  // pod's new status and events in one transaction, each pod guarded by its
  // revision; uses worker `worker`'s client and state.
  void Apply(size_t worker, std::vector<model::Report>& reports);

  struct Worker;
  pipeline::StageContext& context_;
  std::unique_ptr<bus::Puller> reports_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Reports of one pod go to one worker, in order; pods in parallel.
  std::unique_ptr<pipeline::ShardedWorkers<model::Report>> lanes_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};
static_assert(pipeline::Stage<StatusStage>);

}  // namespace podflow::status
