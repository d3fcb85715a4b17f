// NodeResourcesFit (filter, LeastAllocated score) and
// NodeResourcesBalancedAllocation: verdicts and exact scores, expected
// values worked out by hand from Kubernetes' formulas.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_resources_balanced_allocation/balanced_allocation.h"
#include "scheduler/plugins/node_resources_fit/fit.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::NoState;
using testing::WithPods;

TEST_CASE("NodeResourcesFit filter") {
  plugins::NodeResourcesFit p;
  // 4 cpu, 8Gi, 110 pods, 2 GPUs; 3 cpu and 6Gi already requested.
  NodeInfo node = WithPods(MakeNode().Cpu("4").Memory("8Gi").Allocatable("nvidia.com/gpu", "2").Info(),
                           {MakePod().Name("e").Cpu("3").Memory("6Gi").Info()});
  struct Case {
    const char* name;
    PodInfo pod;
    std::vector<std::string> reasons;  // empty: fits
  };
  std::vector<Case> cases;
  cases.push_back({"fits exactly", MakePod().Cpu("1").Memory("2Gi").Info(), {}});
  cases.push_back({"cpu short by 1m", MakePod().Cpu("1001m").Info(), {"Insufficient cpu"}});
  cases.push_back({"memory short", MakePod().Memory("3Gi").Info(), {"Insufficient memory"}});
  cases.push_back({"both short, both reported", MakePod().Cpu("2").Memory("3Gi").Info(),
                   {"Insufficient cpu", "Insufficient memory"}});
  cases.push_back({"no requests: only the pod count matters", MakePod().Container().Info(), {}});
  cases.push_back({"gpu fits", MakePod().Request("nvidia.com/gpu", "2").Info(), {}});
  cases.push_back({"gpu short", MakePod().Request("nvidia.com/gpu", "3").Info(), {"Insufficient nvidia.com/gpu"}});
  cases.push_back({"unknown extended resource", MakePod().Request("example.com/fpga", "1").Info(),
                   {"Insufficient example.com/fpga"}});
  cases.push_back({"ephemeral-storage not offered", MakePod().Request("ephemeral-storage", "1Gi").Info(),
                   {"Insufficient ephemeral-storage"}});
  for (const auto& c : cases) {
    INFO(c.name);
    PluginStatus s = p.Filter(NoState(), c.pod, node);
    if (c.reasons.empty()) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulable);
      CHECK(s.reasons() == c.reasons);
    }
  }

  SECTION("Too many pods") {
    NodeInfo full = WithPods(MakeNode().Cpu("4").Memory("8Gi").Pods("1").Info(), {MakePod().Name("e").Info()});
    PluginStatus s = p.Filter(NoState(), MakePod().Cpu("5").Info(), full);
    CHECK(s.code() == PluginCode::kUnschedulable);
    CHECK(s.reasons() == std::vector<std::string>{"Too many pods", "Insufficient cpu"});
  }
}

