// --verify-scheduling on a hand-written log: a decision made by the
// scheduling core on the logged state verifies; one that names another node
// is reported.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "replay_test_util.h"
#include "scheduler/scheduler.h"

namespace podflow::testing {
namespace {

constexpr uint64_t kRun = 7;
const char* kConfig = "seed: 3\n";

std::string NodeObj(const std::string& name) {
  return Obj("apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
             "\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n");
}

std::string PodObj(const std::string& name, const std::string& node, const std::string& cpu) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, uid: uid-" + name +
                  "}\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n"
                  "    resources: {requests: {cpu: \"" + cpu + "\", memory: 1Gi}}\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  return Obj(y);
}

// The decision the scheduling core makes for default/web on the log's head,
// with the context the stage would record.
struct Made {
  scheduler::Decision decision;
  scheduler::DecisionContext context;
};

Made Decide(EventLog& log) {
  static auto registry = scheduler::plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  auto config = scheduler::ParseSchedulerConfig(YAML::Load(kConfig), *registry);
  REQUIRE(config.ok());
  static std::vector<scheduler::Profile> profiles;
  auto built = scheduler::BuildProfiles(*registry, *config);
  REQUIRE(built.ok());
  profiles = std::move(*built);
  scheduler::SchedulerCore core(profiles);
  const int64_t head = log.CurrentRevision().value();
  Made made;
  for (scheduler::SchedulerCore::Feed& feed : core.Feeds()) {
    auto kvs = log.Range(RangeRequest::Prefix(feed.prefix));
    REQUIRE(kvs.ok());
    for (const KeyValue& kv : kvs->kvs) {
      feed.upsert({kv.key, kv.value, kv.mod_revision}, scheduler::SchedulerCore::Clock::now());
    }
    made.context.sources.push_back({feed.prefix, head, head});
  }
  auto outcome = core.Cycle("/registry/pods/default/web", scheduler::SchedulerCore::Clock::now());
  REQUIRE(outcome.has_value());
  REQUIRE(outcome->ok());
  made.decision = (*outcome)->decision;
  made.context.pod_key = "/registry/pods/default/web";
  made.context.pod_uid = (*outcome)->uid;
  made.context.pod_mod_revision = (*outcome)->mod_revision.value();
  made.context.profile = "default-scheduler";
  made.context.run = kRun;
  made.context.seq = 1;
  made.context.assumed_pods = core.assumed_pods();
  return made;
}

TEST_CASE("verify-scheduling re-runs a stored decision on the state it was made on", "[verify]") {
  TempDir dir;
  auto log = MustOpen(TestOptions(dir.path()));
  MustCommit(*log, {PutOp{scheduler::SchedulerRunKey(kRun), scheduler::EncodeSchedulerRun(kRun, 0, kConfig)}});
  for (const char* n : {"a", "b", "c"}) MustCommit(*log, {PutOp{std::string("/registry/nodes/") + n, NodeObj(n)}});
  MustCommit(*log, {PutOp{"/registry/pods/default/busy", PodObj("busy", "a", "3")}});
  MustCommit(*log, {PutOp{"/registry/pods/default/web", PodObj("web", "", "1")}});
  Made made = Decide(*log);
  REQUIRE(made.decision.scheduled());
  CHECK(made.decision.node != "a");  // a is the busy one
  // A later change must not matter: the state is the recorded revision's.
  MustCommit(*log, {PutOp{"/registry/pods/default/other", PodObj("other", "b", "3")}});

  SECTION("the decision as made verifies") {
    MustCommit(*log, {PutOp{scheduler::DecisionKey("default", "web"),
                            scheduler::EncodeDecisionRecord(made.decision, made.context)}});
    auto report = replay::VerifyScheduling(*log);
    REQUIRE(report.ok());
    INFO((report->notes.empty() ? "" : report->notes[0]));
    CHECK(report->verified == 1);
    CHECK(report->differ == 0);
    CHECK(report->skipped == 0);
  }
  SECTION("a decision naming another node differs") {
    scheduler::Decision changed = made.decision;
    changed.node = made.decision.node == "b" ? "c" : "b";
    MustCommit(*log, {PutOp{scheduler::DecisionKey("default", "web"),
                            scheduler::EncodeDecisionRecord(changed, made.context)}});
    auto report = replay::VerifyScheduling(*log);
    REQUIRE(report.ok());
    CHECK(report->verified == 1);
    CHECK(report->differ == 1);
    REQUIRE(report->notes.size() == 1);
    INFO(report->notes[0]);
    CHECK(report->notes[0].find("selected: \"" + changed.node + "\" -> \"" + made.decision.node + "\"") !=
          std::string::npos);
  }
  SECTION("without its run record a decision is skipped, not passed") {
    MustCommit(*log, {DeleteOp{scheduler::SchedulerRunKey(kRun)}});
    MustCommit(*log, {PutOp{scheduler::DecisionKey("default", "web"),
                            scheduler::EncodeDecisionRecord(made.decision, made.context)}});
    auto report = replay::VerifyScheduling(*log);
    REQUIRE(report.ok());
    CHECK(report->verified == 0);
    CHECK(report->skipped == 1);
  }
  SECTION("the decision key's summary") {
    const std::string bytes = scheduler::EncodeDecisionRecord(made.decision, made.context);
    CHECK(replay::Summarize(scheduler::DecisionKey("default", "web"), bytes) ==
          "decision: " + made.decision.node + " (3 of 3 nodes feasible)");
  }
}

}  // namespace
}  // namespace podflow::testing
