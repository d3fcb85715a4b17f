// MVCC reads: Get and Range at old revisions, paging, the future/compacted
// boundaries.
#include "log_fixture.h"

namespace podflow {
namespace {

using testing::MustCommit;
using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

std::vector<std::string> Keys(const RangeResult& r) {
  std::vector<std::string> out;
  for (const auto& kv : r.kvs) out.push_back(kv.key);
  return out;
}

TEST_CASE("Get and Range at old revisions see the state of that revision") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "/pods/a", "a1");                                  // 2
  MustPut(*log, "/pods/b", "b1");                                  // 3
  MustPut(*log, "/pods/a", "a2");                                  // 4
  REQUIRE(log->Delete("/pods/b")->succeeded);                      // 5
  MustCommit(*log, {PutOp{"/pods/c", "c1"}, PutOp{"/nodes/n", "n"}});  // 6

  CHECK_FALSE(log->Get("/pods/a", Revision(1))->has_value());
  CHECK((*log->Get("/pods/a", Revision(2)))->value == "a1");
  CHECK((*log->Get("/pods/a", Revision(3)))->value == "a1");
  CHECK((*log->Get("/pods/a", Revision(4)))->value == "a2");
  CHECK((*log->Get("/pods/b", Revision(4)))->value == "b1");
  CHECK_FALSE(log->Get("/pods/b", Revision(5))->has_value());
  CHECK_FALSE(log->Get("/pods/b")->has_value());

  auto at3 = log->Range(RangeRequest::Prefix("/pods/", Revision(3)));
  REQUIRE(at3.ok());
  CHECK(at3->revision == Revision(3));
  CHECK(Keys(*at3) == std::vector<std::string>{"/pods/a", "/pods/b"});
  CHECK(at3->kvs[0].value == "a1");

  auto head = log->Range(RangeRequest::Prefix("/pods/"));
  REQUIRE(head.ok());
  CHECK(head->revision == Revision(6));
  CHECK(Keys(*head) == std::vector<std::string>{"/pods/a", "/pods/c"});
  CHECK_FALSE(head->more);

  RangeRequest span;
  span.key = "/pods/b";
  span.range_end = "/pods/d";
  span.revision = Revision(4);
  CHECK(Keys(*log->Range(span)) == std::vector<std::string>{"/pods/b"});

  auto all = log->Range(RangeRequest::Prefix(""));
  CHECK(Keys(*all) == std::vector<std::string>{"/nodes/n", "/pods/a", "/pods/c"});

  // One key, at an old, a future and a compacted revision.
  RangeRequest one;
  one.key = "/pods/a";
  CHECK(Keys(*log->Range(one)) == std::vector<std::string>{"/pods/a"});
  one.revision = Revision(3);
  auto at3_one = log->Range(one);
  REQUIRE(at3_one->kvs.size() == 1);
  CHECK(at3_one->kvs[0].value == "a1");
  CHECK(at3_one->revision == Revision(3));
  one.revision = Revision(7);
  CHECK(log->Range(one).status().code() == Code::kFutureRevision);
  REQUIRE(log->Compact(Revision(4)).ok());
  one.revision = Revision(3);
  CHECK(log->Range(one).status().code() == Code::kCompacted);
  one.revision = Revision(4);
  auto at4_one = log->Range(one);
  REQUIRE(at4_one->kvs.size() == 1);
  CHECK(at4_one->kvs[0].value == "a2");
}

TEST_CASE("paging with limit and continue pins the first page's revision") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  for (int i = 0; i < 10; ++i) MustPut(*log, "/k/" + std::to_string(i), "v");  // revs 2..11
  RangeRequest req = RangeRequest::Prefix("/k/");
  req.limit = 4;
  auto page1 = log->Range(req);
  REQUIRE(page1.ok());
  CHECK(page1->kvs.size() == 4);
  CHECK(page1->more);
  REQUIRE_FALSE(page1->continue_token.empty());
  const Revision pinned = page1->revision;

  // Writes after the first page are not seen by later pages.
  MustPut(*log, "/k/5", "changed");
  MustPut(*log, "/k/55", "new");

  std::vector<std::string> keys = Keys(*page1);
  std::string token = page1->continue_token;
  while (!token.empty()) {
    RangeRequest next = RangeRequest::Prefix("/k/");
    next.limit = 4;
    next.continue_token = token;
    auto page = log->Range(next);
    REQUIRE(page.ok());
    CHECK(page->revision == pinned);
    for (const auto& kv : page->kvs) {
      keys.push_back(kv.key);
      CHECK(kv.value == "v");
    }
    token = page->more ? page->continue_token : "";
  }
  CHECK(keys.size() == 10);
  CHECK(std::is_sorted(keys.begin(), keys.end()));

  SECTION("continuing after the pinned revision is compacted gives Compacted") {
    REQUIRE(log->Compact(Revision(pinned.value() + 1)).ok());
    RangeRequest next = RangeRequest::Prefix("/k/");
    next.continue_token = page1->continue_token;
    auto r = log->Range(next);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kCompacted);
  }
  SECTION("a token from another range or garbage is Invalid") {
    RangeRequest other = RangeRequest::Prefix("/z/");
    other.continue_token = page1->continue_token;
    CHECK(log->Range(other).status().code() == Code::kInvalid);
    other.continue_token = "garbage";
    CHECK(log->Range(other).status().code() == Code::kInvalid);
  }
}

TEST_CASE("future and compacted revisions fail exactly where etcd fails") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  for (int i = 0; i < 5; ++i) MustPut(*log, "k", std::to_string(i));  // revs 2..6

  auto future = log->Get("k", Revision(7));
  REQUIRE_FALSE(future.ok());
  CHECK(future.status().code() == Code::kFutureRevision);
  CHECK_THAT(future.status().message(),
             Catch::Contains("mvcc: required revision is a future revision"));
  CHECK(log->Get("k", Revision(6)).ok());  // the head itself is fine

  REQUIRE(log->Compact(Revision(4)).ok());
  auto compacted = log->Get("k", Revision(3));
  REQUIRE_FALSE(compacted.ok());
  CHECK(compacted.status().code() == Code::kCompacted);
  CHECK_THAT(compacted.status().message(),
             Catch::Contains("mvcc: required revision has been compacted"));
  // Exactly at the compact revision is allowed.
  auto at = log->Get("k", Revision(4));
  REQUIRE(at.ok());
  CHECK((*at)->value == "2");
  CHECK(log->Range(RangeRequest::Prefix("k", Revision(3))).status().code() == Code::kCompacted);
  CHECK(log->Range(RangeRequest::Prefix("k", Revision(4))).ok());
  CHECK(log->Range(RangeRequest::Prefix("k", Revision(9))).status().code() ==
        Code::kFutureRevision);
}

}  // namespace
}  // namespace podflow
