// NodeResourcesFit: args (scoringStrategy, ignoredResources,
// ignoredResourceGroups), the filter's ignored extended resources, and the
// three scoring strategies with exact scores worked by hand from
// kube-scheduler's formulas (noderesources/least_allocated.go,
// most_allocated.go, requested_to_capacity_ratio.go; MaxNodeScore 100,
// integer arithmetic).
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_resources_fit/fit.h"

namespace podflow::scheduler {
namespace {

using plugins::NodeResourcesFit;
using plugins::ScoringStrategyType;
using plugins::UtilizationShapePoint;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;

NodeResourcesFit Fit(const std::string& yaml) {
  auto fit = NodeResourcesFit::FromArgs(YAML::Load(yaml));
  INFO(yaml);
  REQUIRE(fit.ok());
  return std::move(fit).value();
}

TEST_CASE("NodeResourcesFit args: defaults", "[node-resources-fit]") {
  for (const char* yaml : {"~", "{}", "{scoringStrategy: {}}", "{scoringStrategy: {resources: []}}"}) {
    INFO(yaml);
    NodeResourcesFit fit = Fit(yaml);
    CHECK(fit.strategy() == ScoringStrategyType::kLeastAllocated);
    REQUIRE(fit.scoring_resources().size() == 2);
    CHECK(fit.scoring_resources()[0].name == "cpu");
    CHECK(fit.scoring_resources()[0].weight == 1);
    CHECK(fit.scoring_resources()[1].name == "memory");
    CHECK(fit.scoring_resources()[1].weight == 1);
  }
  // A weight of 0 (or none) is defaulted to 1.
  NodeResourcesFit fit = Fit("{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 0}, {name: memory}]}}");
  CHECK(fit.strategy() == ScoringStrategyType::kMostAllocated);
  CHECK(fit.scoring_resources()[0].weight == 1);
  CHECK(fit.scoring_resources()[1].weight == 1);
  // Shape scores 0..10 are scaled to 0..100.
  NodeResourcesFit ratio = Fit(
      "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
      "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}");
  CHECK(ratio.strategy() == ScoringStrategyType::kRequestedToCapacityRatio);
  REQUIRE(ratio.shape().size() == 2);
  CHECK(ratio.shape()[1].utilization == 100);
  CHECK(ratio.shape()[1].score == 100);
}

TEST_CASE("NodeResourcesFit args: errors name the field", "[node-resources-fit]") {
  struct Case {
    const char* yaml;
    const char* error;  // a substring of the message
  };
  const Case cases[] = {
      {"{scoringStrategy: {type: Balanced}}", "scoringStrategy.type: unsupported value \"Balanced\""},
      {"{scoringStrategy: {resources: [{name: cpu, weight: 101}]}}",
       "scoringStrategy.resources[0].weight: 101: resource weight of cpu not in valid range (0, 100]"},
      {"{scoringStrategy: {resources: [{name: cpu}, {name: memory, weight: -1}]}}",
       "scoringStrategy.resources[1].weight"},
      {"{scoringStrategy: {resources: [{name: cpu, weight: heavy}]}}",
       "scoringStrategy.resources[0].weight: must be an integer"},
      {"{scoringStrategy: {resources: [{weight: 2}]}}", "scoringStrategy.resources[0].name: required"},
      {"{scoringStrategy: {resources: cpu}}", "scoringStrategy.resources: must be a list"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio}}",
       "scoringStrategy.requestedToCapacityRatio.shape: at least one point must be specified"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 50, score: 1}, {utilization: 50, score: 2}]}}}",
       "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: 50: values must be sorted in increasing order"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 101, score: 1}]}}}",
       "scoringStrategy.requestedToCapacityRatio.shape[0].utilization: 101 not in valid range [0, 100]"},
      {"{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 11}]}}}",
       "scoringStrategy.requestedToCapacityRatio.shape[0].score: 11 not in valid range [0, 10]"},
      {"{ignoredResources: [\"bad name!\"]}", "ignoredResources[0]"},
      {"{ignoredResourceGroups: [example.com/gpu]}",
       "ignoredResourceGroups[0]: \"example.com/gpu\": resource group name can't contain '/'"},
      {"{ignoredResources: example.com/gpu}", "ignoredResources: must be a list"},
      {"{scoringStrategy: {kind: MostAllocated}}", "scoringStrategy.kind: unknown field"},
      {"{ignoredResource: [a]}", "ignoredResource: unknown field"},
      {"[1, 2]", "args: must be a map"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    auto fit = NodeResourcesFit::FromArgs(YAML::Load(c.yaml));
    REQUIRE_FALSE(fit.ok());
    CHECK_THAT(fit.status().message(), Catch::Contains(c.error));
  }
}

