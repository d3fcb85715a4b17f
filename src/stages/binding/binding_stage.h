// The binding stage: the second write of a pod. It pulls the scheduler's
// decisions and writes spec.nodeName, the PodScheduled condition and the
// Scheduled event in one transaction guarded by the pod revision the
// decision was made on. A pod that changed meanwhile is not bound: the
// scheduler sees the newer revision and decides again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipeline/pull_stage.h"
#include "pipeline/stage.h"

namespace podflow::binding {

class BindingStage {
 public:
  static constexpr std::string_view kName = "binding";
  static Result<std::unique_ptr<BindingStage>> Create(pipeline::StageContext& context);

  ~BindingStage();  // out of line: Worker is complete only in the .cc

  // Binds the decisions channel before returning.
  Status Start();
  void Stop();

 private:
  explicit BindingStage(pipeline::StageContext& context);
  // A decision as it came off the bus.
  struct Decision {
    std::string pod_key;
    std::string pod_uid;
    int64_t pod_mod_revision = 0;
    std::string node;
    std::string pod;  // the stored pod at pod_mod_revision ("" = read it)
    // The scheduler's explanation (an explain::SchedulingDecision), stored
    // under scheduler::DecisionKeyOfPod in the binding's transaction ("" = none).
    std::string explanation;
  };
  struct Worker;
  using Pull = pipeline::PullStage<Decision, Worker>;

  static Result<std::vector<Pull::Decoded>> DecodeDecision(const bus::Frame& frame);
  // Applies a batch of decisions with `worker`'s client: every pod's
  // binding in one transaction, each guarded by its decided revision.
  void Bind(Worker& worker, std::vector<Decision>& decisions);

  // Decisions bound in parallel (their writes share group commits); one
  // pod's decisions stay in order on one worker.
  Pull pull_;
};
static_assert(pipeline::Stage<BindingStage>);

}  // namespace podflow::binding
