// With one process per stage, kill -9 of `persistence` and a restart of it
// left every other stage deaf: their watch streams lived on in the dead
// server only, the clients saw nothing but timeouts and never re-synced, and
// every pod published afterwards stayed Pending. A watch stream silent past
// its progress deadline is now taken as lost, and the informer re-lists and
// watches again.
#include <catch2/catch.hpp>

#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

TEST_CASE("stage restart: after kill -9 and restart of persistence, new pods still reach Running") {
  Pipeline p(/*multi_process=*/true);
  p.StartAll();
  INFO(p.Logs());
  REQUIRE(p.SubmitRunning("before"));
  for (int cycle = 0; cycle < 2; ++cycle) {
    p.KillStage("persistence");
    p.StartStage("persistence");
    // Within the watch's silence deadline (3 s) plus a re-list.
    CHECK(p.SubmitRunning("after-" + std::to_string(cycle), std::chrono::seconds(20)));
  }
}

}  // namespace
}  // namespace podflow::e2e