TEST_CASE("NodeResourcesFit filter: ignored extended resources", "[node-resources-fit]") {
  // The node offers no example.com/fpga and no hugepages at all.
  NodeInfo node = MakeNode().Cpu("4").Memory("8Gi").Info();
  struct Case {
    const char* name;
    const char* args;
    PodInfo pod;
    std::vector<std::string> reasons;  // empty: fits
  };
  std::vector<Case> cases;
  cases.push_back({"not ignored", "~", MakePod().Request("example.com/fpga", "1").Info(),
                   {"Insufficient example.com/fpga"}});
  cases.push_back({"ignoredResources", "{ignoredResources: [example.com/fpga]}",
                   MakePod().Request("example.com/fpga", "1").Info(), {}});
  cases.push_back({"ignoredResourceGroups", "{ignoredResourceGroups: [example.com]}",
                   MakePod().Request("example.com/fpga", "1").Request("other.io/x", "1").Info(),
                   {"Insufficient other.io/x"}});
  // Only extended resources can be ignored: hugepages and kubernetes.io/
  // names are checked whatever the args say.
  cases.push_back({"hugepages are not extended", "{ignoredResources: [hugepages-2Mi]}",
                   MakePod().Request("hugepages-2Mi", "2Mi").Info(), {"Insufficient hugepages-2Mi"}});
  cases.push_back({"kubernetes.io names are not extended", "{ignoredResourceGroups: [kubernetes.io]}",
                   MakePod().Request("kubernetes.io/thing", "1").Info(), {"Insufficient kubernetes.io/thing"}});
  cases.push_back({"ignoring does not hide cpu", "{ignoredResourceGroups: [example.com]}",
                   MakePod().Cpu("5").Request("example.com/fpga", "1").Info(), {"Insufficient cpu"}});
  for (const auto& c : cases) {
    INFO(c.name);
    PluginStatus s = Fit(c.args).Filter(NoState(), c.pod, node);
    if (c.reasons.empty()) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulable);
      CHECK(s.reasons() == c.reasons);
    }
  }
}

TEST_CASE("broken linear function", "[node-resources-fit]") {
  // Shape scores already scaled: (10, 20), (50, 60), (80, 30).
  const UtilizationShapePoint shape[] = {{10, 20}, {50, 60}, {80, 30}};
  struct Case {
    int64_t p, score;
  };
  const Case cases[] = {
      {0, 20},    // before the first point: its score
      {10, 20},   // on it
      {30, 40},   // 20 + (60-20)*(30-10)/(50-10) = 20 + 800/40
      {65, 45},   // 60 + (30-60)*(65-50)/(80-50) = 60 - 450/30
      {51, 59},   // 60 + (-30*1)/30
      {79, 31},   // 60 + (-30*29)/30 = 60 - 29
      {80, 30},
      {100, 30},  // after the last point: its score
  };
  for (const Case& c : cases) {
    INFO(c.p);
    CHECK(plugins::BrokenLinear(shape, c.p) == c.score);
  }
  // Integer division truncates: 0 + 100*10/30 = 33.
  const UtilizationShapePoint steep[] = {{0, 0}, {30, 100}};
  CHECK(plugins::BrokenLinear(steep, 10) == 33);
}

