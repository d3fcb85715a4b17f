#include <catch2/catch.hpp>

#include "model/objects.h"
#include "stages/controllers/replica_set.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

const SimTime kNow = FromUnixMillis(1'767'000'000'000);

// A pod scheduled to `node`, Running and Ready since `ready_for` ago,
// created `age` ago.
PodRecord Pod(std::string uid, std::string node, SimDuration age = SimDuration(3'600'000),
              std::optional<SimDuration> ready_for = SimDuration(3'000'000)) {
  PodRecord pod;
  pod.uid = uid;
  pod.name = "web-" + uid;
  pod.key = "/registry/pods/default/" + pod.name;
  pod.node = std::move(node);
  pod.phase = api::PodPhase::Running;
  pod.created = kNow - age;
  if (ready_for) {
    pod.ready = true;
    pod.ready_at = kNow - *ready_for;
  }
  return pod;
}

std::vector<std::string> Uids(const std::vector<const PodRecord*>& pods) {
  std::vector<std::string> out;
  for (const PodRecord* pod : pods) out.push_back(pod->uid);
  return out;
}

// Which of the two is deleted first.
std::string First(const PodRecord& a, const PodRecord& b, const std::vector<const PodRecord*>& related = {}) {
  const std::vector<const PodRecord*> both{&a, &b};
  const std::string one = PodsToDelete(both, related.empty() ? both : related, 1, kNow)[0]->uid;
  // The order does not depend on which came first.
  CHECK(PodsToDelete({&b, &a}, related.empty() ? both : related, 1, kNow)[0]->uid == one);
  return one;
}

TEST_CASE("a pod as the ReplicaSet controller reads it") {
  api::PodT pod;
  pod.metadata = std::make_unique<api::ObjectMetaT>();
  pod.metadata->name = "frontend-x7k2p";
  pod.metadata->namespace_ = "default";
  pod.metadata->uid = "u-1";
  pod.metadata->creation_timestamp = "2026-01-01T00:00:00Z";
  auto label = std::make_unique<api::StringEntryT>();
  label->key = "tier";
  label->value = "frontend";
  pod.metadata->labels.push_back(std::move(label));
  auto cost = std::make_unique<api::StringEntryT>();
  cost->key = kPodDeletionCost;
  cost->value = "-20";
  pod.metadata->annotations.push_back(std::move(cost));
  for (bool controller : {false, true}) {
    auto ref = std::make_unique<api::OwnerReferenceT>();
    ref->kind = "ReplicaSet";
    ref->uid = controller ? "rs-uid" : "other-uid";
    ref->controller = controller;
    pod.metadata->owner_references.push_back(std::move(ref));
  }
  pod.spec = std::make_unique<api::PodSpecT>();
  pod.spec->node_name = "node-2";
  pod.status = std::make_unique<api::PodStatusT>();
  pod.status->phase = api::PodPhase::Running;
  for (int restarts : {2, 5}) {
    auto status = std::make_unique<api::ContainerStatusT>();
    status->restart_count = restarts;
    pod.status->container_statuses.push_back(std::move(status));
  }
  auto ready = std::make_unique<api::PodConditionT>();
  ready->type = "Ready";
  ready->status = api::ConditionStatus::True;
  ready->last_transition_time = "2026-01-01T00:00:30Z";
  pod.status->conditions.push_back(std::move(ready));

  std::optional<PodRecord> read = ReadPod("/registry/pods/default/frontend-x7k2p", model::Pack(pod));
  REQUIRE(read.has_value());
  CHECK(read->name == "frontend-x7k2p");
  CHECK(read->namespace_ == "default");
  CHECK(read->node == "node-2");
  CHECK(read->controller_uid == "rs-uid");  // the controller's, not the other owner's
  CHECK(read->labels == model::Labels{{"tier", "frontend"}});
  CHECK(read->deletion_cost == -20);
  CHECK(read->restarts == 5);
  CHECK(read->ready);
  CHECK(read->ready_at == FromUnixMillis(1'767'225'630'000));
  CHECK(read->created == FromUnixMillis(1'767'225'600'000));
  CHECK_FALSE(read->deleting);
  CHECK(IsActive(*read));

  // A deletion cost that is not an int32 counts as none; a deleting or
  // finished pod is not active.
  pod.metadata->annotations[0]->value = "3000000000";
  pod.metadata->deletion_timestamp = "2026-01-01T00:01:00Z";
  read = ReadPod("k", model::Pack(pod));
  REQUIRE(read.has_value());
  CHECK(read->deletion_cost == 0);
  CHECK(read->deleting);
  CHECK_FALSE(IsActive(*read));
  PodRecord done = Pod("d", "node-1");
  done.phase = api::PodPhase::Succeeded;
  CHECK_FALSE(IsActive(done));
  done.phase = api::PodPhase::Failed;
  CHECK_FALSE(IsActive(done));

  CHECK_FALSE(ReadPod("k", "not a pod").has_value());
}

