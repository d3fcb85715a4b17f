// The FailedScheduling message, worded as kube-scheduler's FitError words it
// (DefaultPreemption's part: default_preemption_test.cc).
#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

NodeVerdict V(std::string node, PluginCode code, std::vector<std::string> reasons) {
  return NodeVerdict{std::move(node), PluginStatus(code, std::move(reasons))};
}

constexpr auto kU = PluginCode::kUnschedulable;
constexpr auto kUU = PluginCode::kUnschedulableAndUnresolvable;

TEST_CASE("FailedScheduling message: one reason everywhere") {
  std::vector<NodeVerdict> v = {V("a", kU, {"Insufficient cpu"}), V("b", kU, {"Insufficient cpu"}),
                                V("c", kU, {"Insufficient cpu"})};
  CHECK(FitErrorMessage(3, v) == "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST_CASE("FailedScheduling message: mixed reasons, counted and sorted as strings") {
  std::vector<NodeVerdict> v = {
      V("a", kUU, {"node(s) had untolerated taint {dedicated: gpu}"}),
      V("b", kU, {"Insufficient cpu", "Insufficient memory"}),
      V("c", kUU, {"node(s) were unschedulable"}),
      V("d", kU, {"Insufficient cpu"}),
  };
  // "1 Insufficient memory" < "1 node(s) had ..." < "1 node(s) were ..." < "2 Insufficient cpu":
  // the count is part of the sorted string.
  CHECK(FitErrorMessage(4, v) ==
        "0/4 nodes are available: 1 Insufficient memory, "
        "1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, "
        "2 Insufficient cpu.");
}

TEST_CASE("FailedScheduling message: counts sort as strings, 10 before 2") {
  std::vector<NodeVerdict> v;
  for (int i = 0; i < 10; ++i) v.push_back(V("t" + std::to_string(i), kU, {"Too many pods"}));
  v.push_back(V("x", kU, {"Insufficient cpu"}));
  v.push_back(V("y", kU, {"Insufficient cpu"}));
  CHECK(FitErrorMessage(12, v) == "0/12 nodes are available: 10 Too many pods, 2 Insufficient cpu.");
}

}  // namespace
}  // namespace podflow::scheduler
