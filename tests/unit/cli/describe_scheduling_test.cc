// describe pod's Scheduling section from a stored decision record.
#include <catch2/catch.hpp>

#include "../scheduler/decision_records.h"
#include "cli/describe.h"

namespace podflow::cli {
namespace {

TEST_CASE("text for describe", "[decision-record]") {
  const std::string bytes = scheduler::testing::WebRecord();
  const explain::SchedulingDecision& rec = **scheduler::ReadDecisionRecord(bytes);
  const std::string describe = DescribeSchedulingSection(rec);
  INFO(describe);
  CHECK(describe ==
        "Scheduling:\n"
        "  Profile:  default-scheduler\n"
        "  Node:     b (2 of 3 nodes feasible)\n"
        "  Scores:\n"
        "    NODE  TOTAL  NodeResourcesFit(x1)  NodeResourcesBalancedAllocation(x1)\n"
        "    b     149    68                    81\n"
        "    a     99     18                    81\n"
        "  Filtered Out:\n"
        "    1 Insufficient cpu (NodeResourcesFit)\n");
}

}  // namespace
}  // namespace podflow::cli
