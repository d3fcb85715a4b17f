// Preemption through SchedulerCore: a high-priority pod that fits nowhere is
// nominated, its victims are named for the stage to evict, the room they
// leave is held for it, and it schedules there once they are gone.
#include <catch2/catch.hpp>

#include "scheduler/scheduler.h"
#include "stored.h"

namespace podflow::scheduler {
namespace {

using Clock = SchedulerCore::Clock;
using std::chrono::seconds;

using testing::Stored;
using testing::t0;

StoredObject Node(const std::string& name, int64_t revision) {
  return Stored("apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"
                "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n",
                revision);
}

StoredObject Pod(const std::string& name, int32_t priority, const std::string& cpu, int64_t revision,
             const std::string& node = "", const std::string& nominated = "") {
  return Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, uid: uid-" + name +
                    "}\nspec:\n  priority: " + std::to_string(priority) + "\n" +
                    (node.empty() ? "" : "  nodeName: " + node + "\n") +
                    "  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n" +
                    (nominated.empty() ? "" : "status: {nominatedNodeName: " + nominated + "}\n"),
                revision);
}

struct Fixture {
  Fixture()
      : registry(plugins::NewInTreeRegistry().value()),
        profile(Profile::Build(registry, DefaultProfileConfig()).value()),
        core(profile) {
    core.UpsertNode(Node("a", 2), t0);
    core.UpsertNode(Node("b", 3), t0);
    core.UpsertPod(Pod("low-a", 1, "3", 4, "a"), t0);
    core.UpsertPod(Pod("low-b", 5, "3", 5, "b"), t0);
  }
  Registry registry;
  Profile profile;
  SchedulerCore core;
};

TEST_CASE("a high-priority pod preempts, holds the room and schedules there", "[scheduling][preemption]") {
  Fixture f;
  f.core.UpsertPod(Pod("vip", 100, "2", 10), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  const SchedulerCore::Outcome& o = **out;
  INFO(o.decision.Explain());
  CHECK_FALSE(o.decision.scheduled());
  CHECK(o.decision.nominated_node == "a");  // the lowest-priority victim
  CHECK(o.decision.message == "0/2 nodes are available: 2 Insufficient cpu.");
  REQUIRE(o.victims.size() == 1);
  CHECK(o.victims[0].key == "/registry/pods/default/low-a");
  CHECK(o.victims[0].uid == "uid-low-a");
  CHECK(o.victims[0].mod_revision == Revision(4));
  CHECK(f.core.cache().NominatedNodeOf("uid-vip") == "a");

  // The stage deleted the victim and tells the core at once.
  f.core.RemovePod(o.victims[0].key, t0);
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 0);

  // A lower-priority pod that would fit in the freed room does not get it.
  f.core.UpsertPod(Pod("thief", 1, "3", 12), t0);
  auto thief = f.core.Next(t0);
  REQUIRE(thief.has_value());
  REQUIRE(thief->ok());
  CHECK((*thief)->key == "/registry/pods/default/thief");
  CHECK_FALSE((*thief)->decision.scheduled());
  CHECK((*thief)->decision.nominated_node.empty());

  // The stage's write of status.nominatedNodeName comes back (its own write).
  f.core.OwnWrite("/registry/pods/default/vip", Revision(11));
  f.core.UpsertPod(Pod("vip", 100, "2", 11, "", "a"), t0);

  // After its backoff the preemptor is tried again and lands on its node.
  auto again = f.core.Next(t0 + seconds(2));
  REQUIRE(again.has_value());
  REQUIRE(again->ok());
  CHECK((*again)->key == "/registry/pods/default/vip");
  CHECK((*again)->decision.node == "a");
  CHECK(f.core.cache().NominatedNodeOf("uid-vip").empty());  // assumed: no longer nominated
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 2000);
}

TEST_CASE("a lower-priority pod nominated to the chosen node loses its nomination", "[scheduling][preemption]") {
  Fixture f;
  // mid was nominated to a earlier (its stored status says so) and waits.
  f.core.UpsertPod(Pod("mid", 3, "1", 10, "", "a"), t0);
  REQUIRE(f.core.cache().NominatedNodeOf("uid-mid") == "a");
  f.core.UpsertPod(Pod("vip", 100, "2", 11), t0);
  // vip comes first (priority); a needs low-a gone, and mid's room is now vip's.
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  const SchedulerCore::Outcome& o = **out;
  INFO(o.decision.Explain());
  CHECK(o.key == "/registry/pods/default/vip");
  CHECK(o.decision.nominated_node == "a");
  CHECK(o.decision.cleared_nominations == std::vector<std::string>{"uid-mid"});
  REQUIRE(o.cleared_nominations.size() == 1);
  CHECK(o.cleared_nominations[0].key == "/registry/pods/default/mid");
  CHECK(o.cleared_nominations[0].mod_revision == Revision(10));
  CHECK(f.core.cache().NominatedNodeOf("uid-mid").empty());
  CHECK(f.core.cache().NominatedNodeOf("uid-vip") == "a");

  // A stored status of mid still naming a (written before the clear) does
  // not bring the nomination back; once the store shows it cleared, a new
  // nomination counts again.
  f.core.UpsertPod(Pod("mid", 3, "1", 12, "", "a"), t0);
  CHECK(f.core.cache().NominatedNodeOf("uid-mid").empty());
  f.core.UpsertPod(Pod("mid", 3, "1", 13), t0);
  CHECK(f.core.cache().NominatedNodeOf("uid-mid").empty());
  f.core.UpsertPod(Pod("mid", 3, "1", 14, "", "a"), t0);
  CHECK(f.core.cache().NominatedNodeOf("uid-mid") == "a");
}

TEST_CASE("a stored nominatedNodeName holds the room after a restart", "[scheduling][preemption]") {
  Fixture f;
  f.core.RemovePod("/registry/pods/default/low-a", t0);
  f.core.UpsertPod(Pod("vip", 100, "2", 10, "", "a"), t0);
  CHECK(f.core.cache().NominatedNodeOf("uid-vip") == "a");
  // Deleting the nominated pod gives the room back.
  f.core.RemovePod("/registry/pods/default/vip", t0);
  CHECK(f.core.cache().NominatedPods("a").empty());
}

TEST_CASE("a nominated pod that preemption can no longer help loses its nomination", "[scheduling][preemption]") {
  Fixture f;
  // Nominated to a earlier, but nothing there (or anywhere) has a lower priority now.
  f.core.UpsertPod(Pod("late", 1, "2", 10, "", "a"), t0);
  CHECK(f.core.cache().NominatedNodeOf("uid-late") == "a");
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK_FALSE((*out)->decision.scheduled());
  CHECK((*out)->decision.clear_nomination);
  CHECK(f.core.cache().NominatedNodeOf("uid-late").empty());
}

TEST_CASE("a pod that may not preempt gets no nomination", "[scheduling][preemption]") {
  Fixture f;
  auto never = Stored(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: never, namespace: default, uid: uid-never}\n"
      "spec:\n  priority: 100\n  preemptionPolicy: Never\n"
      "  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"2\"}}}]\n",
      10);
  f.core.UpsertPod(never, t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->decision.nominated_node.empty());
  CHECK((*out)->victims.empty());
  CHECK((*out)->decision.message ==
        "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..");
}

}  // namespace
}  // namespace podflow::scheduler
