// RocksLog: the EventLog on RocksDB. Private to src/log; users see log.h.
//
// Threads:
//  - callers of Txn() enqueue a PendingTxn and wait for it;
//  - the committer thread takes every pending txn at once (group commit),
//    evaluates guards in order (later txns see earlier ones), assigns
//    revisions, writes ONE WriteBatch (synced), updates the key index and the
//    change ring, then wakes the callers (leveldb's writer queue);
//  - the expirer thread deletes keys whose TTL passed, through Txn();
//  - readers use RocksDB snapshots and never take the write lock.
//
// Read-only (OpenSecondary): a RocksDB secondary instance over another
// process's directory; no committer, no expirer, no writes. CatchUp() pulls
// in what the primary wrote and republishes the revisions; SecondaryLog
// (secondary_log.h) calls it before reads.
//
// Lock order: compact_mu_ -> write_mu_ -> queue_mu_. The ring and the expirer
// have their own leaf locks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "log/change_ring.h"
#include "log/key_index.h"
#include "log/log.h"
#include "log/log_format.h"

namespace podflow::log_internal {

class RocksLog final : public EventLog {
 public:
  static Result<std::unique_ptr<EventLog>> Open(const LogOptions& options);
  // Opens `dir` as a RocksDB secondary instance keeping its own state in
  // `secondary_dir` (which the caller owns). NotFound: no log in `dir`.
  static Result<std::unique_ptr<RocksLog>> OpenSecondary(const std::string& dir,
                                                         const std::string& secondary_dir);
  ~RocksLog() override;

  using EventLog::Txn;
  Result<TxnResult> Txn(std::vector<TxnOp> ops, TxnOptions options) override;
  Result<std::optional<KeyValue>> Get(std::string_view key, Revision at) override;
  Result<RangeResult> Range(const RangeRequest& request) override;
  Status Compact(Revision rev) override;
  Revision CurrentRevision() const override { return Revision(current_rev_.load()); }
  Revision CompactRevision() const override { return Revision(compact_rev_.load()); }
  Result<std::vector<RevisionChangesPtr>> ReadChanges(Revision from,
                                                      size_t max_revisions) override;
  Revision WaitForRevision(Revision want,
                           std::chrono::steady_clock::time_point deadline) override;
  void WakeWaiters() override { ring_.WakeAll(); }

  // Read-only instances only: catches up with the primary, then re-reads
  // and publishes the revision and compact revision. Not concurrent with
  // reads (SecondaryLog serializes them).
  Status CatchUp();

 private:
  // One Txn() call waiting for the committer. Shared by the caller and the
  // committer so that the committer may still touch it (notify) after the
  // caller has seen `done` and left.
  struct PendingTxn {
    std::vector<TxnOp> ops;
    TxnOptions options;
    Result<TxnResult> result = Status::Internal("txn not evaluated");
    std::atomic<bool> done{false};  // set (release) once `result` is final
    // Callers this one wakes when it wakes (a binary tree over the group),
    // so the committer wakes only the first and goes on to the next group.
    std::shared_ptr<PendingTxn> wake[2];
  };
  using PendingPtr = std::shared_ptr<PendingTxn>;

  // A RocksDB snapshot released on scope exit.
  class ScopedSnapshot;

  RocksLog(const LogOptions& options, rocksdb::DB* db, bool read_only);
  Status Recover();
  // Reads and checks mformat, mrevision and mcompact.
  Status ReadMeta(int64_t* rev, int64_t* compact);
  int64_t NowMs() const;

  // --- committer.cc ---
  Status ValidateTxn(const std::vector<TxnOp>& ops) const;
  void CommitterLoop();
  // REQUIRES: write_mu_ held; called by the committer thread only.
  void CommitGroupLocked(std::vector<PendingPtr>* group);

  // --- expirer (rocks_log.cc) ---
  void ExpirerLoop();

  // --- rocks_log_read.cc ---
  // The revision a read at `requested` is done at, checked against the
  // current and compact revisions. Call after taking the snapshot.
  Result<int64_t> ReadRevision(int64_t requested, int64_t head) const;
  // Where `key`'s newest record at or below `rev` is, if the key is live at
  // `rev`. `latest` is the key's 'l' entry.
  Result<std::optional<std::pair<int64_t, uint32_t>>> LocateAt(
      const rocksdb::ReadOptions& ro, std::string_view key, const log_format::LatestEntry& latest,
      int64_t rev);
  Result<KeyValue> ReadKv(const rocksdb::ReadOptions& ro, int64_t rev, uint32_t sub);
  Result<std::vector<RevisionChangesPtr>> ReadChangesFromDisk(Revision from, size_t max);

  // --- compactor.cc ---
  // Physically drops history <= rev. REQUIRES: compact_mu_ held.
  Status DropHistoryLocked(int64_t rev);

  const LogOptions options_;
  const bool read_only_;  // a secondary instance: no writes, no threads
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;

  std::atomic<int64_t> current_rev_{1};  // published after each durable group
  std::atomic<int64_t> compact_rev_{0};  // raised before history is dropped
  ChangeRing ring_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<PendingPtr> queue_;   // GUARDED_BY(queue_mu_)
  bool stopping_ = false;           // GUARDED_BY(queue_mu_)

  std::mutex write_mu_;             // held while a group is evaluated and written
  KeyIndex index_;                  // GUARDED_BY(write_mu_)
  Status write_error_;              // GUARDED_BY(write_mu_); sticky once set
  int64_t committed_rev_ = 1;       // GUARDED_BY(write_mu_)
  rocksdb::WriteBatch batch_;       // GUARDED_BY(write_mu_)
  std::vector<std::pair<std::string, std::string>> index_puts_;  // GUARDED_BY(write_mu_)
  flatbuffers::FlatBufferBuilder builder_{1024};  // GUARDED_BY(write_mu_)

  std::mutex compact_mu_;  // one compaction at a time

  std::mutex expirer_mu_;
  std::condition_variable expirer_cv_;
  bool expirer_stop_ = false;  // GUARDED_BY(expirer_mu_)

  std::thread committer_;
  std::thread expirer_;
};

class RocksLog::ScopedSnapshot {
 public:
  // Without `take` (a secondary instance, which cannot iterate at a
  // snapshot) reads go to the live state; SecondaryLog keeps that still by
  // not catching up during a read.
  ScopedSnapshot(rocksdb::DB* db, bool take)
      : db_(db), snapshot_(take ? db->GetSnapshot() : nullptr) {
    options_.snapshot = snapshot_;
  }
  ~ScopedSnapshot() {
    if (snapshot_ != nullptr) db_->ReleaseSnapshot(snapshot_);
  }
  ScopedSnapshot(const ScopedSnapshot&) = delete;
  ScopedSnapshot& operator=(const ScopedSnapshot&) = delete;

  const rocksdb::ReadOptions& read_options() const { return options_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
  rocksdb::ReadOptions options_;
};

}  // namespace podflow::log_internal
