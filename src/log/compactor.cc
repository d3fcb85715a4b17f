// RocksLog::Compact: drops history at and below a revision.
//
// Order matters for concurrent readers and for crashes:
//  1. the new compact revision is made durable and published, so reads and
//     watches below it fail with Compacted before anything disappears;
//  2. each key's dropped entries are deleted in one WriteBatch (a key never
//     spans two batches), oldest first, so even after a crash mid-way a
//     lookup at a revision >= the compact revision finds the right entry;
//  3. an 'l' tombstone is deleted under write_mu_ after checking that no
//     newer write replaced it.
// A crash during step 2 leaves garbage below the compact revision, which
// nothing reads; the next Compact() removes it.
#include "base/logging.h"
#include "log/rocks_log.h"
#include "log/rocks_status.h"

namespace podflow::log_internal {

namespace lf = log_format;

namespace {
constexpr size_t kDeletesPerBatch = 4096;
}  // namespace

Status RocksLog::Compact(Revision rev) {
  if (read_only_) return Status::Unavailable("event log " + options_.dir + " is open read-only");
  std::lock_guard<std::mutex> lock(compact_mu_);
  const int64_t head = current_rev_.load();
  if (rev.value() > head) {
    return Status::FutureRevision("mvcc: required revision is a future revision (compact " +
                                  std::to_string(rev.value()) + " > current revision " +
                                  std::to_string(head) + ")");
  }
  const int64_t old = compact_rev_.load();
  if (rev.value() <= old) {
    return Status::Compacted("mvcc: required revision has been compacted (compact " +
                             std::to_string(rev.value()) + " <= compact revision " +
                             std::to_string(old) + ")");
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  PODFLOW_RETURN_IF_ERROR(FromRocks(
      db_->Put(wo, lf::kMetaCompact, lf::EncodeI64(rev.value())), "write compact revision"));
  compact_rev_.store(rev.value());
  Status s = DropHistoryLocked(rev.value());
  if (!s.ok()) {
    Logger("log")->error("compaction to {} stopped early: {}", rev.value(), s.ToString());
  }
  return s;
}

Status RocksLog::DropHistoryLocked(int64_t rev) {
  ScopedSnapshot snap(db_.get(), !read_only_);
  rocksdb::ReadOptions ro = snap.read_options();
  const std::string upper_key(1, lf::kHistoryPrefix + 1);
  rocksdb::Slice upper(upper_key);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));

  rocksdb::WriteBatch batch;
  std::vector<std::pair<std::string, int64_t>> tombstones;  // 'l' deletes to check
  auto flush = [&]() -> Status {
    if (!tombstones.empty()) {
      // Delete 'l' tombstones only if no write replaced them since the
      // snapshot; the committer holds write_mu_ while it writes.
      std::lock_guard<std::mutex> wlock(write_mu_);
      for (auto& [key, tomb_rev] : tombstones) {
        const std::string lkey = lf::LatestKey(key);
        std::string value;
        rocksdb::Status gs = db_->Get(rocksdb::ReadOptions(), lkey, &value);
        if (!gs.ok()) continue;
        Result<lf::LatestEntry> e = lf::DecodeLatest(lkey, value);
        if (e.ok() && e->tombstone() && e->mod_revision == tomb_rev) batch.Delete(lkey);
      }
      PODFLOW_RETURN_IF_ERROR(
          FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "write compaction batch"));
    } else if (batch.Count() > 0) {
      PODFLOW_RETURN_IF_ERROR(
          FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "write compaction batch"));
    }
    batch.Clear();
    tombstones.clear();
    return Status::Ok();
  };

  // Entries of the key being scanned with revision <= rev, oldest first.
  std::string key;
  std::vector<std::pair<std::string, lf::HistoryEntry>> older;  // (history key, entry)
  std::vector<int64_t> older_revs;
  bool has_newer = false;
  auto finish_key = [&]() {
    if (older.empty()) return;
    // Keep the newest entry <= rev unless it is a delete below rev: a delete
    // AT rev stays (etcd's "keep tombstone if revision == compactAtRev"), so
    // that a watch from the compact revision still gets its DELETE event.
    size_t drop = older.size() - 1;
    const bool newest_is_delete =
        older.back().second.tombstone() && older_revs.back() < rev;
    if (newest_is_delete) drop = older.size();
    for (size_t i = 0; i < drop; ++i) {
      batch.Delete(lf::RecordKey(older_revs[i], older[i].second.sub));
      batch.Delete(older[i].first);
    }
    if (newest_is_delete && !has_newer) tombstones.emplace_back(key, older_revs.back());
  };

  for (it->Seek(std::string(1, lf::kHistoryPrefix)); it->Valid(); it->Next()) {
    std::string_view hkey;
    int64_t hrev = 0;
    const std::string_view db_key = it->key().ToStringView();
    if (!lf::ParseHistoryKey(db_key, &hkey, &hrev)) {
      return Status::Corruption("history entry " + lf::Describe(db_key) + ": malformed key");
    }
    if (hkey != key) {
      finish_key();
      if (batch.Count() >= kDeletesPerBatch) PODFLOW_RETURN_IF_ERROR(flush());
      key.assign(hkey);
      older.clear();
      older_revs.clear();
      has_newer = false;
    }
    if (hrev > rev) {
      has_newer = true;
      continue;
    }
    Result<lf::HistoryEntry> h = lf::DecodeHistory(db_key, it->value().ToStringView());
    if (!h.ok()) return h.status();
    older.emplace_back(std::string(db_key), *h);
    older_revs.push_back(hrev);
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "scan history"));
  finish_key();
  return flush();
}

}  // namespace podflow::log_internal
