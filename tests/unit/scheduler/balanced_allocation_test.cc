// NodeResourcesBalancedAllocation: args and exact scores, worked by hand from
// kube-scheduler's balancedResourceScorer: per resource fraction =
// requested / allocatable (capped at 1, plain requests), std = |f1-f2|/2 for
// two fractions or the population standard deviation for more, score =
// int((1 - std) * 100); a pod requesting none of the resources is skipped (0).
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_resources_balanced_allocation/balanced_allocation.h"

namespace podflow::scheduler {
namespace {

using plugins::NodeResourcesBalancedAllocation;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;

NodeResourcesBalancedAllocation Balanced(const std::string& yaml) {
  auto p = NodeResourcesBalancedAllocation::FromArgs(YAML::Load(yaml));
  INFO(yaml);
  REQUIRE(p.ok());
  return std::move(p).value();
}

TEST_CASE("BalancedAllocation args", "[balanced-allocation]") {
  struct Case {
    const char* yaml;
    const char* error;  // nullptr: valid
  };
  const Case cases[] = {
      {"~", nullptr},
      {"{resources: [{name: cpu}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 0}]}", nullptr},
      {"{resources: [{name: cpu, weight: 2}]}", "resources[0].weight: 2: must be 1"},
      {"{resources: [{name: cpu}, {name: cpu}]}", "resources[1].name: duplicate value \"cpu\""},
      {"{resources: [{name: cpu, size: 1}]}", "resources[0].size: unknown field"},
      {"{scoringStrategy: {}}", "scoringStrategy: unknown field"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    auto p = NodeResourcesBalancedAllocation::FromArgs(YAML::Load(c.yaml));
    if (c.error == nullptr) {
      CHECK(p.ok());
    } else {
      REQUIRE_FALSE(p.ok());
      CHECK_THAT(p.status().message(), Catch::Contains(c.error));
    }
  }
}

TEST_CASE("BalancedAllocation scores", "[balanced-allocation]") {
  const std::string three = "{resources: [{name: cpu}, {name: memory}, {name: nvidia.com/gpu}]}";
  const NodeInfo node = MakeNode().Cpu("4").Memory("10000").Allocatable("nvidia.com/gpu", "4").Info();
  struct Case {
    const char* name;
    std::string args;
    PodInfo pod;
    int64_t score;
  };
  std::vector<Case> cases;
  // 0.25, 0.5, 0.75: mean 0.5, variance 0.125/3, std 0.2041 -> 79.58 -> 79.
  cases.push_back({"three resources", three,
                   MakePod().Cpu("1").Memory("5000").Request("nvidia.com/gpu", "3").Info(), 79});
  // The GPU not requested leaves it out: 0.25, 0.5 -> std 0.125 -> 87.
  cases.push_back({"extended resource not requested", three, MakePod().Cpu("1").Memory("5000").Info(), 87});
  // Best-effort pods are skipped (kube-scheduler's PreScore returns Skip): 0.
  cases.push_back({"best effort, default resources", "~", MakePod().Container().Info(), 0});
  // Requesting only a resource outside the configured ones is best effort here.
  cases.push_back({"only other resources requested", "~", MakePod().Request("nvidia.com/gpu", "1").Info(), 0});
  // Requesting only the GPU among three resources is not: 0, 0, 0.25 ->
  // mean 1/12, variance (2*(1/12)^2 + (1/6)^2)/3 = 1/72, std 0.1178 -> 88.
  cases.push_back({"only the GPU of three", three, MakePod().Request("nvidia.com/gpu", "1").Info(), 88});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(Balanced(c.args).Score(NoState(), c.pod, node) == c.score);
  }
}

}  // namespace
}  // namespace podflow::scheduler
