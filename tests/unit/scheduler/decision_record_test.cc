// The stored explanation of a decision: round trip, JSON, text, size bound.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/framework/decision_record.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;

// A fixed profile (the default one grows as plugins are added): the
// resource filters and the two resource scores, weight 1 each.
ProfileConfig SmallConfig() {
  ProfileConfig config;
  config.filter = {"NodeUnschedulable", "NodeResourcesFit"};
  config.score = {{"NodeResourcesFit", 1}, {"NodeResourcesBalancedAllocation", 1}};
  return config;
}

const Profile& Default() {
  static auto registry = plugins::NewInTreeRegistry();
  static Profile profile = [] {
    auto p = Profile::Build(*registry, SmallConfig());
    REQUIRE(p.ok());
    return std::move(p).value();
  }();
  return profile;
}

DecisionContext Context() {
  DecisionContext c;
  c.pod_key = "/registry/pods/team-a/web";
  c.pod_uid = "uid-1";
  c.pod_mod_revision = 7;
  c.profile = "default-scheduler";
  c.start_node_index = 1;
  c.sources = {{"/registry/minions/", 3, 9}, {"/registry/pods/", 3, 12}};
  c.run = 42;
  c.seq = 5;
  c.assumed_pods = 2;
  c.decided_at_ms = 1000;
  return c;
}

// Nodes a (half full), b (empty), c (too small for the pod).
Snapshot Cluster() {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("4").Memory("8Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("4").Memory("8Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("c").Cpu("1").Memory("8Gi").Info()).ok());
  PodInfo busy = MakePod().Name("busy").Uid("busy").Cpu("2").Memory("4Gi").Info();
  busy.node_name = "a";
  REQUIRE(snap.AddPod(std::move(busy)).ok());
  return snap;
}

TEST_CASE("a decision record round-trips every field", "[decision-record]") {
  Snapshot snap = Cluster();
  auto d = Schedule(Default(), MakePod().Name("web").Cpu("2").Memory("1Gi").Info(), snap, {1});
  REQUIRE(d.ok());
  REQUIRE(d->node == "b");
  const std::string bytes = EncodeDecisionRecord(*d, Context());
  auto r = ReadDecisionRecord(bytes);
  REQUIRE(r.ok());
  const explain::SchedulingDecision& rec = **r;
  CHECK(rec.pod_key()->str() == "/registry/pods/team-a/web");
  CHECK(rec.pod_uid()->str() == "uid-1");
  CHECK(rec.pod_mod_revision() == 7);
  CHECK(rec.profile()->str() == "default-scheduler");
  CHECK(rec.node()->str() == "b");
  CHECK(rec.num_all_nodes() == 3);
  CHECK(rec.feasible_nodes() == 2);
  CHECK(rec.tied_nodes() == 1);
  CHECK(rec.tie_break_seed() == d->tie_break_seed);
  CHECK(rec.start_node_index() == 1);
  CHECK(rec.next_start_node_index() == static_cast<int64_t>(d->next_start_node_index));
  CHECK(rec.revision() == 12);  // the newest source
  REQUIRE(rec.sources()->size() == 2);
  CHECK(rec.sources()->Get(0)->prefix()->str() == "/registry/minions/");
  CHECK(rec.sources()->Get(0)->list_revision() == 3);
  CHECK(rec.sources()->Get(1)->revision() == 12);
  CHECK(rec.run() == 42);
  CHECK(rec.seq() == 5);
  CHECK(rec.assumed_pods() == 2);
  REQUIRE(rec.score_plugins()->size() == 2);
  CHECK(rec.score_plugins()->Get(0)->name()->str() == "NodeResourcesFit");
  CHECK(rec.score_plugins()->Get(0)->weight() == 1);
  // Best first: b, then a; each plugin's numbers as the runner computed them.
  REQUIRE(rec.scores()->size() == 2);
  CHECK(rec.scores()->Get(0)->node()->str() == "b");
  CHECK(rec.scores()->Get(1)->node()->str() == "a");
  for (const NodeScores& s : d->scores) {
    const explain::NodeScore* got = rec.scores()->Get(s.node == "b" ? 0 : 1);
    CHECK(got->total() == s.total);
    for (size_t p = 0; p < s.plugins.size(); ++p) {
      CHECK(got->raw()->Get(p) == s.plugins[p].raw);
      CHECK(got->normalized()->Get(p) == s.plugins[p].normalized);
      CHECK(got->weighted()->Get(p) == s.plugins[p].weighted);
    }
  }
  REQUIRE(rec.rejected()->size() == 1);
  CHECK(rec.rejected()->Get(0)->node()->str() == "c");
  CHECK(rec.rejected()->Get(0)->plugin()->str() == "NodeResourcesFit");
  CHECK(rec.rejected()->Get(0)->code() == explain::VerdictCode::Unschedulable);
  CHECK(rec.rejected()->Get(0)->reasons()->Get(0)->str() == "Insufficient cpu");
  REQUIRE(rec.rejection_counts()->size() == 1);
  CHECK(rec.rejection_counts()->Get(0)->count() == 1);
}

