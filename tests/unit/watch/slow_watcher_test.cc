// A slow watcher never blocks writers and never loses events: paused while
// 100,000 events are written (more than the ring holds), then resumed, it
// receives each event exactly once, in order.
#include <thread>

#include "log_fixture.h"
#include "watch/watch.h"

namespace podflow {
namespace {

using testing::MustOpen;
using testing::TempDir;
using testing::TestOptions;

TEST_CASE("a paused watcher receives 100,000 events exactly once, in order") {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 25'000;
  TempDir dir;
  LogOptions options = TestOptions(dir.path());
  options.ring_max_revisions = 16'384;  // most of the backlog is read from storage
  auto log = MustOpen(options);
  WatchOptions wo;
  wo.key = "/w/";
  wo.prefix = true;
  auto watcher = Watcher::Open(log.get(), wo);
  REQUIRE(watcher.ok());
  const int64_t first = (*watcher)->next_revision().value();

  // The watcher does not read while the writers run.
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      const std::string key = "/w/" + std::to_string(t);
      for (int i = 0; i < kPerWriter; ++i) {
        auto r = log->Put(key, std::to_string(i));
        if (!r.ok() || !r->succeeded) FAIL("write failed");
      }
    });
  }
  for (auto& t : writers) t.join();
  const int64_t last = log->CurrentRevision().value();
  REQUIRE(last - first + 1 == kWriters * kPerWriter);

  std::vector<int> next_value(kWriters, 0);
  int64_t expect_rev = first;
  int received = 0;
  while (received < kWriters * kPerWriter) {
    WatchBatch b = (*watcher)->Next(std::chrono::milliseconds(2000));
    REQUIRE(b.kind == WatchBatch::Kind::kEvents);
    REQUIRE(b.revision.value() == expect_rev);
    REQUIRE(b.events.size() == 1);
    const int writer = b.events[0].kv.key.back() - '0';
    REQUIRE(b.events[0].kv.value == std::to_string(next_value[writer]));
    ++next_value[writer];
    ++expect_rev;
    ++received;
  }
  CHECK((*watcher)->Next(std::chrono::milliseconds(0)).kind == WatchBatch::Kind::kTimedOut);
}

}  // namespace
}  // namespace podflow
