// With one process per stage, kill -9 of `status` lost the runtime's reports
// in flight (in the dead process's socket buffers): 11 and 14 of 1,500 pods
// stayed bound but Pending until the runtime restarted, since the runtime
// had nothing new to report. The runtime now sends a pod's status again
// until the stored pod shows it.
#include <catch2/catch.hpp>

#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

TEST_CASE("status restart: reports lost with a killed status stage are sent again") {
  Pipeline p(/*multi_process=*/true);
  p.StartAll();
  INFO(p.Logs());
  // Frozen, the status stage takes the reports into its socket buffers and
  // never folds them: kill -9 then loses every one of them, deterministically.
  p.SignalStage("status", SIGSTOP);
  constexpr int kPods = 12;
  for (int i = 0; i < kPods; ++i) REQUIRE(p.SubmitPod("lost-" + std::to_string(i)));
  for (int i = 0; i < kPods; ++i) REQUIRE(p.PodReaches("lost-" + std::to_string(i), Pipeline::Bound));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the runtime started them and reported
  p.KillStage("status");
  p.StartStage("status");
  for (int i = 0; i < kPods; ++i) {
    CHECK(p.PodReaches("lost-" + std::to_string(i), Pipeline::Running, std::chrono::seconds(30)));
  }
}

}  // namespace
}  // namespace podflow::e2e
