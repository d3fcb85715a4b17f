// NodeAffinity score (kubernetes plugins/nodeaffinity): raw score = sum of
// the weights of the preferred terms (the pod's and the args'
// addedAffinity ones) the node matches; NormalizeScore =
// DefaultNormalizeScore(100, no reverse): raw * 100 / max raw. Also the args:
// addedAffinity's required selector filters ("node(s) didn't match
// scheduler-enforced node affinity").
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_affinity/node_affinity.h"

namespace podflow::scheduler {
namespace {

using api::NodeSelectorOperator;
using plugins::NodeAffinity;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;
using testing::Req;

NodeAffinity Plugin(const std::string& yaml) {
  auto p = NodeAffinity::FromArgs(YAML::Load(yaml));
  INFO(yaml);
  REQUIRE(p.ok());
  return std::move(p).value();
}

TEST_CASE("NodeAffinity score: weights of the matching preferred terms", "[node-affinity-score]") {
  NodeAffinity p;
  const PodInfo pod = MakePod()
                          .PreferredTerm(2, {{"zone", NodeSelectorOperator::In, {"a"}}})
                          .PreferredTerm(3, {{"disk", NodeSelectorOperator::In, {"ssd"}}})
                          .PreferredTerm(0, {{"zone", NodeSelectorOperator::Exists, {}}})  // weight 0: ignored
                          .PreferredTerm(7, {})  // empty term matches nothing
                          .PreferredTerm(5, {}, {{"metadata.name", NodeSelectorOperator::In, {"n4"}}})
                          .Info();
  struct Case {
    NodeInfo node;
    int64_t score;
  };
  std::vector<Case> cases;
  cases.push_back({MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Info(), 5});
  cases.push_back({MakeNode().Name("n2").Label("zone", "a").Info(), 2});
  cases.push_back({MakeNode().Name("n3").Label("zone", "b").Info(), 0});
  cases.push_back({MakeNode().Name("n4").Label("disk", "ssd").Info(), 8});
  std::vector<int64_t> scores;
  for (const auto& c : cases) {
    INFO(c.node.name);
    scores.push_back(p.Score(NoState(), pod, c.node));
    CHECK(scores.back() == c.score);
  }
  // 5*100/8 = 62, 2*100/8 = 25, 0, 100.
  p.NormalizeScore(pod, scores);
  CHECK(scores == std::vector<int64_t>{62, 25, 0, 100});

  // No node matches any term: all stay 0.
  std::vector<int64_t> zeros{0, 0};
  p.NormalizeScore(pod, zeros);
  CHECK(zeros == std::vector<int64_t>{0, 0});
}

TEST_CASE("NodeAffinity args: addedAffinity", "[node-affinity-score]") {
  NodeAffinity p = Plugin(R"(
addedAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
    - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 4
    preference:
      matchExpressions: [{key: zone, operator: In, values: [b]}]
)");
  const NodeInfo a = MakeNode().Name("a").Label("zone", "a").Info();
  const NodeInfo b = MakeNode().Name("b").Label("zone", "b").Info();
  const NodeInfo c = MakeNode().Name("c").Label("zone", "c").Info();
  const PodInfo pod = MakePod().PreferredTerm(1, {{"zone", NodeSelectorOperator::In, {"a"}}}).Info();

  CHECK(p.Filter(NoState(), pod, a).IsSuccess());
  PluginStatus s = p.Filter(NoState(), pod, c);
  CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
  CHECK(s.reasons() == std::vector<std::string>{"node(s) didn't match scheduler-enforced node affinity"});
  // The added affinity comes first: a pod nodeSelector mismatch on c is not the reason.
  CHECK(p.Filter(NoState(), MakePod().NodeSelector("zone", "a").Info(), c).reasons() ==
        std::vector<std::string>{"node(s) didn't match scheduler-enforced node affinity"});
  CHECK(p.Filter(NoState(), MakePod().NodeSelector("zone", "a").Info(), b).reasons() ==
        std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"});

  CHECK(p.Score(NoState(), pod, a) == 1);  // the pod's term
  CHECK(p.Score(NoState(), pod, b) == 4);  // the added term
  CHECK(p.Score(NoState(), pod, c) == 0);
}

TEST_CASE("NodeAffinity args: errors name the field", "[node-affinity-score]") {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: zone, operator: Near, values: [a]}]}]}}}",
       "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].operator: unsupported value \"Near\""},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: zone, operator: In}]}]}}}",
       "matchExpressions[0].values: must be specified when `operator` is 'In' or 'NotIn'"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: zone, operator: Exists, values: [a]}]}]}}}",
       "matchExpressions[0].values: may not be specified"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: cores, operator: Gt, values: [many]}]}]}}}",
       "matchExpressions[0].values[0]: \"many\": must be an integer"},
      {"{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchFields: [{key: metadata.labels, operator: In, values: [a]}]}]}}}",
       "matchFields[0].key: \"metadata.labels\": not a valid field selector key"},
      {"{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: high, preference: {}}]}}",
       "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be an integer"},
      {"{addedAffinity: {requiredDuringScheduling: {}}}", "addedAffinity.requiredDuringScheduling: unknown field"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    auto p = NodeAffinity::FromArgs(YAML::Load(c.yaml));
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Contains(c.error));
  }
}

}  // namespace
}  // namespace podflow::scheduler
