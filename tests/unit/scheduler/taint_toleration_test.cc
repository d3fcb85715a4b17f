// TaintToleration score and NormalizeScore (kubernetes
// plugins/tainttoleration): raw score = PreferNoSchedule taints the pod does
// not tolerate; normalized = DefaultNormalizeScore(100, reverse): 100 -
// raw * 100 / max raw, all 100 when the max is 0. The filter's own cases
// live in filter_plugins_test.cc; here: which effects it considers.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/taint_toleration/taint_toleration.h"

namespace podflow::scheduler {
namespace {

using api::TaintEffect;
using api::TolerationOperator;
using plugins::TaintToleration;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;

TEST_CASE("TaintToleration filter: NoSchedule and NoExecute, not PreferNoSchedule", "[taint-toleration]") {
  TaintToleration p;
  struct Case {
    const char* name;
    NodeInfo node;
    PodInfo pod;
    std::string reason;  // empty: passes
  };
  std::vector<Case> cases;
  cases.push_back({"NoSchedule", MakeNode().Taint("dedicated", "gpu", TaintEffect::NoSchedule).Info(),
                   MakePod().Info(), "node(s) had untolerated taint {dedicated: gpu}"});
  cases.push_back({"NoExecute", MakeNode().Taint("node.kubernetes.io/unreachable", "", TaintEffect::NoExecute).Info(),
                   MakePod().Info(), "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"});
  cases.push_back({"PreferNoSchedule only scores",
                   MakeNode().Taint("dedicated", "gpu", TaintEffect::PreferNoSchedule).Info(), MakePod().Info(), ""});
  cases.push_back({"memory-pressure taint tolerated",
                   MakeNode().Taint("node.kubernetes.io/memory-pressure", "", TaintEffect::NoSchedule).Info(),
                   MakePod().Toleration("node.kubernetes.io/memory-pressure", TolerationOperator::Exists, "",
                                        TaintEffect::NoSchedule).Info(),
                   ""});
  for (const auto& c : cases) {
    INFO(c.name);
    PluginStatus s = p.Filter(NoState(), c.pod, c.node);
    if (c.reason.empty()) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
      CHECK(s.reasons() == std::vector<std::string>{c.reason});
    }
  }
}

TEST_CASE("TaintToleration score counts untolerated PreferNoSchedule taints", "[taint-toleration]") {
  TaintToleration p;
  const NodeInfo node = MakeNode()
                            .Taint("a", "1", TaintEffect::PreferNoSchedule)
                            .Taint("b", "2", TaintEffect::PreferNoSchedule)
                            .Taint("c", "3", TaintEffect::NoSchedule)  // not the score's business
                            .Info();
  struct Case {
    const char* name;
    PodInfo pod;
    int64_t score;
  };
  std::vector<Case> cases;
  cases.push_back({"no tolerations", MakePod().Info(), 2});
  cases.push_back({"tolerates a (PreferNoSchedule)",
                   MakePod().Toleration("a", TolerationOperator::Equal, "1", TaintEffect::PreferNoSchedule).Info(), 1});
  cases.push_back({"tolerates a (any effect)",
                   MakePod().Toleration("a", TolerationOperator::Equal, "1", TaintEffect::Unset).Info(), 1});
  cases.push_back({"a toleration for NoSchedule does not count",
                   MakePod().Toleration("a", TolerationOperator::Equal, "1", TaintEffect::NoSchedule).Info(), 2});
  cases.push_back({"wrong value",
                   MakePod().Toleration("a", TolerationOperator::Equal, "2", TaintEffect::PreferNoSchedule).Info(), 2});
  cases.push_back({"Exists without key tolerates everything",
                   MakePod().Toleration("", TolerationOperator::Exists, "", TaintEffect::Unset).Info(), 0});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(p.Score(NoState(), c.pod, node) == c.score);
  }
}

TEST_CASE("TaintToleration NormalizeScore is reversed", "[taint-toleration]") {
  TaintToleration p;
  struct Case {
    std::vector<int64_t> raw, normalized;
  };
  const Case cases[] = {
      {{0, 1, 2}, {100, 50, 0}},  // 100 - 1*100/2
      {{1, 3}, {67, 0}},          // 100 - 1*100/3 = 100 - 33
      {{0, 0}, {100, 100}},       // no node has an untolerated taint
      {{4}, {0}},
  };
  for (const auto& c : cases) {
    std::vector<int64_t> scores = c.raw;
    p.NormalizeScore(MakePod().Info(), scores);
    CHECK(scores == c.normalized);
  }
}

}  // namespace
}  // namespace podflow::scheduler
