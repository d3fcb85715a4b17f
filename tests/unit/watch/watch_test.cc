// Watches: start revision, ranges, prev_kv, batching, filters, progress,
// compaction, close, TTL deletes, catch-up from storage.
#include <thread>

#include "log_fixture.h"
#include "watch/watch.h"

namespace podflow {
namespace {

using testing::FakeWallClock;
using testing::MustCommit;
using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;
using Kind = WatchBatch::Kind;
using std::chrono::milliseconds;

std::unique_ptr<Watcher> MustWatch(EventLog& log, WatchOptions options) {
  auto w = Watcher::Open(&log, std::move(options));
  REQUIRE(w.ok());
  return std::move(*w);
}

WatchOptions PrefixFrom(const std::string& prefix, int64_t start) {
  WatchOptions o;
  o.key = prefix;
  o.prefix = true;
  o.start_revision = Revision(start);
  return o;
}

WatchBatch MustEvents(Watcher& w) {
  WatchBatch b = w.Next(milliseconds(2000));
  INFO("kind " << static_cast<int>(b.kind) << " " << b.status.ToString());
  REQUIRE(b.kind == Kind::kEvents);
  REQUIRE_FALSE(b.events.empty());
  return b;
}

TEST_CASE("a watch delivers from its start revision inclusive, one revision per batch") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "/a", "1");  // 2
  MustPut(*log, "/a", "2");  // 3
  MustPut(*log, "/b", "1");  // 4
  auto w = MustWatch(*log, PrefixFrom("/", 3));
  WatchBatch b3 = MustEvents(*w);
  CHECK(b3.revision == Revision(3));
  REQUIRE(b3.events.size() == 1);
  CHECK(b3.events[0].kv.value == "2");
  CHECK(b3.events[0].kv.version == 2);
  CHECK_FALSE(b3.events[0].created);
  WatchBatch b4 = MustEvents(*w);
  CHECK(b4.revision == Revision(4));
  CHECK(b4.events[0].created);
  WatchBatch none = w->Next(milliseconds(10));
  CHECK(none.kind == Kind::kTimedOut);
  CHECK(none.revision == Revision(4));

  // A write from another thread wakes a waiting Next.
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    MustPut(*log, "/c", "1");
  });
  WatchBatch b5 = MustEvents(*w);
  writer.join();
  CHECK(b5.revision == Revision(5));
}

TEST_CASE("start revision 0 means from the next revision") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "/a", "old");
  auto w = MustWatch(*log, PrefixFrom("/", 0));
  CHECK(w->next_revision() == Revision(3));
  MustPut(*log, "/a", "new");
  WatchBatch b = MustEvents(*w);
  CHECK(b.events[0].kv.value == "new");
}

TEST_CASE("a watch sees only its key or prefix; one txn is one batch in op order") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  auto pods = MustWatch(*log, PrefixFrom("/pods/", 2));
  WatchOptions one;
  one.key = "/pods/b";
  one.start_revision = Revision(2);
  auto single = MustWatch(*log, one);

  MustCommit(*log, {PutOp{"/pods/c", "c"}, PutOp{"/nodes/n", "n"}, PutOp{"/pods/a", "a"},
                    PutOp{"/pods/b", "b"}});
  MustPut(*log, "/nodes/m", "m");
  MustPut(*log, "/pods/b", "b2");

  WatchBatch b = MustEvents(*pods);
  CHECK(b.revision == Revision(2));
  REQUIRE(b.events.size() == 3);
  CHECK(b.events[0].kv.key == "/pods/c");
  CHECK(b.events[1].kv.key == "/pods/a");
  CHECK(b.events[2].kv.key == "/pods/b");
  CHECK(MustEvents(*pods).revision == Revision(4));  // revision 3 had nothing for it

  CHECK(MustEvents(*single).events.size() == 1);
  WatchBatch s2 = MustEvents(*single);
  CHECK(s2.events[0].kv.value == "b2");
}

