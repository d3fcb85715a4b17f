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
#include <optional>
#include <string>
#include <vector>

#include "bus/bus.h"
#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "stages/runtime/process/exec_sessions.h"
#include "stages/runtime/runtime.h"

namespace podflow::runtime {

// Questions the kubelet channel's threads ask the stage's loop, which owns
// the pods: each waits for the loop's answer.
template <typename Question, typename Answer>
class Mailbox {
 public:
  using Answerer = std::function<Result<Answer>(const Question&)>;

  // From any thread: Unavailable when the loop does not answer in `timeout`.
  Result<Answer> Ask(Question question, std::chrono::milliseconds timeout) {
    auto pending = std::make_shared<Pending>();
    pending->question = std::move(question);
    std::unique_lock lock(mu_);
    waiting_.push_back(pending);
    if (!answered_.wait_for(lock, timeout, [&] { return pending->answer.has_value(); })) {
      std::erase(waiting_, pending);
      return Status::Unavailable("the runtime did not answer within " + std::to_string(timeout.count()) + " ms");
    }
    return std::move(*pending->answer);
  }

  // On the loop's thread: answers every question waiting.
  void AnswerAll(const Answerer& answer) {
    std::vector<std::shared_ptr<Pending>> questions;
    {
      std::lock_guard lock(mu_);
      questions.swap(waiting_);
    }
    if (questions.empty()) return;
    for (auto& q : questions) {
      Result<Answer> a = answer(q->question);
      std::lock_guard lock(mu_);
      q->answer = std::move(a);
    }
    answered_.notify_all();
  }

 private:
  struct Pending {
    Question question;
    std::optional<Result<Answer>> answer;
  };
  std::mutex mu_;
  std::condition_variable answered_;
  std::vector<std::shared_ptr<Pending>> waiting_;  // GUARDED_BY(mu_)
};

// pods/log: a container's log.
struct LogQuestion {
  std::string pod_key;
  std::string uid;
  LogQuery query;
};
using LogMailbox = Mailbox<LogQuestion, LogAnswer>;

// pods/exec: the running container a command is to run beside.
struct ExecQuestion {
  std::string pod_key;
  std::string uid;
  std::string container;
};
using ExecMailbox = Mailbox<ExecQuestion, process::ExecTarget>;

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
  ExecMailbox execs_;
  // The commands of `podflow exec`; they outlive the kubelet channel's
  // threads that start them (and are killed with them).
  process::ExecSessions exec_sessions_;
  std::unique_ptr<bus::RpcServer> kubelet_;  // the kubelet channel: container logs and exec
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<RuntimeStage>);

}  // namespace podflow::runtime
