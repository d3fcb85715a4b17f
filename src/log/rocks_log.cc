// RocksLog: opening, recovery, shutdown and the TTL expirer.
#include "log/rocks_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <rocksdb/options.h>

#include "base/logging.h"
#include "log/rocks_status.h"

namespace podflow {

Result<TxnResult> EventLog::Put(std::string key, std::string value, std::optional<Revision> guard,
                                int64_t ttl_seconds, TxnOptions options) {
  std::vector<TxnOp> ops;
  ops.emplace_back(PutOp{std::move(key), std::move(value), guard, ttl_seconds});
  return Txn(std::move(ops), std::move(options));
}

Result<TxnResult> EventLog::Delete(std::string key, std::optional<Revision> guard,
                                   TxnOptions options) {
  std::vector<TxnOp> ops;
  ops.emplace_back(DeleteOp{std::move(key), guard});
  return Txn(std::move(ops), std::move(options));
}

namespace {

// The process holding RocksDB's lock on `lock_file` (a POSIX record lock),
// as "pid 123 (podflow run --config x.yaml)"; nullopt when none does.
std::optional<std::string> LockHolder(const std::string& lock_file) {
  int fd = open(lock_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  const bool asked = fcntl(fd, F_GETLK, &lock) == 0;
  close(fd);
  if (!asked || lock.l_type == F_UNLCK || lock.l_pid <= 0) return std::nullopt;
  std::string holder = "pid " + std::to_string(lock.l_pid);
  std::ifstream cmdline("/proc/" + std::to_string(lock.l_pid) + "/cmdline");
  std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  while (!args.empty() && args.back() == '\0') args.pop_back();
  std::replace(args.begin(), args.end(), '\0', ' ');
  if (!args.empty()) holder += " (" + args + ")";
  return holder;
}

}  // namespace

Result<std::unique_ptr<EventLog>> OpenLog(const LogOptions& options) {
  return log_internal::RocksLog::Open(options);
}

namespace log_internal {

namespace lf = log_format;

Result<std::unique_ptr<EventLog>> RocksLog::Open(const LogOptions& options) {
  if (options.dir.empty()) return Status::Invalid("LogOptions.dir is empty");
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.IncreaseParallelism(2);
  rocksdb::DB* db = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(db_options, options.dir, &db);
  if (!opened.ok()) {
    // Another process's lock only: opening (and closing) LOCK here would
    // drop this process's own lock on it, were the dir open here already.
    const bool other_process = opened.ToString().find("current process") == std::string::npos;
    if (std::optional<std::string> holder =
            other_process ? LockHolder(options.dir + "/LOCK") : std::nullopt) {
      return Status::IOError("the event log at " + options.dir + " is in use by " + *holder +
                             "; stop it first (only one process may open a data dir)");
    }
    return FromRocks(opened, "open " + options.dir);
  }
  std::unique_ptr<RocksLog> log(new RocksLog(options, db, /*read_only=*/false));
  PODFLOW_RETURN_IF_ERROR(log->Recover());
  log->committer_ = std::thread([raw = log.get()] { raw->CommitterLoop(); });
  log->expirer_ = std::thread([raw = log.get()] { raw->ExpirerLoop(); });
  Logger("log")->info("opened {} at revision {} (compact revision {}, {} live keys)",
                      options.dir, log->current_rev_.load(), log->compact_rev_.load(),
                      log->index_.size());
  return std::unique_ptr<EventLog>(std::move(log));
}

RocksLog::RocksLog(const LogOptions& options, rocksdb::DB* db, bool read_only)
    : options_(options),
      read_only_(read_only),
      db_(db),
      ring_(options.ring_max_revisions, options.ring_max_bytes) {
  write_options_.sync = options.sync;
}

RocksLog::~RocksLog() {
  {
    std::lock_guard<std::mutex> lock(expirer_mu_);
    expirer_stop_ = true;
  }
  expirer_cv_.notify_all();
  if (expirer_.joinable()) expirer_.join();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (committer_.joinable()) committer_.join();
  ring_.Close();
  if (db_) {
    Status s = FromRocks(db_->Close(), "close");
    if (!s.ok()) Logger("log")->warn("{}", s.ToString());
  }
}

int64_t RocksLog::NowMs() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::unique_ptr<RocksLog>> RocksLog::OpenSecondary(const std::string& dir,
                                                          const std::string& secondary_dir) {
  if (dir.empty()) return Status::Invalid("log directory is empty");
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    return Status::NotFound(dir + ": no event log here");
  }
  rocksdb::Options db_options;
  db_options.create_if_missing = false;
  db_options.max_open_files = -1;  // required by secondary instances
  rocksdb::DB* db = nullptr;
  PODFLOW_RETURN_IF_ERROR(
      FromRocks(rocksdb::DB::OpenAsSecondary(db_options, dir, secondary_dir, &db),
                "open " + dir + " read-only"));
  LogOptions options;
  options.dir = dir;
  options.ring_max_revisions = 0;
  options.ring_max_bytes = 0;
  std::unique_ptr<RocksLog> log(new RocksLog(options, db, /*read_only=*/true));
  PODFLOW_RETURN_IF_ERROR(log->Recover());
  Logger("log")->debug("opened {} read-only at revision {} (compact revision {})", dir,
                       log->current_rev_.load(), log->compact_rev_.load());
  return log;
}

Status RocksLog::CatchUp() {
  assert(read_only_);
  PODFLOW_RETURN_IF_ERROR(FromRocks(db_->TryCatchUpWithPrimary(), "catch up with the writer"));
  int64_t rev = 0, compact = 0;
  PODFLOW_RETURN_IF_ERROR(ReadMeta(&rev, &compact));
  current_rev_.store(rev);
  compact_rev_.store(compact);
  ring_.SetHead(Revision(rev));
  return Status::Ok();
}

Status RocksLog::ReadMeta(int64_t* rev_out, int64_t* compact_out) {
  rocksdb::ReadOptions ro;
  std::string value;
  rocksdb::Status s = db_->Get(ro, lf::kMetaFormat, &value);
  if (s.IsNotFound()) return Status::NotFound(options_.dir + ": no event log here");
  PODFLOW_RETURN_IF_ERROR(FromRocks(s, "read meta"));
  if (value.size() != 4 || lf::GetBigEndian32(value.data()) != lf::kFormatVersion) {
    return Status::Corruption("meta " + lf::Describe(lf::kMetaFormat) +
                              ": unsupported format (want version " +
                              std::to_string(lf::kFormatVersion) + ")");
  }
  int64_t meta[2] = {0, 0};
  const std::string_view names[2] = {lf::kMetaRevision, lf::kMetaCompact};
  for (int i = 0; i < 2; ++i) {
    PODFLOW_RETURN_IF_ERROR(FromRocks(db_->Get(ro, names[i], &value), "read meta"));
    Result<int64_t> v = lf::DecodeI64(names[i], value);
    if (!v.ok()) return v.status();
    meta[i] = *v;
  }
  const int64_t rev = meta[0], compact = meta[1];
  if (rev < 1 || compact < 0 || compact > rev) {
    return Status::Corruption("meta: revision " + std::to_string(rev) + ", compact revision " +
                              std::to_string(compact) + " are inconsistent");
  }
  *rev_out = rev;
  *compact_out = compact;
  return Status::Ok();
}

// Reads and checks the meta keys, then loads the live keys into the index.
// A fresh directory gets format version 1 at revision 1 (not a read-only one:
// that is NotFound).
Status RocksLog::Recover() {
  std::lock_guard<std::mutex> lock(write_mu_);
  rocksdb::ReadOptions ro;
  std::string value;
  rocksdb::Status s = db_->Get(ro, lf::kMetaFormat, &value);
  if (s.IsNotFound() && !read_only_) {
    rocksdb::WriteBatch batch;
    std::string format;
    lf::PutBigEndian32(&format, lf::kFormatVersion);
    batch.Put(lf::kMetaFormat, format);
    batch.Put(lf::kMetaRevision, lf::EncodeI64(1));
    batch.Put(lf::kMetaCompact, lf::EncodeI64(0));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    PODFLOW_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "write initial meta"));
    value = format;
  }
  int64_t rev = 0, compact = 0;
  PODFLOW_RETURN_IF_ERROR(ReadMeta(&rev, &compact));
  // The newest record must not be newer than the recorded revision (both are
  // written in one batch).
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  it->SeekForPrev(lf::RecordKey(INT64_MAX, UINT32_MAX));
  if (it->Valid() && !it->key().empty() && it->key()[0] == lf::kRecordPrefix) {
    int64_t last = 0;
    uint32_t sub = 0;
    if (!lf::ParseRecordKey(it->key().ToStringView(), &last, &sub) || last > rev) {
      return Status::Corruption("meta: newest record " + lf::Describe(it->key().ToStringView()) +
                                " is past the recorded revision " + std::to_string(rev));
    }
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "scan records"));
  // Live keys (and pending TTLs) from the 'l' entries.
  const std::string latest_prefix(1, lf::kLatestPrefix);
  for (it->Seek(latest_prefix); it->Valid() && it->key().starts_with(latest_prefix); it->Next()) {
    Result<lf::LatestEntry> e = lf::DecodeLatest(it->key().ToStringView(),
                                                 it->value().ToStringView());
    if (!e.ok()) return e.status();
    if (e->mod_revision > rev) {
      return Status::Corruption("latest entry " + lf::Describe(it->key().ToStringView()) +
                                " is past the recorded revision " + std::to_string(rev));
    }
    // A reader needs no guards or TTLs: it only checks the entries.
    if (!e->tombstone() && !read_only_) index_.Set(it->key().ToString().substr(1), *e);
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "scan latest entries"));
  committed_rev_ = rev;
  current_rev_.store(rev);
  compact_rev_.store(compact);
  ring_.SetHead(Revision(rev));
  return Status::Ok();
}

Revision RocksLog::WaitForRevision(Revision want,
                                   std::chrono::steady_clock::time_point deadline) {
  return ring_.WaitFor(want, deadline);
}

// Deletes expired keys with an ordinary delete guarded by the mod_revision
// of the put that set the TTL, so a later put (which replaced or cancelled
// the TTL) makes the guard fail and the key stays.
void RocksLog::ExpirerLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(expirer_mu_);
      expirer_cv_.wait_for(lock, options_.expiry_poll_interval, [&] { return expirer_stop_; });
      if (expirer_stop_) return;
    }
    std::vector<std::pair<std::string, int64_t>> due;
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      if (!write_error_.ok()) continue;
      due = index_.Expired(NowMs(), 1024);
    }
    for (auto& [key, mod_rev] : due) {
      Result<TxnResult> r = EventLog::Delete(key, Revision(mod_rev), TxnOptions{"ttl"});
      if (!r.ok()) {
        Logger("log")->warn("TTL delete of {} failed: {}", key, r.status().ToString());
        break;
      }
    }
  }
}

}  // namespace log_internal
}  // namespace podflow
