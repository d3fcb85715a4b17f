#include <catch2/catch.hpp>
#include <set>

#include "stages/runtime/runtime.h"
#include "stages/status/status.h"
#include "test_pods.h"

namespace podflow::status {
namespace {

using runtime::NodeRuntime;
using runtime::PodRunner;
using model::Report;
using runtime::testing::Assign;
using runtime::testing::FakeClock;
using runtime::testing::PodBuilder;
using CS = api::ConditionStatus;

// A cluster of one node, one pod as binding left it, and the status stage's
// state; Next() runs the pod's next runtime step and folds it.
struct Harness {
  runtime::ImageCatalog catalog{runtime::testing::TestRegistry()};
  runtime::RuntimeTiming timing;
  NodeRuntime node{runtime::testing::TestNode(), &catalog, &timing};
  FakeClock clock;
  api::PodT stored;
  std::unique_ptr<PodRunner> runner;
  model::EventNamer namer{1};
  ReportLedger ledger;
  std::string bound_at;

  explicit Harness(PodBuilder pod) {
    pod.Node("node-1");
    stored = pod.Obj();
    stored.status = std::make_unique<api::PodStatusT>();
    stored.status->phase = api::PodPhase::Pending;
    stored.status->qos_class = api::PodQOSClass::BestEffort;
    auto scheduled = std::make_unique<api::PodConditionT>();
    scheduled->type = "PodScheduled";
    scheduled->status = CS::True;
    bound_at = scheduled->last_transition_time = FormatRfc3339(clock.now);
    stored.status->conditions.push_back(std::move(scheduled));
    clock.Advance(1000);
    runner = std::make_unique<PodRunner>(Assign(pod, 7), &node, clock.now);
  }