TEST_CASE("prev_kv attaches the previous value") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  WatchOptions o = PrefixFrom("k", 2);
  o.prev_kv = true;
  auto w = MustWatch(*log, o);
  MustPut(*log, "k", "v1");
  MustPut(*log, "k", "v2");
  REQUIRE(log->Delete("k")->succeeded);

  WatchBatch b1 = MustEvents(*w);
  CHECK_FALSE(b1.events[0].prev_kv.has_value());
  WatchBatch b2 = MustEvents(*w);
  REQUIRE(b2.events[0].prev_kv.has_value());
  CHECK(b2.events[0].prev_kv->value == "v1");
  CHECK(b2.events[0].prev_kv->mod_revision == Revision(2));
  WatchBatch b3 = MustEvents(*w);
  CHECK(b3.events[0].type == ChangeType::kDelete);
  CHECK(b3.events[0].kv.mod_revision == Revision(4));
  REQUIRE(b3.events[0].prev_kv.has_value());
  CHECK(b3.events[0].prev_kv->value == "v2");
}

TEST_CASE("a filter turns transitions into ADDED / DELETED like a field selector") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  WatchOptions o = PrefixFrom("/pods/", 2);
  o.filter = [](const KeyValue& kv) { return kv.value.rfind("node=n1", 0) == 0; };
  auto w = MustWatch(*log, o);

  MustPut(*log, "/pods/p", "node=");         // 2: neither matches -> skipped
  MustPut(*log, "/pods/p", "node=n1");       // 3: enters -> PUT created
  MustPut(*log, "/pods/p", "node=n1 ready"); // 4: both match -> PUT
  MustPut(*log, "/pods/p", "node=n2");       // 5: leaves -> DELETE with old value
  REQUIRE(log->Delete("/pods/p")->succeeded);  // 6: old did not match -> skipped
  MustPut(*log, "/pods/q", "node=n1");       // 7: created matching -> PUT created
  REQUIRE(log->Delete("/pods/q")->succeeded);  // 8: DELETE with old value

  WatchBatch b = MustEvents(*w);
  CHECK(b.revision == Revision(3));
  CHECK(b.events[0].type == ChangeType::kPut);
  CHECK(b.events[0].created);
  b = MustEvents(*w);
  CHECK(b.revision == Revision(4));
  CHECK(b.events[0].type == ChangeType::kPut);
  CHECK_FALSE(b.events[0].created);
  b = MustEvents(*w);
  CHECK(b.revision == Revision(5));
  CHECK(b.events[0].type == ChangeType::kDelete);
  CHECK(b.events[0].left_filter);
  CHECK(b.events[0].kv.value == "node=n1 ready");
  CHECK(b.events[0].kv.mod_revision == Revision(5));
  b = MustEvents(*w);
  CHECK(b.revision == Revision(7));
  CHECK(b.events[0].created);
  b = MustEvents(*w);
  CHECK(b.revision == Revision(8));
  CHECK(b.events[0].type == ChangeType::kDelete);
  CHECK_FALSE(b.events[0].left_filter);
  CHECK(b.events[0].kv.value == "node=n1");
}

TEST_CASE("an idle watcher gets progress notifications with the current revision") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustPut(*log, "/other", "x");
  WatchOptions o = PrefixFrom("/pods/", 0);
  o.progress_interval = milliseconds(20);
  auto w = MustWatch(*log, o);
  WatchBatch p = w->Next(milliseconds(2000));
  CHECK(p.kind == Kind::kProgress);
  CHECK(p.events.empty());
  CHECK(p.revision == Revision(2));
  // Writes it does not watch advance the progress revision.
  MustPut(*log, "/other", "y");
  p = w->Next(milliseconds(2000));
  CHECK(p.kind == Kind::kProgress);
  CHECK(p.revision == Revision(3));
  // Without an interval: a timeout, not progress.
  auto quiet = MustWatch(*log, PrefixFrom("/pods/", 0));
  CHECK(quiet->Next(milliseconds(30)).kind == Kind::kTimedOut);
}

