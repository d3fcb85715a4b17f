// Transactions: revision arithmetic, versions, guards, all-or-nothing,
// invalid input.
#include <thread>

#include "log_fixture.h"

namespace podflow {
namespace {

using testing::MustCommit;
using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

TEST_CASE("an empty log is at revision 1 and each changing txn adds exactly 1") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  CHECK(log->CurrentRevision() == Revision(1));
  CHECK(log->CompactRevision() == Revision(0));

  CHECK(MustPut(*log, "a", "1") == Revision(2));
  // One txn, three ops: one revision.
  CHECK(MustCommit(*log, {PutOp{"b", "1"}, PutOp{"c", "1"}, DeleteOp{"a"}}) == Revision(3));
  CHECK(log->CurrentRevision() == Revision(3));

  SECTION("deleting a missing key changes nothing") {
    auto r = log->Delete("missing");
    REQUIRE(r.ok());
    CHECK(r->succeeded);
    CHECK(r->deleted == 0);
    CHECK(r->revision == Revision(3));
    CHECK(log->CurrentRevision() == Revision(3));
  }
  SECTION("an empty txn changes nothing") {
    auto r = log->Txn({});
    REQUIRE(r.ok());
    CHECK(r->succeeded);
    CHECK(log->CurrentRevision() == Revision(3));
  }
  SECTION("a failed guard changes nothing") {
    auto r = log->Put("b", "2", Revision(99));
    REQUIRE(r.ok());
    CHECK_FALSE(r->succeeded);
    CHECK(r->revision == Revision(3));
    CHECK(log->CurrentRevision() == Revision(3));
  }
}

TEST_CASE("versions count puts within a generation; a delete ends it") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "k", "v1");  // rev 2
  MustPut(*log, "k", "v2");  // rev 3
  auto kv = log->Get("k");
  REQUIRE(kv.ok());
  REQUIRE(kv->has_value());
  CHECK((*kv)->value == "v2");
  CHECK((*kv)->create_revision == Revision(2));
  CHECK((*kv)->mod_revision == Revision(3));
  CHECK((*kv)->version == 2);

  auto del = log->Delete("k");  // rev 4
  REQUIRE(del.ok());
  CHECK(del->deleted == 1);
  CHECK(del->revision == Revision(4));
  CHECK_FALSE(log->Get("k")->has_value());

  MustPut(*log, "k", "v3");  // rev 5: a new generation
  kv = log->Get("k");
  REQUIRE(kv->has_value());
  CHECK((*kv)->create_revision == Revision(5));
  CHECK((*kv)->mod_revision == Revision(5));
  CHECK((*kv)->version == 1);
}

TEST_CASE("guards compare the key's mod_revision; 0 means must not exist") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));

  auto created = log->Put("pod", "a", Revision(0));
  REQUIRE(created.ok());
  CHECK(created->succeeded);
  const Revision rev = created->revision;

  SECTION("create over an existing key fails and returns the current value") {
    auto again = log->Put("pod", "b", Revision(0));
    REQUIRE(again.ok());
    CHECK_FALSE(again->succeeded);
    CHECK(again->failed_op == 0);
    REQUIRE(again->current.has_value());
    CHECK(again->current->value == "a");
    CHECK(again->current->mod_revision == rev);
  }
  SECTION("compare-and-swap on the right revision succeeds, on a stale one fails") {
    auto cas = log->Put("pod", "b", rev);
    REQUIRE(cas.ok());
    CHECK(cas->succeeded);
    auto stale = log->Put("pod", "c", rev);
    REQUIRE(stale.ok());
    CHECK_FALSE(stale->succeeded);
    REQUIRE(stale->current.has_value());
    CHECK(stale->current->value == "b");
    CHECK(stale->current->mod_revision == cas->revision);
  }
  SECTION("a guard on a missing key reports nullopt as current") {
    auto r = log->Delete("nope", Revision(5));
    REQUIRE(r.ok());
    CHECK_FALSE(r->succeeded);
    CHECK_FALSE(r->current.has_value());
  }
  SECTION("one failing guard applies none of the ops and names the op") {
    auto r = log->Txn({PutOp{"x", "1"}, PutOp{"y", "1"}, PutOp{"pod", "z", Revision(0)}});
    REQUIRE(r.ok());
    CHECK_FALSE(r->succeeded);
    CHECK(r->failed_op == 2);
    CHECK_FALSE(log->Get("x")->has_value());
    CHECK_FALSE(log->Get("y")->has_value());
    CHECK((*log->Get("pod"))->value == "a");
  }
  SECTION("guarded delete") {
    CHECK_FALSE(log->Delete("pod", Revision(rev.value() + 100))->succeeded);
    CHECK(log->Delete("pod", rev)->succeeded);
    CHECK_FALSE(log->Get("pod")->has_value());
  }
}

TEST_CASE("concurrent txns in one group see each other in order") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> wins{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto r = log->Put("leader", std::to_string(t), Revision(0));
      if (r.ok() && r->succeeded) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wins.load() == 1);
  CHECK(log->CurrentRevision() == Revision(2));
}

TEST_CASE("invalid txns are rejected and write nothing") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "a", "1");
  const Revision before = log->CurrentRevision();

  auto expect_invalid = [&](std::vector<TxnOp> ops, const std::string& fragment) {
    auto r = log->Txn(std::move(ops));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalid);
    CHECK_THAT(r.status().message(), Catch::Contains(fragment));
  };
  expect_invalid({PutOp{"", "v"}}, "key is empty");
  expect_invalid({PutOp{std::string("a\0b", 3), "v"}}, "NUL");
  expect_invalid({PutOp{"x", "1"}, DeleteOp{"x"}}, "duplicate key given in txn request");
  expect_invalid({PutOp{"x", "v", std::nullopt, -1}}, "ttl_seconds");
  // 1.5 MiB is etcd's default max request size: key + value one byte over.
  expect_invalid({PutOp{"big", std::string(1572864 - 3 + 1, 'x')}}, "over the limit of 1572864");
  expect_invalid({PutOp{"b1", std::string(800000, 'x')}, PutOp{"b2", std::string(800000, 'x')}},
                 "over the limit");
  CHECK(log->CurrentRevision() == before);
  CHECK_FALSE(log->Get("x")->has_value());
  CHECK_FALSE(log->Get("big")->has_value());

  // Exactly at the limit is fine.
  CHECK(log->Put("big", std::string(1572864 - 3, 'x'))->succeeded);
}

TEST_CASE("state survives reopening") {
  TempDir dir;
  {
    auto log = MustOpen(TestOptions(dir.path()));
    MustPut(*log, "a", "1");
    MustPut(*log, "a", "2");
    MustPut(*log, "b", "1");
    REQUIRE(log->Delete("b")->succeeded);
    REQUIRE(log->Compact(Revision(3)).ok());
  }
  auto log = MustOpen(TestOptions(dir.path()));
  CHECK(log->CurrentRevision() == Revision(5));
  CHECK(log->CompactRevision() == Revision(3));
  auto a = log->Get("a");
  REQUIRE(a->has_value());
  CHECK((*a)->version == 2);
  // The index was rebuilt: guards work without reading anything first.
  CHECK(log->Put("a", "3", Revision(3))->succeeded);
  CHECK(log->Put("b", "x", Revision(0))->succeeded);
  CHECK(log->CurrentRevision() == Revision(7));
}

}  // namespace
}  // namespace podflow