  FoldResult Next() {
    clock.now = *runner->due();
    return Fold(runner->Step());
  }
  FoldResult Fold(const Report& report) {
    FoldResult result = FoldReport(stored, report, clock.now, namer, ledger);
    if (result.verdict == FoldVerdict::kApplied) {
      stored.status = std::make_unique<api::PodStatusT>(result.status);
    }
    return result;
  }
  const api::PodConditionT& Condition(const std::string& type) const {
    for (const auto& c : stored.status->conditions) {
      if (c->type == type) return *c;
    }
    FAIL("no condition " << type);
    throw 0;
  }
  std::vector<std::string> ConditionTypes() const {
    std::vector<std::string> out;
    for (const auto& c : stored.status->conditions) out.push_back(c->type);
    return out;
  }
};

TEST_CASE("fold: nginx Pending -> Running, conditions at each step") {
  Harness h(PodBuilder("nginx-pod").Container("nginx", "nginx:1.14.2"));
  const std::string t1 = FormatRfc3339(h.clock.now);

  FoldResult pulling = h.Next();
  REQUIRE(pulling.verdict == FoldVerdict::kApplied);
  const api::PodStatusT& s1 = *h.stored.status;
  CHECK(s1.phase == api::PodPhase::Pending);
  CHECK(s1.host_ip == "192.168.0.2");
  CHECK(s1.pod_ip == "10.244.1.2");
  CHECK(s1.qos_class == api::PodQOSClass::BestEffort);  // kept
  CHECK(s1.start_time == t1);
  CHECK(h.ConditionTypes() == std::vector<std::string>{"PodReadyToStartContainers", "Initialized",
                                                       "Ready", "ContainersReady", "PodScheduled"});
  CHECK(h.Condition("PodScheduled").last_transition_time == h.bound_at);
  CHECK(h.Condition("Initialized").status == CS::True);
  const api::PodConditionT& ready = h.Condition("Ready");
  CHECK(ready.status == CS::False);
  CHECK(ready.reason == "ContainersNotReady");
  CHECK(ready.message == "containers with unready status: [nginx]");
  CHECK(h.Condition("ContainersReady").message == "containers with unready status: [nginx]");
  REQUIRE(pulling.events.size() == 1);
  CHECK(pulling.events[0].reason == "Pulling");

  FoldResult started = h.Next();
  const std::string t2 = FormatRfc3339(h.clock.now);
  REQUIRE(started.events.size() == 3);
  CHECK(h.stored.status->phase == api::PodPhase::Running);
  CHECK(h.Condition("Ready").status == CS::True);
  CHECK(h.Condition("Ready").reason.empty());
  CHECK(h.Condition("Ready").last_transition_time == t2);
  CHECK(h.Condition("ContainersReady").status == CS::True);
  CHECK(h.Condition("Initialized").last_transition_time == t1);  // unchanged status
  CHECK(h.Condition("PodScheduled").last_transition_time == h.bound_at);
  CHECK(h.stored.status->container_statuses[0]->ready);
}

TEST_CASE("fold: lastTransitionTime moves only when a condition's status changes") {
  Harness h(PodBuilder("p").Container("nginx", "nginx:1.14.2"));
  h.Next();
  h.Next();
  // Re-fold a report saying the same thing much later: no condition time moves.
  std::vector<std::string> before;
  for (const auto& c : h.stored.status->conditions) before.push_back(c->last_transition_time);
  Report same;
  same.node_name = "node-1";
  same.pod_uid = "uid-p";
  same.observed_mod_revision = 7;
  same.status = *h.stored.status;
  h.clock.Advance(60'000);
  REQUIRE(h.Fold(same).verdict == FoldVerdict::kApplied);
  std::vector<std::string> after;
  for (const auto& c : h.stored.status->conditions) after.push_back(c->last_transition_time);
  CHECK(after == before);
  // The container becomes unready: Ready flips and its time moves.
  same.status.container_statuses[0]->ready = false;
  REQUIRE(h.Fold(same).verdict == FoldVerdict::kApplied);
  CHECK(h.Condition("Ready").status == CS::False);
  CHECK(h.Condition("Ready").last_transition_time == FormatRfc3339(h.clock.now));
  CHECK(h.Condition("Initialized").last_transition_time == before[1]);
}

TEST_CASE("fold: Ready only when all containers are ready") {
  Harness h(PodBuilder("two").Container("bad", "nginx:nope").Container("web", "busybox:1.28"));
  for (int i = 0; i < 3; ++i) h.Next();  // fail, web started, back-off shown
  CHECK(h.stored.status->container_statuses[1]->ready);
  CHECK(h.stored.status->phase == api::PodPhase::Pending);
  CHECK(h.Condition("Ready").status == CS::False);
  CHECK(h.Condition("Ready").message == "containers with unready status: [bad]");
  CHECK(h.Condition("ContainersReady").status == CS::False);
}

TEST_CASE("fold: init containers hold Initialized until they complete") {
  Harness h(
      PodBuilder("myapp").Init("init-myservice", "busybox:1.28").Container("app", "busybox:1.28"));
  h.Next();
  CHECK(h.Condition("Initialized").status == CS::False);
  CHECK(h.Condition("Initialized").reason == "ContainersNotInitialized");
  CHECK(h.Condition("Initialized").message ==
        "containers with incomplete status: [init-myservice]");
  CHECK(h.Condition("Ready").message == "containers with unready status: [app]");
  h.Next();  // init running
  CHECK(h.Condition("Initialized").status == CS::False);
  h.Next();  // init done, app started
  CHECK(h.Condition("Initialized").status == CS::True);
  CHECK(h.Condition("Ready").status == CS::True);
  CHECK(h.stored.status->phase == api::PodPhase::Running);
}

TEST_CASE("fold: stale, foreign and misrouted reports are ignored") {
  Harness h(PodBuilder("p").Container("nginx", "nginx:1.14.2"));
  Report report = h.runner->Step();
  report.observed_mod_revision = 10;
  REQUIRE(h.Fold(report).verdict == FoldVerdict::kApplied);
  const api::PodStatusT before = *h.stored.status;

  Report old = report;
  old.observed_mod_revision = 8;
  old.status.phase = api::PodPhase::Running;
  FoldResult stale = h.Fold(old);
  CHECK(stale.verdict == FoldVerdict::kStale);
  CHECK(stale.events.empty());
  CHECK_THAT(stale.why, Catch::Contains("revision 10 already folded"));
  CHECK(h.stored.status->phase == before.phase);

  Report same_revision = report;  // a later step of the same view: folded
  CHECK(h.Fold(same_revision).verdict == FoldVerdict::kApplied);

  Report foreign = report;
  foreign.pod_uid = "uid-of-a-previous-pod";
  CHECK(h.Fold(foreign).verdict == FoldVerdict::kUidMismatch);
  Report misrouted = report;
  misrouted.node_name = "node-2";
  CHECK(h.Fold(misrouted).verdict == FoldVerdict::kNodeMismatch);

  h.ledger.Forget("uid-p");
  CHECK(h.Fold(old).verdict == FoldVerdict::kApplied);  // e.g. after a status-stage restart
}

TEST_CASE("fold: a terminal phase is never left") {
  Harness h(PodBuilder("p").Container("nginx", "nginx:1.14.2"));
  h.stored.status->phase = api::PodPhase::Succeeded;
  h.Next();
  CHECK(h.stored.status->phase == api::PodPhase::Succeeded);
}

TEST_CASE("fold creates one uniquely named event per report event") {
  FakeClock clock;
  api::PodT pod = PodBuilder("nginx-pod").Node("node-1").Obj();
  model::Report report;
  report.node_name = "node-1";
  report.pod_uid = "uid-nginx-pod";
  for (const char* reason : {"Pulled", "Created", "Started"}) {
    report.events.push_back(
        {"Normal", reason, reason, "2024-05-01T12:00:00Z", "spec.containers{nginx}"});
  }
  model::EventNamer namer;
  ReportLedger ledger;
  FoldResult r = FoldReport(pod, report, clock.now, namer, ledger);
  REQUIRE(r.events.size() == 3);
  std::set<std::string> names;
  for (const api::EventT& e : r.events) {
    names.insert(e.metadata->name);
    CHECK(e.involved_object->uid == "uid-nginx-pod");
    CHECK(e.source->host == "node-1");
  }
  CHECK(names.size() == 3);
  CHECK(r.events[1].reason == "Created");
}

}  // namespace
}  // namespace podflow::status
