// The persistence stage as a pipeline node: opens the event log in the
// configured data dir and serves it on the api and watch channels; with a
// compaction interval, compacts its history as kube-apiserver has etcd do.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "log/log.h"
#include "pipeline/stage.h"
#include "stages/persistence/persistence.h"

namespace podflow::persistence {

class PersistenceStage {
 public:
  static constexpr std::string_view kName = "persistence";
  static Result<std::unique_ptr<PersistenceStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  explicit PersistenceStage(pipeline::StageContext& context) : context_(context) {}
  // Every compaction interval: compacts the log at the revision it had at
  // the previous tick, so at least one interval of history stays.
  void Compact();

  pipeline::StageContext& context_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<Server> server_;
  std::thread compactor_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
};
static_assert(pipeline::Stage<PersistenceStage>);

}  // namespace podflow::persistence
