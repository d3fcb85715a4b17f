// Bad data on disk: a corrupt record is reported as Corruption naming where
// it is, the rest stays readable, and nothing is changed.
#include <rocksdb/db.h>

#include "log/log_format.h"
#include "log_fixture.h"

namespace podflow {
namespace {

using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

void RawPut(const std::string& dir, const std::string& key, const std::string& value) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  REQUIRE(rocksdb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
}

std::string RawGet(const std::string& dir, const std::string& key) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  REQUIRE(rocksdb::DB::OpenForReadOnly(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
  return value;
}

TEST_CASE("a corrupt record gives Corruption naming it; other data stays readable") {
  TempDir dir;
  {
    auto log = MustOpen(TestOptions(dir.path()));
    MustPut(*log, "a", "a1");  // 2
    MustPut(*log, "b", "b1");  // 3
    MustPut(*log, "c", "c1");  // 4
  }
  const std::string garbage = "this is not a flatbuffer";
  RawPut(dir.path(), log_format::RecordKey(3, 0), garbage);

  {
    auto log = MustOpen(TestOptions(dir.path()));
    CHECK(log->CurrentRevision() == Revision(4));
    auto b = log->Get("b");
    REQUIRE_FALSE(b.ok());
    CHECK(b.status().code() == Code::kCorruption);
    CHECK_THAT(b.status().message(), Catch::Contains("r/rev=3/sub=0"));
    CHECK_THAT(b.status().message(), Catch::Contains("verification"));

    CHECK((*log->Get("a"))->value == "a1");
    CHECK((*log->Get("c"))->value == "c1");
    CHECK(log->Range(RangeRequest::Prefix("")).status().code() == Code::kCorruption);
    // The feed reports it too instead of skipping the revision.
    auto changes = log->ReadChanges(Revision(2), 10);
    CHECK(changes.status().code() == Code::kCorruption);
    auto after = log->ReadChanges(Revision(4), 10);
    REQUIRE(after.ok());
    CHECK(after->size() == 1);
  }
  // Nothing was rewritten or dropped.
  CHECK(RawGet(dir.path(), log_format::RecordKey(3, 0)) == garbage);
}

TEST_CASE("corrupt meta data fails the open with Corruption") {
  TempDir dir;
  { auto log = MustOpen(TestOptions(dir.path())); MustPut(*log, "a", "1"); }
  RawPut(dir.path(), std::string(log_format::kMetaRevision), "xx");
  auto log = OpenLog(TestOptions(dir.path()));
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().code() == Code::kCorruption);
  CHECK_THAT(log.status().message(), Catch::Contains("m/revision"));
}

TEST_CASE("a log whose meta revision is behind its records fails the open") {
  TempDir dir;
  { auto log = MustOpen(TestOptions(dir.path())); MustPut(*log, "a", "1"); }
  RawPut(dir.path(), std::string(log_format::kMetaRevision), log_format::EncodeI64(1));
  auto log = OpenLog(TestOptions(dir.path()));
  REQUIRE_FALSE(log.ok());
  CHECK(log.status().code() == Code::kCorruption);
}

}  // namespace
}  // namespace podflow
