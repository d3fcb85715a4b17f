// The status stage as a pipeline node: pulls the runtime's reports, folds
// each into the stored pod (FoldReport) and writes the new status together
// with the report's Events in one transaction, guarded by the pod's
// revision (a concurrent write makes it read and fold again).
#pragma once

#include <memory>
#include <vector>

#include "pipeline/pull_stage.h"
#include "pipeline/stage.h"
#include "model/report.h"

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
  struct Worker;
  using Pull = pipeline::PullStage<model::Report, Worker>;

  explicit StatusStage(pipeline::StageContext& context);
  static Result<std::vector<Pull::Decoded>> DecodeReports(const bus::Frame& frame);
  // Folds a batch of reports (a pod's merged into one) and writes every
  // pod's new status and events in as few transactions as it can, each pod
  // guarded by its revision; uses `worker`'s client and state.
  void Apply(Worker& worker, std::vector<model::Report>& reports);

  // Reports of one pod go to one worker, in order; pods in parallel.
  Pull pull_;
};
static_assert(pipeline::Stage<StatusStage>);

}  // namespace podflow::status
