// RocksLog's write path: validation, the writer queue and group commit.
#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "base/logging.h"
#include "log/record_codec.h"
#include "log/rocks_log.h"
#include "log/rocks_status.h"

namespace podflow::log_internal {

namespace lf = log_format;

namespace {

const std::string& OpKey(const TxnOp& op) {
  return std::holds_alternative<PutOp>(op) ? std::get<PutOp>(op).key : std::get<DeleteOp>(op).key;
}

const std::optional<Revision>& OpGuard(const TxnOp& op) {
  return std::holds_alternative<PutOp>(op) ? std::get<PutOp>(op).guard
                                           : std::get<DeleteOp>(op).guard;
}

// What a group has done to a key so far, ahead of the index (which is only
// updated once the group is durable).
struct Staged {
  bool live = false;
  lf::LatestEntry entry;
  const PutOp* put = nullptr;  // live: the op whose value the key now has
};

}  // namespace

Status RocksLog::ValidateTxn(const std::vector<TxnOp>& ops) const {
  size_t total = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string& key = OpKey(ops[i]);
    const std::string where = "op " + std::to_string(i);
    if (key.empty()) return Status::Invalid(where + ": key is empty");
    if (key.find('\0') != std::string::npos) {
      return Status::Invalid(where + ": key contains a NUL byte");
    }
    size_t bytes = key.size();
    if (const auto* put = std::get_if<PutOp>(&ops[i])) {
      bytes += put->value.size();
      if (put->ttl_seconds < 0) return Status::Invalid(where + ": ttl_seconds is negative");
      // etcd's MaxLeaseTTL; also keeps now_ms + ttl * 1000 from overflowing.
      constexpr int64_t kMaxTtlSeconds = 9'000'000'000;
      if (put->ttl_seconds > kMaxTtlSeconds) {
        return Status::Invalid(where + ": ttl_seconds is over the limit of " +
                               std::to_string(kMaxTtlSeconds));
      }
    }
    const auto& guard = OpGuard(ops[i]);
    if (guard && guard->value() < 0) return Status::Invalid(where + ": guard revision is negative");
    if (bytes > options_.max_txn_bytes) {
      return Status::Invalid(where + ": key + value is " + std::to_string(bytes) +
                             " bytes, over the limit of " + std::to_string(options_.max_txn_bytes) +
                             " (max request bytes)");
    }
    total += bytes;
  }
  // Duplicate keys: sort the keys' positions (txns are small; no hashing).
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return OpKey(ops[a]) < OpKey(ops[b]); });
  for (size_t i = 1; i < order.size(); ++i) {
    if (OpKey(ops[order[i - 1]]) == OpKey(ops[order[i]])) {
      const size_t a = std::min(order[i - 1], order[i]), b = std::max(order[i - 1], order[i]);
      return Status::Invalid("duplicate key given in txn request: ops " + std::to_string(a) +
                             " and " + std::to_string(b) + " both change the same key");
    }
  }
  if (total > options_.max_txn_bytes) {
    return Status::Invalid("txn keys + values are " + std::to_string(total) +
                           " bytes, over the limit of " + std::to_string(options_.max_txn_bytes) +
                           " (max request bytes)");
  }
  return Status::Ok();
}

Result<TxnResult> RocksLog::Txn(std::vector<TxnOp> ops, TxnOptions options) {
  if (read_only_) return Status::Unavailable("event log " + options_.dir + " is open read-only");
  PODFLOW_RETURN_IF_ERROR(ValidateTxn(ops));
  auto pending = std::make_shared<PendingTxn>();
  pending->ops = std::move(ops);
  pending->options = std::move(options);
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (stopping_) return Status::Unavailable("event log is closed");
    queue_.push_back(pending);
    first = queue_.size() == 1;
  }
  if (first) queue_cv_.notify_one();
  // No shared lock to wake into: many callers finish per group.
  while (!pending->done.load(std::memory_order_acquire)) {
    pending->done.wait(false, std::memory_order_acquire);
  }
  for (auto& next : pending->wake) {
    if (next) next->done.notify_one();
    next.reset();
  }
  return std::move(pending->result);
}

