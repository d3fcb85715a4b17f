// podflow-replay --why: a stored decision record as the JSON document and
// as text.
#include <catch2/catch.hpp>

#include "../scheduler/decision_records.h"
#include "model/value.h"
#include "replay/replay.h"

namespace podflow::replay {
namespace {

using scheduler::ReadDecisionRecord;
using scheduler::Snapshot;
using scheduler::testing::MakePod;
using scheduler::testing::RecordContext;
using scheduler::testing::SmallCluster;
using scheduler::testing::SmallProfile;
using scheduler::testing::WebRecord;

TEST_CASE("the --why JSON document", "[decision-record]") {
  const std::string bytes = WebRecord();
  const std::string json = model::ToJson(DecisionValue(**ReadDecisionRecord(bytes)));
  // b: Fit cpu (4000-2000)*100/4000 = 50, memory 7/8 -> 87 => (50+87)/2 = 68;
  //    Balanced |0.5 - 0.125| = 0.375 -> std 0.1875 -> 81.
  const std::string b_scores =
      R"({"name":"b","passed":true,"plugin":null,"reason":null,"scores":[)"
      R"({"plugin":"NodeResourcesFit","raw":68,"normalized":68,"weight":1,"weighted":68},)"
      R"({"plugin":"NodeResourcesBalancedAllocation","raw":81,"normalized":81,"weight":1,"weighted":81}],)"
      R"("total":149})";
  INFO(json);
  CHECK(json.find(R"("pod":"team-a/web")") != std::string::npos);
  CHECK(json.find(R"("revision":12)") != std::string::npos);
  CHECK(json.find(R"("selected":"b")") != std::string::npos);
  CHECK(json.find(b_scores) != std::string::npos);
  CHECK(json.find(R"({"name":"c","passed":false,"plugin":"NodeResourcesFit","reason":"Insufficient cpu",)"
                  R"("scores":[],"total":null})") != std::string::npos);
  CHECK(json.find(R"("filteredOut":[{"plugin":"NodeResourcesFit","reason":"Insufficient cpu","count":1}])") !=
        std::string::npos);

  SECTION("unschedulable: selected is null and the message is kept") {
    Snapshot snap = SmallCluster();
    auto u = Schedule(SmallProfile(), MakePod().Name("big").Cpu("8").Info(), snap);
    REQUIRE(u.ok());
    const std::string ub = EncodeDecisionRecord(*u, RecordContext());
    const std::string uj = model::ToJson(DecisionValue(**ReadDecisionRecord(ub)));
    INFO(uj);
    CHECK(uj.find(R"("selected":null)") != std::string::npos);
    CHECK(uj.find(R"("message":"0/3 nodes are available: 3 Insufficient cpu.)") != std::string::npos);
    CHECK(uj.find(R"("count":3)") != std::string::npos);
  }
}

TEST_CASE("text for --why", "[decision-record]") {
  const std::string bytes = WebRecord();
  const explain::SchedulingDecision& rec = **ReadDecisionRecord(bytes);
  const std::string why = DecisionText(rec);
  INFO(why);
  CHECK(why.find("Selected:    b (2 feasible of 3 nodes)") != std::string::npos);
  CHECK(why.find("  b  total 149") != std::string::npos);
  CHECK(why.find("  c  NodeResourcesFit  Insufficient cpu") != std::string::npos);
}

}  // namespace
}  // namespace podflow::replay
