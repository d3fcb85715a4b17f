#include "stages/persistence/persistence_stage.h"

#include "base/logging.h"

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
  PODFLOW_RETURN_IF_ERROR(server_->Start());
  if (context_.config.compaction_interval.count() > 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = false;
    }
    compactor_ = std::thread([this] { Compact(); });
  }
  return Status::Ok();
}

void PersistenceStage::Compact() {
  static auto log = Logger("stage.persistence");
  // The first tick only records the revision, as kube-apiserver's
  // compactor does: the first compaction comes after two intervals.
  Revision previous(0);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, context_.config.compaction_interval, [this] { return stopping_; })) {
    const Revision now = log_->CurrentRevision();
    if (previous > log_->CompactRevision()) {
      Status compacted = log_->Compact(previous);
      if (compacted.ok()) {
        log->info("compacted the log at revision {}", previous.value());
      } else if (compacted.code() != Code::kCompacted) {
        log->warn("compacting the log at revision {}: {}", previous.value(), compacted.ToString());
      }
    }
    previous = now;
  }
}

void PersistenceStage::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (compactor_.joinable()) compactor_.join();
  if (server_) server_->Stop();
  server_.reset();
  log_.reset();
}

}  // namespace podflow::persistence