TEST_CASE("decision keys", "[decision-record]") {
  CHECK(DecisionKey("team-a", "web") == "/registry/scheduling.podflow.io/decisions/team-a/web");
  CHECK(DecisionKey("", "web") == "/registry/scheduling.podflow.io/decisions/default/web");
  CHECK(DecisionKeyOfPod("/registry/pods/team-a/web") == "/registry/scheduling.podflow.io/decisions/team-a/web");
  CHECK(SchedulerRunKey(255) == "/registry/scheduling.podflow.io/runs/00000000000000ff");
  CHECK_FALSE(ReadDecisionRecord("not a flatbuffer").ok());
  const std::string run_bytes = EncodeSchedulerRun(7, 99, "seed: 1\n");
  auto run = ReadSchedulerRun(run_bytes);
  REQUIRE(run.ok());
  CHECK((*run)->run() == 7);
  CHECK((*run)->config_yaml()->str() == "seed: 1\n");
}

TEST_CASE("the --why JSON document", "[decision-record]") {
  Snapshot snap = Cluster();
  auto d = Schedule(Default(), MakePod().Name("web").Cpu("2").Memory("1Gi").Info(), snap, {1});
  REQUIRE(d.ok());
  const std::string bytes = EncodeDecisionRecord(*d, Context());
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
    auto u = Schedule(Default(), MakePod().Name("big").Cpu("8").Info(), snap);
    REQUIRE(u.ok());
    const std::string ub = EncodeDecisionRecord(*u, Context());
    const std::string uj = model::ToJson(DecisionValue(**ReadDecisionRecord(ub)));
    INFO(uj);
    CHECK(uj.find(R"("selected":null)") != std::string::npos);
    CHECK(uj.find(R"("message":"0/3 nodes are available: 3 Insufficient cpu.)") != std::string::npos);
    CHECK(uj.find(R"("count":3)") != std::string::npos);
  }
}

TEST_CASE("text for --why and describe", "[decision-record]") {
  Snapshot snap = Cluster();
  auto d = Schedule(Default(), MakePod().Name("web").Cpu("2").Memory("1Gi").Info(), snap, {1});
  REQUIRE(d.ok());
  const std::string bytes = EncodeDecisionRecord(*d, Context());
  const explain::SchedulingDecision& rec = **ReadDecisionRecord(bytes);
  const std::string why = DecisionText(rec);
  INFO(why);
  CHECK(why.find("Selected:    b (2 feasible of 3 nodes)") != std::string::npos);
  CHECK(why.find("  b  total 149") != std::string::npos);
  CHECK(why.find("  c  NodeResourcesFit  Insufficient cpu") != std::string::npos);
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

TEST_CASE("a record of a large cluster keeps the best nodes and counts the rest", "[decision-record]") {
  Snapshot snap;
  for (int i = 0; i < 300; ++i) {
    // Every third node too small.
    std::string cpu = i % 3 == 0 ? "1" : "4";
    REQUIRE(snap.UpsertNode(MakeNode().Name("n" + std::to_string(i)).Cpu(cpu).Memory("8Gi").Info()).ok());
  }
  ProfileConfig config = SmallConfig();
  config.percentage_of_nodes_to_score = 100;
  static auto registry = plugins::NewInTreeRegistry();
  auto profile = Profile::Build(*registry, config);
  REQUIRE(profile.ok());
  auto d = Schedule(*profile, MakePod().Name("web").Cpu("2").Info(), snap);
  REQUIRE(d.ok());
  REQUIRE(d->feasible_nodes == 200);
  const std::string bytes = EncodeDecisionRecord(*d, Context());
  const explain::SchedulingDecision& rec = **ReadDecisionRecord(bytes);
  CHECK(rec.scores()->size() == kMaxRecordedScoredNodes);
  CHECK(rec.rejected()->size() == kMaxRecordedRejectedNodes);
  REQUIRE(rec.rejection_counts()->size() == 1);
  CHECK(rec.rejection_counts()->Get(0)->count() == 100);
  CHECK(rec.scores()->Get(0)->node()->str() == d->node);
  CHECK(bytes.size() < 4 * 1024);
}

}  // namespace
}  // namespace podflow::scheduler
