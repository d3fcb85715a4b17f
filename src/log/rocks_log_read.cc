// RocksLog's read path: MVCC Get/Range at a revision, paging, and the watch
// feed's catch-up reads from storage.
//
// Every read takes the head revision first, then a RocksDB snapshot, then
// checks the compact revision. The snapshot may hold a group the committer
// has written but not yet published: records newer than the read revision
// are skipped. Compaction raises the compact revision before it drops
// anything, so a read that passed the check sees intact history.
#include <charconv>

#include "log/record_codec.h"
#include "log/rocks_log.h"
#include "log/rocks_status.h"

namespace podflow::log_internal {

namespace lf = log_format;

namespace {

constexpr size_t kDiskReadBudgetBytes = 4u << 20;


std::string EncodeContinue(int64_t rev, std::string_view next_key) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "c1:" + std::to_string(rev) + ":";
  for (unsigned char c : next_key) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

Status DecodeContinue(std::string_view token, int64_t* rev, std::string* next_key) {
  const Status bad = Status::Invalid("malformed continue token");
  if (token.substr(0, 3) != "c1:") return bad;
  token.remove_prefix(3);
  size_t colon = token.find(':');
  if (colon == std::string_view::npos) return bad;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + colon, *rev);
  if (ec != std::errc() || ptr != token.data() + colon || *rev <= 0) return bad;
  std::string_view hex = token.substr(colon + 1);
  if (hex.empty() || hex.size() % 2 != 0) return bad;
  next_key->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    uint8_t byte = 0;
    auto [p, e] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    if (e != std::errc() || p != hex.data() + i + 2) return bad;
    next_key->push_back(static_cast<char>(byte));
  }
  return Status::Ok();
}

}  // namespace

Result<int64_t> RocksLog::ReadRevision(int64_t requested, int64_t head) const {
  if (requested < 0) return Status::Invalid("negative revision");
  if (requested > head) {
    return Status::FutureRevision("mvcc: required revision is a future revision (" +
                                  std::to_string(requested) + " > current revision " +
                                  std::to_string(head) + ")");
  }
  const int64_t rev = requested == 0 ? head : requested;
  const int64_t compact = compact_rev_.load();
  if (rev < compact) {
    return Status::Compacted("mvcc: required revision has been compacted (" +
                             std::to_string(rev) + " < compact revision " +
                             std::to_string(compact) + ")");
  }
  return rev;
}

Result<std::optional<std::pair<int64_t, uint32_t>>> RocksLog::LocateAt(
    const rocksdb::ReadOptions& ro, std::string_view key, const lf::LatestEntry& latest,
    int64_t rev) {
  using Position = std::optional<std::pair<int64_t, uint32_t>>;
  if (latest.mod_revision <= rev) {
    if (latest.tombstone()) return Position();
    return Position(std::pair(latest.mod_revision, latest.sub));
  }
  // The key changed after `rev`: find its newest history entry <= rev.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  const std::string prefix = lf::HistoryKeyPrefix(key);
  it->SeekForPrev(lf::HistoryKey(key, rev));
  if (!it->Valid() || !it->key().starts_with(prefix)) {
    PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "seek history"));
    return Position();
  }
  std::string_view hkey;
  int64_t hrev = 0;
  if (!lf::ParseHistoryKey(it->key().ToStringView(), &hkey, &hrev)) {
    return Status::Corruption("history entry " + lf::Describe(it->key().ToStringView()) +
                              ": malformed key");
  }
  Result<lf::HistoryEntry> h = lf::DecodeHistory(it->key().ToStringView(),
                                                 it->value().ToStringView());
  if (!h.ok()) return h.status();
  if (h->tombstone()) return Position();
  return Position(std::pair(hrev, h->sub));
}

