// The persistence stage as a pipeline node: opens the event log in the
// configured data dir and serves it on the api and watch channels.
#pragma once

#include <memory>

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

  pipeline::StageContext& context_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<Server> server_;
};
static_assert(pipeline::Stage<PersistenceStage>);

}  // namespace podflow::persistence
