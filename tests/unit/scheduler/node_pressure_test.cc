// NodePressure (the seeds' CheckNodeMemoryPressure / CheckNodePIDPressure /
// CheckNodeDiskPressure): verdicts by node condition and the pod's QoS
// class, and how PodInfo decides BestEffort (no cpu/memory request or limit
// above 0 in any init or regular container).
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_pressure/node_pressure.h"

namespace podflow::scheduler {
namespace {

using api::ConditionStatus;
using plugins::NodePressure;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;

TEST_CASE("pod QoS: BestEffort", "[node-pressure]") {
  struct Case {
    const char* name;
    PodInfo pod;
    bool best_effort;
  };
  std::vector<Case> cases;
  cases.push_back({"no resources", MakePod().Container().Info(), true});
  cases.push_back({"no containers", MakePod().Info(), true});
  cases.push_back({"cpu request", MakePod().Cpu("100m").Info(), false});
  cases.push_back({"memory limit only", MakePod().Limit("memory", "64Mi").Info(), false});
  cases.push_back({"zero requests", MakePod().Cpu("0").Memory("0").Info(), true});
  cases.push_back({"other resources only", MakePod().Request("ephemeral-storage", "1Gi").Info(), true});
  cases.push_back({"init container request", MakePod().Container().InitContainer({{"cpu", "1"}}).Info(), false});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(c.pod.best_effort == c.best_effort);
  }
}

TEST_CASE("NodePressure filter", "[node-pressure]") {
  NodePressure p;
  const PodInfo best_effort = MakePod().Container().Info();
  const PodInfo burstable = MakePod().Cpu("100m").Info();
  struct Case {
    const char* name;
    NodeInfo node;
    std::string best_effort_reason;  // empty: passes
    std::string burstable_reason;
  };
  std::vector<Case> cases;
  cases.push_back({"healthy", MakeNode().Condition("MemoryPressure", ConditionStatus::False)
                                  .Condition("DiskPressure", ConditionStatus::False)
                                  .Condition("PIDPressure", ConditionStatus::False).Info(), "", ""});
  cases.push_back({"memory pressure keeps only BestEffort pods off",
                   MakeNode().Condition("MemoryPressure", ConditionStatus::True).Info(),
                   "node(s) had memory pressure", ""});
  cases.push_back({"memory pressure Unknown is not pressure",
                   MakeNode().Condition("MemoryPressure", ConditionStatus::Unknown).Info(), "", ""});
  cases.push_back({"disk pressure keeps every pod off",
                   MakeNode().Condition("DiskPressure", ConditionStatus::True).Info(),
                   "node(s) had disk pressure", "node(s) had disk pressure"});
  cases.push_back({"pid pressure keeps every pod off", MakeNode().Condition("PIDPressure", ConditionStatus::True).Info(),
                   "node(s) had pid pressure", "node(s) had pid pressure"});
  // Checked memory, pid, disk: the first failing one is the reason.
  cases.push_back({"all three", MakeNode().Condition("DiskPressure", ConditionStatus::True)
                                    .Condition("PIDPressure", ConditionStatus::True)
                                    .Condition("MemoryPressure", ConditionStatus::True).Info(),
                   "node(s) had memory pressure", "node(s) had pid pressure"});
  for (const auto& c : cases) {
    INFO(c.name);
    for (const auto& [pod, reason] : {std::pair{&best_effort, c.best_effort_reason},
                                      std::pair{&burstable, c.burstable_reason}}) {
      PluginStatus s = p.Filter(NoState(), *pod, c.node);
      if (reason.empty()) {
        CHECK(s.IsSuccess());
      } else {
        CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
        CHECK(s.reasons() == std::vector<std::string>{reason});
      }
    }
  }
}

}  // namespace
}  // namespace podflow::scheduler
