// The stored explanation of a decision: round trip, keys, size bound. How it
// is shown is tested with who shows it (tests/unit/replay, tests/unit/cli).
#include <catch2/catch.hpp>

#include "decision_records.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::RecordContext;
using testing::SmallCluster;
using testing::SmallConfig;
using testing::SmallProfile;

TEST_CASE("a decision record round-trips every field", "[decision-record]") {
  Snapshot snap = SmallCluster();
  auto d = Schedule(SmallProfile(), MakePod().Name("web").Cpu("2").Memory("1Gi").Info(), snap, {1});
  REQUIRE(d.ok());
  REQUIRE(d->node == "b");
  const std::string bytes = EncodeDecisionRecord(*d, RecordContext());
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
  const std::string bytes = EncodeDecisionRecord(*d, RecordContext());
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
