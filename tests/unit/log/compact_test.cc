// Compaction: keeps each key's newest version <= R unless it is a delete,
// leaves everything after R alone, persists the compact revision.
#include <rocksdb/db.h>

#include "log/log_format.h"
#include "log_fixture.h"

namespace podflow {
namespace {

using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

// Counts the RocksDB keys with `prefix` (history entries, records, ...).
size_t CountKeys(const std::string& dir, char prefix) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  REQUIRE(rocksdb::DB::OpenForReadOnly(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  size_t n = 0;
  for (it->Seek(std::string(1, prefix)); it->Valid() && it->key()[0] == prefix; it->Next()) ++n;
  return n;
}

// a: 2, 3, 7; b: 4, deleted 5; c: 6, deleted 8.
void WriteHistory(EventLog& log) {
  MustPut(log, "a", "a1");                 // 2
  MustPut(log, "a", "a2");                 // 3
  MustPut(log, "b", "b1");                 // 4
  REQUIRE(log.Delete("b")->succeeded);     // 5
  MustPut(log, "c", "c1");                 // 6
  MustPut(log, "a", "a3");                 // 7
  REQUIRE(log.Delete("c")->succeeded);     // 8
}

TEST_CASE("compact refuses future and already compacted revisions") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  WriteHistory(*log);
  CHECK(log->Compact(Revision(9)).code() == Code::kFutureRevision);
  REQUIRE(log->Compact(Revision(6)).ok());
  CHECK(log->Compact(Revision(6)).code() == Code::kCompacted);
  CHECK(log->Compact(Revision(5)).code() == Code::kCompacted);
  CHECK(log->Compact(Revision(8)).ok());  // compacting at the head is allowed
}

TEST_CASE("compaction keeps the newest version <= R and drops deleted keys") {
  TempDir dir;
  {
    auto log = MustOpen(TestOptions(dir.path()));
    WriteHistory(*log);
    REQUIRE(log->Compact(Revision(6)).ok());
    CHECK(log->CompactRevision() == Revision(6));
    // At 6: a = a2 (newest <= 6), b gone, c = c1.
    auto at6 = log->Range(RangeRequest::Prefix("", Revision(6)));
    REQUIRE(at6.ok());
    REQUIRE(at6->kvs.size() == 2);
    CHECK(at6->kvs[0].value == "a2");
    CHECK(at6->kvs[0].version == 2);
    CHECK(at6->kvs[1].value == "c1");
    // After 6: untouched.
    CHECK((*log->Get("a", Revision(7)))->value == "a3");
    CHECK_FALSE(log->Get("c", Revision(8))->has_value());
    CHECK((*log->Get("a"))->create_revision == Revision(2));
    CHECK((*log->Get("a"))->version == 3);
  }
  // Physically: a@3 (kept), a@7, c@6, c@8 remain; a@2 and all of b are gone.
  CHECK(CountKeys(dir.path(), log_format::kHistoryPrefix) == 4);
  CHECK(CountKeys(dir.path(), log_format::kRecordPrefix) == 4);
  // 'l' entries: a (live), c (tombstone at 8 > 6 stays); b's tombstone went.
  CHECK(CountKeys(dir.path(), log_format::kLatestPrefix) == 2);

  // The compact revision is persisted.
  auto log = MustOpen(TestOptions(dir.path()));
  CHECK(log->CompactRevision() == Revision(6));
  CHECK(log->Get("a", Revision(5)).status().code() == Code::kCompacted);
  CHECK((*log->Get("a", Revision(6)))->value == "a2");
}

TEST_CASE("a key deleted and recreated keeps only its new generation") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "k", "old");              // 2
  REQUIRE(log->Delete("k")->succeeded);   // 3
  MustPut(*log, "k", "new");              // 4
  REQUIRE(log->Compact(Revision(3)).ok());
  CHECK_FALSE(log->Get("k", Revision(3))->has_value());
  CHECK((*log->Get("k", Revision(4)))->value == "new");
  REQUIRE(log->Compact(Revision(4)).ok());
  CHECK((*log->Get("k"))->value == "new");
  CHECK((*log->Get("k"))->create_revision == Revision(4));
}

}  // namespace
}  // namespace podflow