Result<KeyValue> RocksLog::ReadKv(const rocksdb::ReadOptions& ro, int64_t rev, uint32_t sub) {
  const std::string db_key = lf::RecordKey(rev, sub);
  std::string bytes;
  rocksdb::Status s = db_->Get(ro, db_key, &bytes);
  if (s.IsNotFound()) {
    return Status::Corruption("log record " + lf::Describe(db_key) +
                              " is missing (an index entry points at it)");
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(s, "read " + lf::Describe(db_key)));
  Result<DecodedRecord> r = DecodeRecord(db_key, bytes);
  if (!r.ok()) return r.status();
  if (r->change.type != ChangeType::kPut) {
    return Status::Corruption("log record " + lf::Describe(db_key) +
                              ": index says a put, record is a delete");
  }
  return std::move(r->change.kv);
}

Result<std::optional<KeyValue>> RocksLog::Get(std::string_view key, Revision at) {
  if (key.empty()) return Status::Invalid("key is empty");
  const int64_t head = current_rev_.load();
  ScopedSnapshot snap(db_.get(), !read_only_);
  Result<int64_t> rev = ReadRevision(at.value(), head);
  if (!rev.ok()) return rev.status();
  const std::string lkey = lf::LatestKey(key);
  std::string value;
  rocksdb::Status s = db_->Get(snap.read_options(), lkey, &value);
  if (s.IsNotFound()) return std::optional<KeyValue>();
  PODFLOW_RETURN_IF_ERROR(FromRocks(s, "read " + lf::Describe(lkey)));
  Result<lf::LatestEntry> latest = lf::DecodeLatest(lkey, value);
  if (!latest.ok()) return latest.status();
  auto pos = LocateAt(snap.read_options(), key, *latest, *rev);
  if (!pos.ok()) return pos.status();
  if (!pos->has_value()) return std::optional<KeyValue>();
  Result<KeyValue> kv = ReadKv(snap.read_options(), (*pos)->first, (*pos)->second);
  if (!kv.ok()) return kv.status();
  return std::optional(std::move(*kv));
}

Result<RangeResult> RocksLog::Range(const RangeRequest& request) {
  std::string start = request.key;
  std::string end;  // exclusive; "" = unbounded
  if (request.prefix) {
    end = PrefixEnd(request.key);
  } else if (!request.range_end.empty()) {
    end = request.range_end;
  } else {
    if (request.key.empty()) return Status::Invalid("key is empty");
    end = request.key + '\0';  // just the key
  }
  if (request.limit < 0) return Status::Invalid("negative limit");
  int64_t requested = request.revision.value();
  if (!request.continue_token.empty()) {
    PODFLOW_RETURN_IF_ERROR(DecodeContinue(request.continue_token, &requested, &start));
    if (start < request.key || (!end.empty() && start >= end)) {
      return Status::Invalid("continue token does not belong to this range");
    }
  }
  const int64_t head = current_rev_.load();
  ScopedSnapshot snap(db_.get(), !read_only_);
  const rocksdb::ReadOptions& ro = snap.read_options();
  Result<int64_t> rev = ReadRevision(requested, head);
  if (!rev.ok()) return rev.status();

  RangeResult result;
  result.revision = Revision(*rev);
  const std::string lstart = lf::LatestKey(start);
  const std::string lend = end.empty() ? std::string(1, lf::kLatestPrefix + 1) : lf::LatestKey(end);
  rocksdb::Slice upper(lend);
  rocksdb::ReadOptions scan_ro = ro;
  scan_ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan_ro));
  std::vector<std::string> record_keys;
  const size_t limit = request.limit > 0 ? static_cast<size_t>(request.limit) : SIZE_MAX;
  for (it->Seek(lstart); it->Valid(); it->Next()) {
    const std::string_view lkey = it->key().ToStringView();
    Result<lf::LatestEntry> latest = lf::DecodeLatest(lkey, it->value().ToStringView());
    if (!latest.ok()) return latest.status();
    auto pos = LocateAt(ro, lkey.substr(1), *latest, *rev);
    if (!pos.ok()) return pos.status();
    if (!pos->has_value()) continue;
    if (record_keys.size() == limit) {
      result.more = true;
      result.continue_token = EncodeContinue(*rev, lkey.substr(1));
      break;
    }
    record_keys.push_back(lf::RecordKey((*pos)->first, (*pos)->second));
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "scan latest entries"));

  std::vector<rocksdb::Slice> slices(record_keys.begin(), record_keys.end());
  std::vector<std::string> values;
  std::vector<rocksdb::Status> statuses = db_->MultiGet(ro, slices, &values);
  result.kvs.reserve(record_keys.size());
  for (size_t i = 0; i < record_keys.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      return Status::Corruption("log record " + lf::Describe(record_keys[i]) +
                                " is missing (an index entry points at it)");
    }
    PODFLOW_RETURN_IF_ERROR(FromRocks(statuses[i], "read " + lf::Describe(record_keys[i])));
    Result<DecodedRecord> r = DecodeRecord(record_keys[i], values[i]);
    if (!r.ok()) return r.status();
    result.kvs.push_back(std::move(r->change.kv));
  }
  return result;
}

