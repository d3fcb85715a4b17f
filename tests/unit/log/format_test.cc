// The on-disk encodings of log_format.h round-trip and reject garbage.
#include "log/log_format.h"

#include <catch2/catch.hpp>

namespace podflow {
namespace {

namespace lf = log_format;

TEST_CASE("record keys sort by revision then sub") {
  CHECK(lf::RecordKey(2, 0) < lf::RecordKey(2, 1));
  CHECK(lf::RecordKey(2, 0xffffffff) < lf::RecordKey(3, 0));
  CHECK(lf::RecordKey(255, 0) < lf::RecordKey(256, 0));
  int64_t rev = 0;
  uint32_t sub = 0;
  REQUIRE(lf::ParseRecordKey(lf::RecordKey(123456789, 7), &rev, &sub));
  CHECK(rev == 123456789);
  CHECK(sub == 7);
  CHECK_FALSE(lf::ParseRecordKey("r123", &rev, &sub));
  CHECK(lf::Describe(lf::RecordKey(12, 3)) == "r/rev=12/sub=3");
}

TEST_CASE("history keys group by key and sort by revision") {
  CHECK(lf::HistoryKey("a", 9) < lf::HistoryKey("a", 10));
  // "a"'s entries all sort before "a/b"'s: the 0x00 separator.
  CHECK(lf::HistoryKey("a", 0x7fffffffffffffff) < lf::HistoryKey("a/b", 1));
  std::string_view key;
  int64_t rev = 0;
  const std::string k = lf::HistoryKey("/pods/x", 42);
  REQUIRE(lf::ParseHistoryKey(k, &key, &rev));
  CHECK(key == "/pods/x");
  CHECK(rev == 42);
}

TEST_CASE("latest entries round-trip and reject bad sizes and flags") {
  lf::LatestEntry e{10, 2, 4, 3, 1234, 0};
  auto back = lf::DecodeLatest("lk", lf::EncodeLatest(e));
  REQUIRE(back.ok());
  CHECK(back->mod_revision == 10);
  CHECK(back->sub == 2);
  CHECK(back->create_revision == 4);
  CHECK(back->version == 3);
  CHECK(back->expires_at_ms == 1234);
  CHECK_FALSE(back->tombstone());
  CHECK(lf::DecodeLatest("lk", "short").status().code() == Code::kCorruption);
  std::string bad = lf::EncodeLatest(e);
  bad.back() = 0x40;
  auto r = lf::DecodeLatest("lk", bad);
  CHECK(r.status().code() == Code::kCorruption);
  CHECK_THAT(r.status().message(), Catch::Contains("l/k"));
}

}  // namespace
}  // namespace podflow
