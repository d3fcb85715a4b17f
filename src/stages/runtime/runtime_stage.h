// The runtime stage as a pipeline node: the kubelets of the simulated nodes.
// It registers each configured node's Node object, follows the pods bound to
// those nodes (list, then watch), drives their lifecycles on the wall clock
// through NodeAgentSet, and pushes one report per step to the status stage.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "bus/bus.h"
#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "stages/runtime/runtime.h"

namespace podflow::runtime {

// Questions the kubelet channel's threads ask the stage's loop, which owns
// the pods: each waits for the loop's answer.
class LogMailbox {
 public:
  struct Question {
    std::string pod_key;
    std::string uid;
    LogQuery query;
  };
  using Answerer = std::function<Result<LogAnswer>(const Question&)>;

  // From any thread: Unavailable when the loop does not answer in `timeout`.
  Result<LogAnswer> Ask(Question question, std::chrono::milliseconds timeout);
  // On the loop's thread: answers every question waiting.
  void AnswerAll(const Answerer& answer);

 private:
  struct Pending {
    Question question;
    std::optional<Result<LogAnswer>> answer;
  };
  std::mutex mu_;
  std::condition_variable answered_;
  std::vector<std::shared_ptr<Pending>> waiting_;  // GUARDED_BY(mu_)
};

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
  LogMailbox logs_;
  std::unique_ptr<bus::RpcServer> kubelet_;  // the kubelet channel: container logs
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<RuntimeStage>);

}  // namespace podflow::runtime
