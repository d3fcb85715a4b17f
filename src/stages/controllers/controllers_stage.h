// The controllers stage: kube-controller-manager's controllers, each a loop
// of its own, level-triggered from informers of the log, writing through
// the API (admission: authentication, RBAC, validation) as its own service
// account. Today: the node lifecycle controller, taint-based eviction, the
// ReplicaSet, Deployment, DaemonSet, Job (with TTL after finished) and
// CronJob controllers and the garbage collector, each loop on a thread of its own.
#pragma once

#include <atomic>
#include <memory>

#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "stages/controllers/config.h"

namespace podflow::controllers {

class ControllersStage {
 public:
  static constexpr std::string_view kName = "controllers";
  static Result<std::unique_ptr<ControllersStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  ControllersStage(pipeline::StageContext& context, ControllersConfig config)
      : context_(context), config_(config) {}

  pipeline::StageContext& context_;
  const ControllersConfig config_;
  pipeline::LoopThread node_lifecycle_;
  pipeline::LoopThread replica_sets_;
  pipeline::LoopThread deployments_;
  pipeline::LoopThread daemon_sets_;
  pipeline::LoopThread jobs_;
  pipeline::LoopThread cron_jobs_;
  pipeline::LoopThread garbage_collector_;
};
static_assert(pipeline::Stage<ControllersStage>);

}  // namespace podflow::controllers