void RocksLog::CommitterLoop() {
  std::vector<PendingPtr> group;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      group.swap(queue_);
    }
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      CommitGroupLocked(&group);
    }
    for (size_t i = 0; i < group.size(); ++i) {
      for (size_t c = 0; c < 2; ++c) {
        if (2 * i + 1 + c < group.size()) group[i]->wake[c] = group[2 * i + 1 + c];
      }
    }
    for (const PendingPtr& p : group) p->done.store(true, std::memory_order_release);
    group.front()->done.notify_one();
    group.clear();
  }
}

void RocksLog::CommitGroupLocked(std::vector<PendingPtr>* group) {
  if (!write_error_.ok()) {
    for (const PendingPtr& p : *group) p->result = write_error_;
    return;
  }
  batch_.Clear();
  index_puts_.clear();
  std::unordered_map<std::string_view, Staged> staged;
  staged.reserve(group->size() * 2);
  std::vector<std::shared_ptr<RevisionChanges>> revisions;
  // Put values to move into the ring once durable: revisions[revision]
  // ->changes[change] gets put->value.
  struct ValueMove {
    size_t revision;
    size_t change;
    PutOp* put;
  };
  std::vector<ValueMove> moves;
  int64_t rev = committed_rev_;
  const int64_t now_ms = NowMs();

  // The key's state before the op: staged by this group, else the index.
  auto lookup = [&](const std::string& key) -> std::optional<lf::LatestEntry> {
    auto it = staged.find(key);
    if (it != staged.end()) {
      return it->second.live ? std::optional(it->second.entry) : std::nullopt;
    }
    const lf::LatestEntry* e = index_.Find(key);
    return e ? std::optional(*e) : std::nullopt;
  };
  // The key's current KeyValue, for a failed guard.
  auto current_kv = [&](const std::string& key) -> Result<std::optional<KeyValue>> {
    auto it = staged.find(key);
    if (it != staged.end()) {
      if (!it->second.live) return std::optional<KeyValue>();
      const Staged& s = it->second;
      return std::optional(KeyValue{key, s.put->value, Revision(s.entry.create_revision),
                                    Revision(s.entry.mod_revision), s.entry.version,
                                    s.put->ttl_seconds});
    }
    const lf::LatestEntry* e = index_.Find(key);
    if (e == nullptr) return std::optional<KeyValue>();
    std::string bytes;
    const std::string db_key = lf::RecordKey(e->mod_revision, e->sub);
    PODFLOW_RETURN_IF_ERROR(FromRocks(db_->Get(rocksdb::ReadOptions(), db_key, &bytes),
                                      "read " + lf::Describe(db_key)));
    Result<DecodedRecord> r = DecodeRecord(db_key, bytes);
    if (!r.ok()) return r.status();
    return std::optional(std::move(r->change.kv));
  };

  for (const PendingPtr& p : *group) {
    std::vector<TxnOp>& ops = p->ops;
    TxnResult result;
    // Guards first: all or nothing.
    bool failed = false;
    bool changes = false;
    Status read_error;
    for (size_t i = 0; i < ops.size() && !failed; ++i) {
      const std::string& key = OpKey(ops[i]);
      std::optional<lf::LatestEntry> cur = lookup(key);
      const auto& guard = OpGuard(ops[i]);
      const int64_t have = cur ? cur->mod_revision : 0;
      if (guard && guard->value() != have) {
        failed = true;
        result.failed_op = i;
        Result<std::optional<KeyValue>> kv = current_kv(key);
        if (!kv.ok()) {
          read_error = kv.status();
        } else {
          result.current = std::move(*kv);
        }
      }
      changes |= std::holds_alternative<PutOp>(ops[i]) || cur.has_value();
    }
    if (failed) {
      result.revision = Revision(rev);
      if (read_error.ok()) {
        p->result = std::move(result);
      } else {
        p->result = std::move(read_error);
      }
      continue;
    }
    result.succeeded = true;
    if (!changes) {
      result.revision = Revision(rev);
      p->result = std::move(result);
      continue;
    }
    ++rev;
    auto changed = std::make_shared<RevisionChanges>();
    changed->revision = Revision(rev);
    changed->writer = p->options.writer;
    changed->committed_at_ms = now_ms;
    uint32_t sub = 0;
    for (TxnOp& op : ops) {
      const std::string& key = OpKey(op);
      std::optional<lf::LatestEntry> cur = lookup(key);
      RecordFields f;
      f.key = key;
      f.mod_revision = rev;
      f.sub = sub;
      f.writer = p->options.writer;
      f.committed_at_ms = now_ms;
      if (cur) {
        f.prev_mod_revision = cur->mod_revision;
        f.prev_sub = cur->sub;
      }
      lf::LatestEntry latest;
      latest.mod_revision = rev;
      latest.sub = sub;
      Staged s;
      if (auto* put = std::get_if<PutOp>(&op)) {
        moves.push_back({revisions.size(), changed->changes.size(), put});
        f.value = put->value;
        f.create_revision = cur ? cur->create_revision : rev;
        f.version = cur ? cur->version + 1 : 1;
        f.ttl_seconds = put->ttl_seconds;
        f.expires_at_ms = put->ttl_seconds > 0 ? now_ms + put->ttl_seconds * 1000 : 0;
        latest.create_revision = f.create_revision;
        latest.version = f.version;
        latest.expires_at_ms = f.expires_at_ms;
        s.live = true;
        s.put = put;
      } else if (cur) {
        f.is_delete = true;
        latest.flags = lf::kFlagTombstone;
        ++result.deleted;
      } else {
        continue;  // deleting a missing key changes nothing
      }
      s.entry = latest;
      batch_.Put(lf::RecordKey(rev, sub), EncodeRecord(f, &builder_));
      index_puts_.emplace_back(lf::HistoryKey(key, rev), lf::EncodeHistory({sub, latest.flags}));
      index_puts_.emplace_back(lf::LatestKey(key), lf::EncodeLatest(latest));
      staged[key] = s;
      Change c;
      c.type = f.is_delete ? ChangeType::kDelete : ChangeType::kPut;
      c.kv.key = key;
      c.kv.mod_revision = Revision(rev);
      if (!f.is_delete) {
        c.kv.create_revision = Revision(f.create_revision);
        c.kv.version = f.version;
        c.kv.ttl_seconds = f.ttl_seconds;
      }
      changed->changes.push_back(std::move(c));
      ++sub;
    }
    result.revision = Revision(rev);
    p->result = std::move(result);
    revisions.push_back(std::move(changed));
  }
  if (revisions.empty()) return;  // nothing to write

  // Index entries after the records, sorted: the memtable's skiplist inserts
  // are much cheaper for nearby keys. Stable, so that a later txn's 'l' entry
  // for the same key still wins.
  std::stable_sort(index_puts_.begin(), index_puts_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, v] : index_puts_) batch_.Put(k, v);
  index_puts_.clear();

  batch_.Put(lf::kMetaRevision, lf::EncodeI64(rev));
  Status s = FromRocks(db_->Write(write_options_, &batch_), "write batch");
  if (!s.ok()) {
    // The storage may hold a half-written WAL tail; RocksDB recovery drops it.
    // Refuse every later write rather than guess (leveldb's bg_error_).
    Logger("log")->error("write failed, the log refuses further writes: {}", s.ToString());
    write_error_ = s;
    for (const PendingPtr& p : *group) p->result = s;
    return;
  }
  // Durable: publish. The values move from the callers' ops into the ring
  // (the callers only wait for their TxnResult now).
  for (auto& [key, st] : staged) {
    if (st.live) {
      index_.Set(key, st.entry);
    } else {
      index_.Erase(key);
    }
  }
  for (const ValueMove& m : moves) {
    revisions[m.revision]->changes[m.change].kv.value = std::move(m.put->value);
  }
  const auto now = std::chrono::steady_clock::now();
  for (auto& rc : revisions) rc->committed_at = now;
  committed_rev_ = rev;
  current_rev_.store(rev);
  std::vector<RevisionChangesPtr> published(revisions.begin(), revisions.end());
  ring_.Append(std::move(published), Revision(rev));
}

}  // namespace podflow::log_internal