TEST_CASE("which pods a ReplicaSet deletes first") {
  SECTION("unscheduled, then Pending, Unknown, Running, then not ready") {
    PodRecord unscheduled = Pod("a", "");
    unscheduled.phase = api::PodPhase::Pending;
    unscheduled.ready = false;
    PodRecord pending = Pod("b", "node-1");
    pending.phase = api::PodPhase::Pending;
    pending.ready = false;
    PodRecord unknown = Pod("c", "node-1");
    unknown.phase = api::PodPhase::Unknown;
    PodRecord not_ready = Pod("d", "node-1", SimDuration(3'600'000), std::nullopt);
    PodRecord ready = Pod("e", "node-1");
    CHECK(First(unscheduled, pending) == "a");
    CHECK(First(pending, unknown) == "b");
    CHECK(First(unknown, not_ready) == "c");
    CHECK(First(not_ready, ready) == "d");
    const std::vector<const PodRecord*> all{&ready, &not_ready, &unknown, &pending, &unscheduled};
    CHECK(Uids(PodsToDelete(all, all, 5, kNow)) == std::vector<std::string>{"a", "b", "c", "d", "e"});
    CHECK(Uids(PodsToDelete(all, all, 2, kNow)) == std::vector<std::string>{"a", "b"});
    CHECK(PodsToDelete(all, all, 9, kNow).size() == 5);
    CHECK(PodsToDelete(all, all, 0, kNow).empty());
  }
  SECTION("a lower deletion cost first, before everything after readiness") {
    PodRecord cheap = Pod("z", "node-1", SimDuration(10'000'000));
    cheap.deletion_cost = -5;
    PodRecord newer = Pod("a", "node-1", SimDuration(1'000));
    CHECK(First(cheap, newer) == "z");
  }
  SECTION("a pod on a node with more pods of its own and its siblings first") {
    PodRecord crowded = Pod("z", "node-1", SimDuration(10'000'000));
    PodRecord alone = Pod("a", "node-2", SimDuration(1'000));
    PodRecord sibling = Pod("s", "node-1");
    CHECK(First(crowded, alone, {&crowded, &alone, &sibling}) == "z");
    // Without the sibling the two are alike there: the newer goes.
    CHECK(First(crowded, alone) == "a");
    // An inactive sibling does not count.
    sibling.deleting = true;
    CHECK(First(crowded, alone, {&crowded, &alone, &sibling}) == "a");
    // A ReplicaSet of no owner counts nothing towards crowding: with its
    // own pods doubled up on node-1, the newer pod still goes first.
    PodRecord twin = Pod("t", "node-1", SimDuration(10'000'000));
    CHECK(PodsToDelete({&crowded, &twin, &alone}, {}, 1, kNow)[0]->uid == "a");
  }
  SECTION("ready for less time first, in powers of two of the time") {
    PodRecord recent = Pod("z", "node-1", SimDuration(3'600'000), SimDuration(10'000));
    PodRecord long_ready = Pod("a", "node-1", SimDuration(3'600'000), SimDuration(1'000'000));
    CHECK(First(recent, long_ready) == "z");
    // 40 s and 50 s ready fall in the same power of two (2^35 ns .. 2^36
    // ns): the UID decides.
    PodRecord forty = Pod("z", "node-1", SimDuration(3'600'000), SimDuration(40'000));
    PodRecord fifty = Pod("a", "node-1", SimDuration(3'600'000), SimDuration(50'000));
    CHECK(First(forty, fifty) == "a");
  }
  SECTION("more restarts first, then newer first") {
    PodRecord restarted = Pod("z", "node-1", SimDuration(10'000'000));
    restarted.restarts = 3;
    PodRecord newer = Pod("a", "node-1", SimDuration(1'000));
    CHECK(First(restarted, newer) == "z");
    PodRecord older = Pod("b", "node-1", SimDuration(100'000'000));
    CHECK(First(older, newer) == "a");
    PodRecord no_time = Pod("c", "node-1");
    no_time.created.reset();
    CHECK(First(no_time, newer) == "c");
  }
}

TEST_CASE("slow start: 1, 2, 4, ... pods at a time") {
  CHECK(SlowStartBatches(0).empty());
  CHECK(SlowStartBatches(1) == std::vector<int>{1});
  CHECK(SlowStartBatches(3) == std::vector<int>{1, 2});
  CHECK(SlowStartBatches(10) == std::vector<int>{1, 2, 4, 3});
  const std::vector<int> burst = SlowStartBatches(kBurstReplicas);
  CHECK(burst == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 245});
}

TEST_CASE("a ReplicaSet's replica counts") {
  PodRecord ready_long = Pod("a", "node-1", SimDuration(3'600'000), SimDuration(60'000));
  ready_long.labels = {{"app", "web"}, {"tier", "frontend"}};
  PodRecord ready_now = Pod("b", "node-1", SimDuration(3'600'000), SimDuration(2'000));
  ready_now.labels = {{"app", "web"}, {"tier", "frontend"}};
  PodRecord not_ready = Pod("c", "node-1", SimDuration(3'600'000), std::nullopt);
  not_ready.labels = {{"app", "web"}};  // selected, missing a template label
  const std::vector<const PodRecord*> active{&ready_long, &ready_now, &not_ready};
  const model::Labels tmpl{{"app", "web"}, {"tier", "frontend"}};
  CHECK(CountReplicas(active, tmpl, 0, kNow) == ReplicaCounts{3, 2, 2, 2});
  // minReadySeconds 10: the pod ready for 2 s is not available yet.
  CHECK(CountReplicas(active, tmpl, 10, kNow) == ReplicaCounts{3, 2, 2, 1});
  CHECK(CountReplicas(active, tmpl, 10, kNow + SimDuration(8'000)) == ReplicaCounts{3, 2, 2, 2});
  CHECK(CountReplicas({}, tmpl, 0, kNow) == ReplicaCounts{});
}

TEST_CASE("expectations hold a ReplicaSet until its creations and deletions are seen") {
  Expectations e;
  CHECK(e.Satisfied("rs", kNow));
  e.ExpectCreate("rs", "pods/a", kNow);
  e.ExpectCreate("rs", "pods/b", kNow);
  e.ExpectDelete("rs", "pods/old", kNow);
  e.ExpectCreate("other", "pods/c", kNow);
  CHECK_FALSE(e.Satisfied("rs", kNow));
  CHECK(e.Observe("pods/a", true) == "rs");
  CHECK_FALSE(e.Observe("pods/a", true).has_value());  // once
  // A deletion is seen by the pod deleting or gone, not by its being there.
  CHECK_FALSE(e.Observe("pods/old", true).has_value());
  CHECK(e.Observe("pods/old", false) == "rs");
  CHECK_FALSE(e.Satisfied("rs", kNow));
  e.Drop("pods/b");  // its creation failed
  CHECK(e.Satisfied("rs", kNow));
  CHECK_FALSE(e.Satisfied("other", kNow));
  // Never seen: waited for five minutes.
  CHECK_FALSE(e.Satisfied("other", kNow + Expectations::kTimeout - SimDuration(1)));
  CHECK(e.Satisfied("other", kNow + Expectations::kTimeout));
  CHECK(e.Lapses("other") == kNow + Expectations::kTimeout);
  CHECK_FALSE(e.Lapses("rs").has_value());
  e.Forget("other");
  CHECK(e.pending() == 0);
  CHECK_FALSE(e.Observe("pods/c", true).has_value());

  // A creation that got no answer is met by the next new pod of its owner.
  e.ExpectUnnamedCreate("rs", kNow);
  e.ExpectUnnamedCreate("rs", kNow + SimDuration(10));
  CHECK_FALSE(e.Satisfied("rs", kNow));
  CHECK(e.Lapses("rs") == kNow + Expectations::kTimeout);
  CHECK_FALSE(e.ObserveNew("other"));
  CHECK(e.ObserveNew("rs"));
  CHECK_FALSE(e.Satisfied("rs", kNow));
  CHECK(e.ObserveNew("rs"));
  CHECK(e.Satisfied("rs", kNow));
  CHECK_FALSE(e.ObserveNew("rs"));
}

TEST_CASE("the work queue: each key once, the earliest time, back-off on failures") {
  WorkQueue q;
  q.Add("b", kNow + SimDuration(10));
  q.Add("a", kNow + SimDuration(20));
  q.Add("a", kNow + SimDuration(5));   // brought forward
  q.Add("b", kNow + SimDuration(50));  // not put back
  CHECK(q.NextDue() == kNow + SimDuration(5));
  CHECK(q.PopDue(kNow).empty());
  CHECK(q.PopDue(kNow + SimDuration(10)) == std::vector<std::string>{"a", "b"});
  CHECK(q.empty());
  // 5 ms, doubled on each failure, until forgotten; at most 1000 s.
  for (int64_t delay : {5, 10, 20, 40}) {
    q.AddRateLimited("a", kNow);
    CHECK(q.NextDue() == kNow + SimDuration(delay));
    CHECK(q.PopDue(kNow + SimDuration(delay)) == std::vector<std::string>{"a"});
  }
  CHECK(q.failures("a") == 4);
  q.Forget("a");
  q.AddRateLimited("a", kNow);
  CHECK(q.NextDue() == kNow + SimDuration(5));
  for (int i = 0; i < 40; ++i) q.AddRateLimited("b", kNow);
  q.PopDue(kNow + SimDuration(5));
  q.Forget("a");
  q.AddRateLimited("b", kNow);
  CHECK(q.NextDue() == kNow + SimDuration(1'000'000));
}

}  // namespace
}  // namespace podflow::controllers
