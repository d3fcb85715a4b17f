#include "stages/persistence/persistence_stage.h"

namespace podflow::persistence {

Result<std::unique_ptr<PersistenceStage>> PersistenceStage::Create(pipeline::StageContext& context) {
  return std::unique_ptr<PersistenceStage>(new PersistenceStage(context));
}

Status PersistenceStage::Start() {
  LogOptions options;
  options.dir = context_.config.data_dir;
  options.sync = context_.config.sync;
  Result<std::unique_ptr<EventLog>> log = OpenLog(options);
  if (!log.ok()) return log.status();
  log_ = std::move(*log);
  server_ = std::make_unique<Server>(
      context_.bus, log_.get(),
      ServerOptions{context_.Endpoint("api"), context_.Endpoint("watch"), 16});
  return server_->Start();
}

void PersistenceStage::Stop() {
  if (server_) server_->Stop();
  server_.reset();
  log_.reset();
}

}  // namespace podflow::persistence
