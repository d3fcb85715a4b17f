#include "log/secondary_log.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/logging.h"

namespace podflow {

Result<std::unique_ptr<EventLog>> OpenLogReadOnly(const std::string& dir) {
  return log_internal::SecondaryLog::Open(dir);
}

namespace log_internal {

namespace {

// How often WaitForRevision() looks for new revisions of the writer.
constexpr auto kPollInterval = std::chrono::milliseconds(50);

}  // namespace

Result<std::unique_ptr<EventLog>> SecondaryLog::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) return Status::IOError("no temporary directory: " + ec.message());
  std::string pattern = (tmp / "podflow-log-reader-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("create a temporary directory in " + tmp.string() + ": " +
                           std::strerror(errno));
  }
  Result<std::unique_ptr<RocksLog>> log = RocksLog::OpenSecondary(dir, pattern);
  if (!log.ok()) {
    std::filesystem::remove_all(pattern, ec);
    return log.status();
  }
  return std::unique_ptr<EventLog>(new SecondaryLog(std::move(*log), pattern));
}

SecondaryLog::SecondaryLog(std::unique_ptr<RocksLog> log, std::string secondary_dir)
    : log_(std::move(log)), secondary_dir_(std::move(secondary_dir)) {}

SecondaryLog::~SecondaryLog() {
  // The RocksLog (and its DB) must be gone before its files are removed.
  log_.reset();
  std::error_code ec;
  std::filesystem::remove_all(secondary_dir_, ec);
  if (ec) Logger("log")->warn("remove {}: {}", secondary_dir_, ec.message());
}

std::shared_lock<std::shared_mutex> SecondaryLog::CatchUpAndHold() const {
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    Status s = log_->CatchUp();
    if (!s.ok()) Logger("log")->warn("read-only log: {}", s.ToString());
  }
  return std::shared_lock<std::shared_mutex>(mu_);
}

Result<TxnResult> SecondaryLog::Txn(std::vector<TxnOp> ops, TxnOptions options) {
  return log_->Txn(std::move(ops), std::move(options));  // Unavailable
}

Status SecondaryLog::Compact(Revision rev) { return log_->Compact(rev); }  // Unavailable

Result<std::optional<KeyValue>> SecondaryLog::Get(std::string_view key, Revision at) {
  auto hold = CatchUpAndHold();
  return log_->Get(key, at);
}

Result<RangeResult> SecondaryLog::Range(const RangeRequest& request) {
  auto hold = CatchUpAndHold();
  return log_->Range(request);
}

Revision SecondaryLog::CurrentRevision() const {
  auto hold = CatchUpAndHold();
  return log_->CurrentRevision();
}

Revision SecondaryLog::CompactRevision() const {
  auto hold = CatchUpAndHold();
  return log_->CompactRevision();
}

Result<std::vector<RevisionChangesPtr>> SecondaryLog::ReadChanges(Revision from,
                                                                  size_t max_revisions) {
  auto hold = CatchUpAndHold();
  return log_->ReadChanges(from, max_revisions);
}

Revision SecondaryLog::WaitForRevision(Revision want,
                                       std::chrono::steady_clock::time_point deadline) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    generation = wake_generation_;
  }
  for (;;) {
    const Revision head = CurrentRevision();
    const auto now = std::chrono::steady_clock::now();
    if (head.value() >= want.value() || now >= deadline) return head;
    std::unique_lock<std::mutex> lock(wake_mu_);
    if (wake_cv_.wait_until(lock, std::min(deadline, now + kPollInterval),
                            [&] { return wake_generation_ != generation; })) {
      lock.unlock();
      return CurrentRevision();
    }
  }
}

void SecondaryLog::WakeWaiters() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    ++wake_generation_;
  }
  wake_cv_.notify_all();
}

}  // namespace log_internal
}  // namespace podflow