TEST_CASE("NodeResourcesFit scoring strategies", "[node-resources-fit]") {
  const std::string least = "{scoringStrategy: {type: LeastAllocated}}";
  const std::string most = "{scoringStrategy: {type: MostAllocated}}";
  const std::string pack =
      "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
      "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}";
  const std::string spread =
      "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
      "{shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}}";
  const std::string gpu_least =
      "{scoringStrategy: {resources: [{name: nvidia.com/gpu, weight: 1}, {name: cpu, weight: 1}]}}";
  const std::string most_weighted =
      "{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]}}";

  // 4 cpu, 10000 bytes of memory, 4 GPUs.
  const NodeInfo node = MakeNode().Cpu("4").Memory("10000").Allocatable("nvidia.com/gpu", "4").Info();
  const PodInfo pod = MakePod().Cpu("3").Memory("5000").Info();  // 75% cpu, 50% memory

  struct Case {
    const char* name;
    std::string args;
    PodInfo pod;
    NodeInfo node;
    int64_t score;
  };
  std::vector<Case> cases;
  // (4000-3000)*100/4000 = 25, (10000-5000)*100/10000 = 50 -> (25+50)/2 = 37.
  cases.push_back({"least", least, pod, node, 37});
  // 3000*100/4000 = 75, 50 -> (75+50)/2 = 62.
  cases.push_back({"most", most, pod, node, 62});
  // cpu 6000 > 4000 counts as full: 100, memory 50 -> 75.
  cases.push_back({"most, over-committed", most, MakePod().Cpu("6").Memory("5000").Info(), node, 75});
  // No requests: 100m of 1000m -> 10, 200Mi of 1000Mi -> 20 -> 15.
  cases.push_back({"most, non-zero defaults", most, MakePod().Container().Info(),
                   MakeNode().Cpu("1").Memory("1000Mi").Info(), 15});
  // cpu 75*3 + memory 50*1 = 275; / 4 = 68.
  cases.push_back({"most, weighted", most_weighted, pod, node, 68});
  // Utilization 75 -> 75, 50 -> 50; (75+50)/2 = 62.5 rounds to 63.
  cases.push_back({"ratio, bin packing", pack, pod, node, 63});
  // 100 - 75 = 25, 100 - 50 = 50; 37.5 rounds to 38.
  cases.push_back({"ratio, spreading", spread, pod, node, 38});
  // Explicit 0 memory: utilization 0 scores 0 and drops out of the mean: cpu 50 alone.
  cases.push_back({"ratio, a zero score carries no weight", pack,
                   MakePod().Cpu("2").Memory("0").Info(), node, 50});
  // Requested above capacity: utilization 100 -> 100 for cpu; memory 50 -> 75.
  cases.push_back({"ratio, over capacity", pack, MakePod().Cpu("5").Memory("5000").Info(), node, 75});
  // gpu (4-1)*100/4 = 75; cpu default 100m: (4000-100)*100/4000 = 97 -> (75+97)/2 = 86.
  cases.push_back({"least, extended resource", gpu_least,
                   MakePod().Request("nvidia.com/gpu", "1").Info(), node, 86});
  // A pod not requesting the GPU leaves it out: cpu 97 alone.
  cases.push_back({"least, extended resource not requested", gpu_least, MakePod().Container().Info(),
                   node, 97});
  // A node without the GPU at all leaves it out too.
  cases.push_back({"least, extended resource not offered", gpu_least,
                   MakePod().Request("nvidia.com/gpu", "1").Info(), MakeNode().Cpu("4").Info(), 97});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(Fit(c.args).Score(NoState(), c.pod, c.node) == c.score);
  }
}

TEST_CASE("NodeResourcesFit through the registry takes its pluginConfig args", "[node-resources-fit]") {
  Registry registry = plugins::NewInTreeRegistry().value();
  const PluginFactory* factory = registry.Find("NodeResourcesFit");
  REQUIRE(factory != nullptr);
  auto made = (*factory)(YAML::Load("{scoringStrategy: {type: MostAllocated}}"));
  REQUIRE(made.ok());
  CycleState state;
  // MostAllocated: 62 (see above), not LeastAllocated's 37.
  CHECK(made->score(made->self.get(), state, MakePod().Cpu("3").Memory("5000").Info(),
                    MakeNode().Cpu("4").Memory("10000").Info()) == 62);
  auto bad = (*factory)(YAML::Load("{scoringStrategy: {type: Nope}}"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("scoringStrategy.type"));
}

}  // namespace
}  // namespace podflow::scheduler