Result<std::vector<RevisionChangesPtr>> RocksLog::ReadChanges(Revision from, size_t max) {
  if (from.value() <= 0) return Status::Invalid("ReadChanges from revision <= 0");
  const int64_t compact = compact_rev_.load();
  if (from.value() < compact) {
    return Status::Compacted("mvcc: required revision has been compacted (watch from " +
                             std::to_string(from.value()) + " < compact revision " +
                             std::to_string(compact) + ")");
  }
  std::vector<RevisionChangesPtr> out;
  // A read-only instance has no ring: everything comes from storage.
  if (!read_only_ && ring_.Read(from, max, &out)) return out;
  return ReadChangesFromDisk(from, max);
}

Result<std::vector<RevisionChangesPtr>> RocksLog::ReadChangesFromDisk(Revision from, size_t max) {
  const int64_t head = current_rev_.load();
  ScopedSnapshot snap(db_.get(), !read_only_);
  const int64_t compact = compact_rev_.load();
  if (from.value() < compact) {
    return Status::Compacted("mvcc: required revision has been compacted (watch from " +
                             std::to_string(from.value()) + " < compact revision " +
                             std::to_string(compact) + ")");
  }
  std::vector<RevisionChangesPtr> out;
  std::shared_ptr<RevisionChanges> current;
  size_t bytes = 0;
  const std::string upper_key(1, lf::kRecordPrefix + 1);
  rocksdb::Slice upper(upper_key);
  rocksdb::ReadOptions ro = snap.read_options();
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(lf::RecordKey(from.value(), 0)); it->Valid(); it->Next()) {
    const std::string_view db_key = it->key().ToStringView();
    int64_t rev = 0;
    uint32_t sub = 0;
    if (!lf::ParseRecordKey(db_key, &rev, &sub)) {
      return Status::Corruption("malformed record key " + lf::Describe(db_key));
    }
    if (rev > head) break;
    if (!current || current->revision.value() != rev) {
      const int64_t want = current ? current->revision.value() + 1 : from.value();
      if (rev != want) {
        return Status::Corruption("log records of revision " + std::to_string(want) +
                                  " are missing");
      }
      if (current) out.push_back(std::move(current));
      if (out.size() >= max || bytes >= kDiskReadBudgetBytes) break;
      current = std::make_shared<RevisionChanges>();
      current->revision = Revision(rev);
    }
    Result<DecodedRecord> r = DecodeRecord(db_key, it->value().ToStringView());
    if (!r.ok()) return r.status();
    if (current->changes.empty()) {  // every record of a revision carries the same
      current->writer = std::move(r->writer);
      current->committed_at_ms = r->committed_at_ms;
    }
    bytes += db_key.size() + it->value().size();
    current->changes.push_back(std::move(r->change));
  }
  PODFLOW_RETURN_IF_ERROR(FromRocks(it->status(), "scan records"));
  if (current && out.size() < max) out.push_back(std::move(current));
  return out;
}

}  // namespace podflow::log_internal

namespace podflow {

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<uint8_t>(prefix.back()) != 0xff) {
      prefix.back() = static_cast<char>(static_cast<uint8_t>(prefix.back()) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

}  // namespace podflow