TEST_CASE("a watch starting below the compact revision is told so") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  for (int i = 0; i < 6; ++i) MustPut(*log, "k", std::to_string(i));  // 2..7
  REQUIRE(log->Compact(Revision(5)).ok());

  for (int64_t start : {2, 4}) {
    auto w = MustWatch(*log, PrefixFrom("k", start));
    WatchBatch b = w->Next(milliseconds(100));
    CHECK(b.kind == Kind::kCompacted);
    CHECK(b.revision == Revision(5));
    CHECK(w->Next(milliseconds(0)).kind == Kind::kCompacted);  // final
  }
  // At the compact revision itself: served, as in etcd.
  auto at = MustWatch(*log, PrefixFrom("k", 5));
  WatchBatch b5 = MustEvents(*at);
  CHECK(b5.revision == Revision(5));
  CHECK(b5.events[0].kv.value == "3");

  WatchOptions o = PrefixFrom("k", 6);
  o.prev_kv = true;
  auto ok = MustWatch(*log, o);
  WatchBatch b = MustEvents(*ok);
  CHECK(b.revision == Revision(6));
  REQUIRE(b.events[0].prev_kv.has_value());  // at the compact revision: readable
  CHECK(b.events[0].prev_kv->value == "3");

  SECTION("a lagging watcher overtaken by compaction is told so") {
    auto lag = MustWatch(*log, PrefixFrom("k", 6));
    REQUIRE(log->Compact(Revision(7)).ok());
    CHECK(lag->Next(milliseconds(100)).kind == Kind::kCompacted);
  }
}

// etcd #18089 / #18274: a delete AT the compact revision must survive
// compaction, or a watch from that revision (served from storage) silently
// misses the DELETE.
TEST_CASE("a watch from the compact revision sees a delete made at it, from storage") {
  TempDir dir;
  {
    auto log = MustOpen(TestOptions(dir.path()));
    MustPut(*log, "/k/a", "1");                     // 2
    MustPut(*log, "/k/a", "2");                     // 3
    REQUIRE(log->Delete("/k/a")->succeeded);        // 4
    MustPut(*log, "/k/b", "1");                     // 5
    REQUIRE(log->Compact(Revision(4)).ok());
  }
  auto log = MustOpen(TestOptions(dir.path()));  // empty ring: storage only
  CHECK_FALSE(log->Get("/k/a", Revision(4))->has_value());
  auto w = MustWatch(*log, PrefixFrom("/k/", 4));
  WatchBatch b = MustEvents(*w);
  CHECK(b.revision == Revision(4));
  REQUIRE(b.events.size() == 1);
  CHECK(b.events[0].type == ChangeType::kDelete);
  CHECK(b.events[0].kv.key == "/k/a");
  CHECK(MustEvents(*w).revision == Revision(5));
  // The next compaction past it drops the tombstone.
  REQUIRE(log->Compact(Revision(5)).ok());
  CHECK_FALSE(log->Get("/k/a", Revision(5))->has_value());
  CHECK(log->Range(RangeRequest::Prefix("/k/", Revision(5)))->kvs.size() == 1);
}

TEST_CASE("Close wakes a waiting Next") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  auto w = MustWatch(*log, PrefixFrom("/", 0));
  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    w->Close();
  });
  const auto start = std::chrono::steady_clock::now();
  WatchBatch b = w->Next(milliseconds(5000));
  closer.join();
  CHECK(b.kind == Kind::kClosed);
  CHECK(std::chrono::steady_clock::now() - start < milliseconds(4000));
}

TEST_CASE("a TTL expiry reaches watchers as a DELETE") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  auto log = MustOpen(options);
  WatchOptions o = PrefixFrom("/events/", 0);
  o.prev_kv = true;
  auto w = MustWatch(*log, o);
  REQUIRE(log->Put("/events/e", "Pulled", std::nullopt, 3600)->succeeded);
  CHECK(MustEvents(*w).events[0].type == ChangeType::kPut);
  clock.now_ms += 3600 * 1000;
  WatchBatch b = MustEvents(*w);
  CHECK(b.events[0].type == ChangeType::kDelete);
  CHECK(b.events[0].kv.key == "/events/e");
  REQUIRE(b.events[0].prev_kv.has_value());
  CHECK(b.events[0].prev_kv->value == "Pulled");
}

TEST_CASE("a watcher behind the ring catches up from storage, then follows live") {
  TempDir dir;
  LogOptions options = TestOptions(dir.path());
  options.ring_max_revisions = 4;
  auto log = MustOpen(options);
  for (int i = 0; i < 100; ++i) MustPut(*log, "/k/" + std::to_string(i % 7), std::to_string(i));
  auto w = MustWatch(*log, PrefixFrom("/k/", 2));
  for (int i = 0; i < 100; ++i) {
    WatchBatch b = MustEvents(*w);
    REQUIRE(b.revision == Revision(i + 2));
    REQUIRE(b.events[0].kv.value == std::to_string(i));
  }
  MustPut(*log, "/k/live", "x");
  CHECK(MustEvents(*w).events[0].kv.key == "/k/live");
}

}  // namespace
}  // namespace podflow
