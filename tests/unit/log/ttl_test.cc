// TTL: expiry is an ordinary delete, a later put without TTL cancels it, and
// pending expiries survive a restart. The clock is fake; nothing sleeps for
// seconds.
#include <thread>

#include "log_fixture.h"

namespace podflow {
namespace {

using testing::FakeWallClock;
using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

// Polls until `key` is gone (true) or ~2 s pass (false).
bool WaitGone(EventLog& log, const std::string& key) {
  for (int i = 0; i < 1000; ++i) {
    auto kv = log.Get(key);
    REQUIRE(kv.ok());
    if (!kv->has_value()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

TEST_CASE("a key with a TTL is deleted by an ordinary delete when it expires") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  auto log = MustOpen(options);

  auto put = log->Put("/events/e1", "Scheduled", std::nullopt, 60);
  REQUIRE(put->succeeded);
  CHECK((*log->Get("/events/e1"))->ttl_seconds == 60);
  clock.now_ms += 59'000;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(log->Get("/events/e1")->has_value());

  clock.now_ms += 1'000;
  REQUIRE(WaitGone(*log, "/events/e1"));
  // The delete is a revision of its own, recorded like any delete.
  CHECK(log->CurrentRevision() == Revision(put->revision.value() + 1));
  auto changes = log->ReadChanges(Revision(put->revision.value() + 1), 10);
  REQUIRE(changes.ok());
  REQUIRE(changes->size() == 1);
  REQUIRE((*changes)[0]->changes.size() == 1);
  CHECK((*changes)[0]->changes[0].type == ChangeType::kDelete);
  CHECK((*changes)[0]->changes[0].kv.key == "/events/e1");
}

TEST_CASE("a later put without TTL cancels the expiry; with a TTL replaces it") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  auto log = MustOpen(options);

  REQUIRE(log->Put("keep", "v1", std::nullopt, 10)->succeeded);
  REQUIRE(log->Put("keep", "v2")->succeeded);
  REQUIRE(log->Put("moved", "v1", std::nullopt, 10)->succeeded);
  REQUIRE(log->Put("moved", "v2", std::nullopt, 100)->succeeded);
  const Revision before = log->CurrentRevision();
  clock.now_ms += 50'000;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(log->Get("keep")->has_value());
  CHECK(log->Get("moved")->has_value());
  CHECK(log->CurrentRevision() == before);
  clock.now_ms += 50'000;
  REQUIRE(WaitGone(*log, "moved"));
  CHECK(log->Get("keep")->has_value());
}

TEST_CASE("pending expiries survive a restart") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  {
    auto log = MustOpen(options);
    REQUIRE(log->Put("e", "v", std::nullopt, 30)->succeeded);
    MustPut(*log, "plain", "v");
  }
  clock.now_ms += 31'000;
  auto log = MustOpen(options);
  REQUIRE(WaitGone(*log, "e"));
  CHECK(log->Get("plain")->has_value());
}

// now_ms + ttl * 1000 used to overflow for a huge TTL: the expiry wrapped
// into the past and the key was deleted at once.
TEST_CASE("a TTL over etcd's max lease TTL is rejected, not wrapped into the past") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  auto log = MustOpen(options);
  auto huge = log->Put("huge", "v", std::nullopt, INT64_MAX / 1000 + 1);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == Code::kInvalid);
  CHECK_FALSE(log->Get("huge")->has_value());
  // The largest TTL is accepted and does not expire.
  REQUIRE(log->Put("max", "v", std::nullopt, 9'000'000'000)->succeeded);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(log->Get("max")->has_value());
}

}  // namespace
}  // namespace podflow
