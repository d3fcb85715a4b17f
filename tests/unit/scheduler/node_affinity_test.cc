// NodeAffinity filter: nodeSelector and required node selector terms.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_affinity/node_affinity.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::NoState;
using testing::Req;
using Op = api::NodeSelectorOperator;

TEST_CASE("NodeAffinity filter") {
  plugins::NodeAffinity p;
  NodeInfo node = MakeNode()
                      .Name("node-1")
                      .Label("disktype", "ssd")
                      .Label("zone", "a")
                      .Label("cores", "16")
                      .Info();
  struct Case {
    const char* name;
    PodInfo pod;
    bool fits;
  };
  std::vector<Case> cases;
  cases.push_back({"no constraints", MakePod().Info(), true});
  cases.push_back({"nodeSelector matches", MakePod().NodeSelector("disktype", "ssd").Info(), true});
  cases.push_back({"nodeSelector value differs", MakePod().NodeSelector("disktype", "hdd").Info(), false});
  cases.push_back({"nodeSelector key absent", MakePod().NodeSelector("gpu", "yes").Info(), false});
  cases.push_back({"nodeSelector all keys must match",
                   MakePod().NodeSelector("disktype", "ssd").NodeSelector("zone", "b").Info(), false});
  cases.push_back({"In", MakePod().AffinityTerm({{"zone", Op::In, {"b", "a"}}}).Info(), true});
  cases.push_back({"In, not listed", MakePod().AffinityTerm({{"zone", Op::In, {"b"}}}).Info(), false});
  cases.push_back({"In, label absent", MakePod().AffinityTerm({{"rack", Op::In, {"1"}}}).Info(), false});
  cases.push_back({"NotIn", MakePod().AffinityTerm({{"zone", Op::NotIn, {"b"}}}).Info(), true});
  cases.push_back({"NotIn, listed", MakePod().AffinityTerm({{"zone", Op::NotIn, {"a"}}}).Info(), false});
  cases.push_back({"NotIn, label absent", MakePod().AffinityTerm({{"rack", Op::NotIn, {"1"}}}).Info(), true});
  cases.push_back({"Exists", MakePod().AffinityTerm({{"disktype", Op::Exists, {}}}).Info(), true});
  cases.push_back({"Exists, absent", MakePod().AffinityTerm({{"gpu", Op::Exists, {}}}).Info(), false});
  cases.push_back({"DoesNotExist", MakePod().AffinityTerm({{"gpu", Op::DoesNotExist, {}}}).Info(), true});
  cases.push_back({"DoesNotExist, present",
                   MakePod().AffinityTerm({{"zone", Op::DoesNotExist, {}}}).Info(), false});
  cases.push_back({"Gt", MakePod().AffinityTerm({{"cores", Op::Gt, {"8"}}}).Info(), true});
  cases.push_back({"Gt, equal is not greater", MakePod().AffinityTerm({{"cores", Op::Gt, {"16"}}}).Info(), false});
  cases.push_back({"Lt", MakePod().AffinityTerm({{"cores", Op::Lt, {"32"}}}).Info(), true});
  cases.push_back({"Lt, not less", MakePod().AffinityTerm({{"cores", Op::Lt, {"4"}}}).Info(), false});
  cases.push_back({"Gt on a non-integer label", MakePod().AffinityTerm({{"zone", Op::Gt, {"1"}}}).Info(), false});
  cases.push_back({"Gt with a non-integer value", MakePod().AffinityTerm({{"cores", Op::Gt, {"x"}}}).Info(), false});
  cases.push_back({"requirements in a term are ANDed",
                   MakePod().AffinityTerm({{"zone", Op::In, {"a"}}, {"disktype", Op::In, {"hdd"}}}).Info(), false});
  cases.push_back({"terms are ORed",
                   MakePod()
                       .AffinityTerm({{"disktype", Op::In, {"hdd"}}})
                       .AffinityTerm({{"zone", Op::In, {"a"}}})
                       .Info(),
                   true});
  cases.push_back({"matchFields metadata.name In",
                   MakePod().AffinityTerm({}, {{"metadata.name", Op::In, {"node-1"}}}).Info(), true});
  cases.push_back({"matchFields metadata.name In another",
                   MakePod().AffinityTerm({}, {{"metadata.name", Op::In, {"node-2"}}}).Info(), false});
  cases.push_back({"matchFields metadata.name NotIn",
                   MakePod().AffinityTerm({}, {{"metadata.name", Op::NotIn, {"node-2"}}}).Info(), true});
  cases.push_back({"expressions and fields ANDed",
                   MakePod()
                       .AffinityTerm({{"zone", Op::In, {"b"}}}, {{"metadata.name", Op::In, {"node-1"}}})
                       .Info(),
                   false});
  cases.push_back({"an empty term matches nothing", MakePod().AffinityTerm({}).Info(), false});
  cases.push_back({"required with no terms matches nothing", MakePod().EmptyRequiredAffinity().Info(), false});
  cases.push_back({"nodeSelector and affinity both needed",
                   MakePod().NodeSelector("disktype", "hdd").AffinityTerm({{"zone", Op::In, {"a"}}}).Info(),
                   false});
  for (const auto& c : cases) {
    INFO(c.name);
    PluginStatus s = p.Filter(NoState(), c.pod, node);
    if (c.fits) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
      CHECK(s.reasons() == std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"});
    }
  }
}

}  // namespace
}  // namespace podflow::scheduler
