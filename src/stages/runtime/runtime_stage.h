// The runtime stage as a pipeline node: the kubelets of the simulated nodes.
// It registers each configured node's Node object, follows the pods bound to
// those nodes (list, then watch), drives their lifecycles on the wall clock
// through NodeAgentSet, and pushes one report per step to the status stage.
#pragma once

#include <memory>
#include <vector>

#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "stages/runtime/runtime.h"

namespace podflow::runtime {

class RuntimeStage {
 public:
  static constexpr std::string_view kName = "runtime";
  // Parses and resolves the `runtime:` section; Invalid names the bad key.
  static Result<std::unique_ptr<RuntimeStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  RuntimeStage(pipeline::StageContext& context, RuntimeConfig config, std::vector<SimNode> nodes)
      : context_(context), config_(std::move(config)), nodes_(std::move(nodes)) {}

  pipeline::StageContext& context_;
  const RuntimeConfig config_;
  const std::vector<SimNode> nodes_;
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<RuntimeStage>);

}  // namespace podflow::runtime
