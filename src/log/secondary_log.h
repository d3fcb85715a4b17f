// SecondaryLog: the read-only EventLog of OpenLogReadOnly(). Private to
// src/log; users see log.h.
//
// It wraps a RocksLog opened as a RocksDB secondary instance over a directory
// another process writes. Each read first catches up with that writer
// (TryCatchUpWithPrimary + re-reading the meta revisions), then reads while
// no catch-up can run, so one read sees one consistent state. Catch-ups take
// mu_ exclusively; reads take it shared.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "log/log.h"
#include "log/rocks_log.h"

namespace podflow::log_internal {

class SecondaryLog final : public EventLog {
 public:
  // Creates a private temporary directory for the secondary instance's own
  // files and opens `dir` through it. The temporary directory is removed on
  // destruction.
  static Result<std::unique_ptr<EventLog>> Open(const std::string& dir);
  ~SecondaryLog() override;

  using EventLog::Txn;
  Result<TxnResult> Txn(std::vector<TxnOp> ops, TxnOptions options) override;
  Result<std::optional<KeyValue>> Get(std::string_view key, Revision at) override;
  Result<RangeResult> Range(const RangeRequest& request) override;
  Status Compact(Revision rev) override;
  Revision CurrentRevision() const override;
  Revision CompactRevision() const override;
  Result<std::vector<RevisionChangesPtr>> ReadChanges(Revision from, size_t max_revisions) override;
  Revision WaitForRevision(Revision want, std::chrono::steady_clock::time_point deadline) override;
  void WakeWaiters() override;

 private:
  SecondaryLog(std::unique_ptr<RocksLog> log, std::string secondary_dir);

  // Catches up with the writer, then returns a shared hold on mu_ for the
  // read. A failed catch-up is logged and the read proceeds on the state
  // last caught up to (still consistent, only older).
  std::shared_lock<std::shared_mutex> CatchUpAndHold() const;

  std::unique_ptr<RocksLog> log_;
  const std::string secondary_dir_;
  mutable std::shared_mutex mu_;  // exclusive: catch-up; shared: reads

  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  uint64_t wake_generation_ = 0;  // GUARDED_BY(wake_mu_)
};

}  // namespace podflow::log_internal