TEST_CASE("LeastAllocated score") {
  using plugins::LeastRequestedScore;
  // (capacity - requested) * 100 / capacity, integer division.
  CHECK(LeastRequestedScore(3000, 4000) == 25);
  CHECK(LeastRequestedScore(5000, 10000) == 50);
  CHECK(LeastRequestedScore(0, 4000) == 100);
  CHECK(LeastRequestedScore(1, 3) == 66);       // 2*100/3 = 66.6 -> 66
  CHECK(LeastRequestedScore(5000, 4000) == 0);  // over capacity
  CHECK(LeastRequestedScore(1, 0) == 0);

  plugins::NodeResourcesFit p;
  struct Case {
    const char* name;
    NodeInfo node;
    PodInfo pod;
    int64_t score;
  };
  std::vector<Case> cases;
  // cpu (4000-3000)*100/4000 = 25; memory (10000-5000)*100/10000 = 50; (25+50)/2 = 37.
  cases.push_back({"k8s example", MakeNode().Cpu("4").Memory("10000").Info(),
                   MakePod().Cpu("3").Memory("5000").Info(), 37});
  // cpu (4000-1000-1000)*100/4000 = 50; memory (8Gi-2Gi-2Gi)/8Gi = 50; -> 50.
  cases.push_back({"existing pods count", WithPods(MakeNode().Cpu("4").Memory("8Gi").Info(),
                                                   {MakePod().Name("e").Cpu("1").Memory("2Gi").Info()}),
                   MakePod().Cpu("1").Memory("2Gi").Info(), 50});
  // Pod without requests counts 100m / 200Mi: cpu (1000-100)*100/1000 = 90;
  // memory (1Gi-200Mi)*100/1Gi = 864026624*100/1073741824 = 80 (80.47); (90+80)/2 = 85.
  cases.push_back({"non-zero defaults", MakeNode().Cpu("1").Memory("1Gi").Info(),
                   MakePod().Container().Info(), 85});
  // Existing best-effort pod counts 100m / 200Mi too: cpu (1000-200)/1000 = 80;
  // memory (1Gi-400Mi)*100/1Gi = 60 (60.9); -> 70.
  cases.push_back({"existing best-effort pods count non-zero",
                   WithPods(MakeNode().Cpu("1").Memory("1Gi").Info(), {MakePod().Name("e").Container().Info()}),
                   MakePod().Container().Info(), 70});
  // cpu over capacity: 0; memory (8Gi-4Gi)/8Gi = 50; (0+50)/2 = 25.
  cases.push_back({"over capacity scores 0 for that resource", MakeNode().Cpu("2").Memory("8Gi").Info(),
                   MakePod().Cpu("3").Memory("4Gi").Info(), 25});
  // No memory allocatable: only cpu, weight 1: (4000-1000)*100/4000 = 75.
  cases.push_back({"resource with zero allocatable is skipped", MakeNode().Cpu("4").Info(),
                   MakePod().Cpu("1").Memory("1Gi").Info(), 75});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(p.Score(NoState(), c.pod, c.node) == c.score);
  }

  SECTION("weights") {
    // cpu weight 3: 25*3, memory weight 1: 50 -> (75+50)/4 = 31.
    plugins::NodeResourcesFit weighted({{"cpu", 3}, {"memory", 1}});
    CHECK(weighted.Score(NoState(), MakePod().Cpu("3").Memory("5000").Info(),
                         MakeNode().Cpu("4").Memory("10000").Info()) == 31);
  }
}

TEST_CASE("BalancedAllocation score") {
  plugins::NodeResourcesBalancedAllocation p;
  struct Case {
    const char* name;
    NodeInfo node;
    PodInfo pod;
    int64_t score;
  };
  std::vector<Case> cases;
  // fractions 3000/4000 = 0.75 and 5000/10000 = 0.5; std = |0.75-0.5|/2 = 0.125;
  // (1 - 0.125) * 100 = 87.5 -> 87.
  cases.push_back({"k8s example", MakeNode().Cpu("4").Memory("10000").Info(),
                   MakePod().Cpu("3").Memory("5000").Info(), 87});
  // (1000+1000)/4000 = 0.5, (2000+3000)/10000 = 0.5: std 0 -> 100.
  cases.push_back({"balanced with existing pods",
                   WithPods(MakeNode().Cpu("4").Memory("10000").Info(),
                            {MakePod().Name("e").Cpu("1").Memory("2000").Info()}),
                   MakePod().Cpu("1").Memory("3000").Info(), 100});
  // Best-effort pod: kube-scheduler (1.33+) skips the plugin for a pod
  // requesting none of its resources, so it adds 0 on every node.
  cases.push_back({"no requests", MakeNode().Cpu("4").Memory("10000").Info(), MakePod().Container().Info(), 0});
  // cpu 6000/4000 capped at 1, memory 0.5: std 0.25 -> 75.
  cases.push_back({"fraction capped at 1", MakeNode().Cpu("4").Memory("10000").Info(),
                   MakePod().Cpu("6").Memory("5000").Info(), 75});
  // 1/3 and 0: std = 1/6 = 0.1666..; (1 - 0.1666..) * 100 = 83.33 -> 83.
  cases.push_back({"truncates", MakeNode().Cpu("3").Memory("10000").Info(), MakePod().Cpu("1").Info(), 83});
  // cpu only (no memory allocatable): one fraction, std 0 -> 100.
  cases.push_back({"one resource", MakeNode().Cpu("4").Info(), MakePod().Cpu("3").Memory("1").Info(), 100});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(p.Score(NoState(), c.pod, c.node) == c.score);
  }

  SECTION("three resources use the population standard deviation") {
    // 0.2, 0.5, 0.8: mean 0.5, variance (0.09+0+0.09)/3 = 0.06, std 0.2449 -> 75.5 -> 75.
    const int64_t req[] = {2, 5, 8};
    const int64_t alloc[] = {10, 10, 10};
    CHECK(plugins::BalancedResourceScore(req, alloc) == 75);
  }
}

}  // namespace
}  // namespace podflow::scheduler
