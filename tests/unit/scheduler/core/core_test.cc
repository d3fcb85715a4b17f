// SchedulerCore on plain values: the informers' deliveries in, decisions and
// queue moves out. No bus, no log.
#include "scheduler/scheduler.h"

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"
#include "stored.h"

namespace podflow::scheduler {
namespace {

using Clock = SchedulerCore::Clock;
using std::chrono::seconds;

using testing::Stored;
using testing::t0;

StoredObject Node(const std::string& name, const std::string& cpu, int64_t revision) {
  return Stored("apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"
                "status: {allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}}\n",
                revision);
}

StoredObject Pod(const std::string& name, const std::string& cpu, int64_t revision, const std::string& node = "") {
  return Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, uid: uid-" + name +
                    "}\nspec:\n" + (node.empty() ? "" : "  nodeName: " + node + "\n") +
                    "  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n",
                revision);
}

struct Fixture {
  Fixture()
      : registry(plugins::NewInTreeRegistry().value()),
        profile(Profile::Build(registry, DefaultProfileConfig()).value()),
        core(profile) {}
  Registry registry;
  Profile profile;
  SchedulerCore core;
};

TEST_CASE("a pending pod is decided, assumed on its node, and confirmed when bound", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertNode(Node("small", "1", 2), t0);
  f.core.UpsertNode(Node("big", "8", 3), t0);
  f.core.UpsertPod(Pod("web", "2", 10), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->key == "/registry/pods/default/web");
  CHECK((*out)->mod_revision == Revision(10));
  CHECK((*out)->decision.node == "big");
  // Assumed: counted on "big" before binding writes anything.
  CHECK(f.core.cache().FindNode("big")->requested().milli_cpu == 2000);
  CHECK_FALSE(f.core.Next(t0).has_value());
  // Binding's write comes back: still counted once, nothing queued.
  f.core.UpsertPod(Pod("web", "2", 11, "big"), t0);
  CHECK(f.core.cache().FindNode("big")->requested().milli_cpu == 2000);
  CHECK_FALSE(f.core.queue().Contains("/registry/pods/default/web"));
}

TEST_CASE("a pod that fits nowhere waits until a node that fits arrives", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertNode(Node("a", "1", 2), t0);
  f.core.UpsertNode(Node("b", "2", 3), t0);
  f.core.UpsertPod(Pod("huge", "4", 10), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK_FALSE((*out)->decision.scheduled());
  CHECK((*out)->decision.message.rfind("0/2 nodes are available: 2 Insufficient cpu.", 0) == 0);
  // The stage's own FailedScheduling write coming back changes nothing.
  f.core.OwnWrite("/registry/pods/default/huge", Revision(12));
  f.core.UpsertPod(Pod("huge", "4", 12), t0);
  CHECK_FALSE(f.core.Next(t0 + seconds(2)).has_value());
  // A big node: the pod moves, and is tried once its 1 s backoff is over.
  f.core.UpsertNode(Node("c", "8", 13), t0 + seconds(2));
  out = f.core.Next(t0 + seconds(2));
  REQUIRE(out.has_value());
  CHECK((*out)->decision.node == "c");
}

TEST_CASE("nodes published before a pod are never lost to its cycle, whatever order the streams bring them",
          "[scheduling][core]") {
  // Three nodes, then a pod that fits them, written in that order; the pods
  // stream runs ahead of the nodes stream, so the cycle runs without them.
  Fixture f;
  f.core.UpsertPod(Pod("web", "1", 5), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK_FALSE((*out)->decision.scheduled());
  CHECK((*out)->decision.message == "no nodes available to schedule pods");
  // The nodes arrive: they were in flight during that cycle, so the pod is
  // tried again at once, not after its backoff.
  f.core.UpsertNode(Node("a", "2", 2), t0);
  f.core.UpsertNode(Node("b", "2", 3), t0);
  f.core.UpsertNode(Node("c", "2", 4), t0);
  out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->decision.scheduled());
}

TEST_CASE("a node delivered again unchanged (a re-list) does not cut the pod's backoff", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertNode(Node("small", "1", 2), t0);
  f.core.UpsertPod(Pod("web", "2", 5), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  CHECK_FALSE((*out)->decision.scheduled());
  f.core.UpsertNode(Node("small", "1", 2), t0);  // the same revision: nothing new
  CHECK_FALSE(f.core.Next(t0).has_value());
  // A change of that node older than the cycle's view was in flight.
  f.core.UpsertNode(Node("small", "4", 3), t0);
  out = f.core.Next(t0);
  REQUIRE(out.has_value());
  CHECK((*out)->decision.node == "small");
}

TEST_CASE("a node that arrives after the failed cycle waits out the pod's backoff", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertPod(Pod("web", "1", 5), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  CHECK_FALSE((*out)->decision.scheduled());
  f.core.UpsertNode(Node("a", "2", 6), t0);
  CHECK_FALSE(f.core.Next(t0).has_value());
  out = f.core.Next(t0 + seconds(1));
  REQUIRE(out.has_value());
  CHECK((*out)->decision.node == "a");
}

TEST_CASE("binding lost its compare-and-swap: the newer revision is decided again", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertNode(Node("a", "4", 2), t0);
  f.core.UpsertPod(Pod("p", "1", 10), t0);
  REQUIRE(f.core.Next(t0)->ok());
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 1000);
  // The same revision again (a re-list): still assumed, not re-queued.
  f.core.UpsertPod(Pod("p", "1", 10), t0);
  CHECK_FALSE(f.core.Next(t0).has_value());
  // Someone changed the pod before binding wrote: unassumed and decided anew.
  f.core.UpsertPod(Pod("p", "1", 15), t0);
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 0);
  auto again = f.core.Next(t0);
  REQUIRE(again.has_value());
  CHECK((*again)->mod_revision == Revision(15));
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 1000);
}

TEST_CASE("a lost decision expires and the pod is decided again", "[scheduling][core]") {
  Fixture f;
  f.core.UpsertNode(Node("a", "4", 2), t0);
  f.core.UpsertPod(Pod("p", "1", 10), t0);
  REQUIRE(f.core.Next(t0)->ok());
  f.core.ExpireAssumed(t0 + SchedulerCore::kAssumeTimeout - seconds(1));
  CHECK_FALSE(f.core.Next(t0 + SchedulerCore::kAssumeTimeout).has_value());
  f.core.ExpireAssumed(t0 + SchedulerCore::kAssumeTimeout);
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 0);
  CHECK(f.core.Next(t0 + SchedulerCore::kAssumeTimeout).has_value());
}

TEST_CASE("pods published with nodeName are counted, never queued; deleting one makes room",
          "[scheduling][core]") {
  Fixture f;
  // Bound before its node is known: counted once the node arrives.
  f.core.UpsertPod(Pod("pinned", "3", 5, "a"), t0);
  f.core.UpsertNode(Node("a", "4", 6), t0);
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 3000);
  CHECK_FALSE(f.core.Next(t0).has_value());

  f.core.UpsertPod(Pod("second", "2", 10), t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  CHECK_FALSE((*out)->decision.scheduled());
  f.core.RemovePod("/registry/pods/default/pinned", t0 + seconds(1));
  CHECK(f.core.cache().FindNode("a")->requested().milli_cpu == 0);
  out = f.core.Next(t0 + seconds(1));
  REQUIRE(out.has_value());
  CHECK((*out)->decision.node == "a");
}

TEST_CASE("volumes and claims feed the cache; binding a claim lets its pod schedule", "[scheduling][core][volumes]") {
  Fixture f;
  for (const char* name : {"a", "b"}) {
    f.core.UpsertNode(Stored(std::string("apiVersion: v1\nkind: Node\nmetadata: {name: ") + name +
                                 ", labels: {kubernetes.io/hostname: " + name +
                                 "}}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n",
                             2),
                      t0);
  }
  const std::string claim = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
                            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}";
  f.core.UpsertPersistentVolumeClaim(Stored(claim + "}\n", 3), t0);
  f.core.UpsertPod(Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: default, uid: uid-db}\n"
                          "spec:\n  containers: [{name: c, image: postgres}]\n"
                          "  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n",
                          10),
                   t0);
  auto out = f.core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK_FALSE((*out)->decision.scheduled());
  CHECK((*out)->decision.message.rfind("0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.", 0) == 0);

  // A local volume on b, and the claim bound to it: the pod moves and lands on b.
  f.core.UpsertPersistentVolume(
      Stored("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: local-b}\n"
             "spec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  local: {path: /mnt/disk}\n"
             "  claimRef: {namespace: default, name: data}\n"
             "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
             "[{key: kubernetes.io/hostname, operator: In, values: [b]}]}]}}\n",
             11),
      t0 + seconds(2));
  f.core.UpsertPersistentVolumeClaim(Stored(claim + ", volumeName: local-b}\n", 12), t0 + seconds(2));
  CHECK(f.core.cache().volumes().NumPersistentVolumes() == 1);
  out = f.core.Next(t0 + seconds(2));
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->decision.node == "b");

  f.core.RemovePersistentVolume("/registry/persistentvolumes/local-b");
  f.core.RemovePersistentVolumeClaim("/registry/persistentvolumeclaims/default/data");
  CHECK(f.core.cache().volumes().NumPersistentVolumes() == 0);
  CHECK(f.core.cache().volumes().NumPersistentVolumeClaims() == 0);
}

}  // namespace
}  // namespace podflow::scheduler

namespace podflow::scheduler {
namespace {

StoredObject PodFor(const std::string& name, const std::string& scheduler, int64_t revision) {
  return Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, uid: uid-" + name +
                    "}\nspec:\n  schedulerName: " + scheduler +
                    "\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]\n",
                revision);
}

TEST_CASE("each pod is decided by the profile of its schedulerName; others' pods are left alone",
          "[scheduling][core][profiles]") {
  Registry registry = plugins::NewInTreeRegistry().value();
  // The second profile packs: MostAllocated puts the pod on the fuller node.
  auto config = ParseSchedulerConfig(YAML::Load(R"(
profiles:
  - schedulerName: default-scheduler
  - schedulerName: packer
    plugins:
      score:
        disabled: [{name: '*'}]
        enabled: [{name: NodeResourcesFit, weight: 1}]
    pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}
)"),
                                                registry);
  REQUIRE(config.ok());
  auto profiles = BuildProfiles(registry, *config);
  REQUIRE(profiles.ok());
  SchedulerCore core(*profiles);
  core.UpsertNode(Node("empty", "4", 2), t0);
  core.UpsertNode(Node("busy", "4", 3), t0);
  core.UpsertPod(Pod("already", "2", 4, "busy"), t0);

  core.UpsertPod(PodFor("spread", "default-scheduler", 10), t0);
  auto out = core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->profile == &(*profiles)[0]);
  CHECK((*out)->decision.node == "empty");  // LeastAllocated

  core.UpsertPod(PodFor("packed", "packer", 11), t0);
  out = core.Next(t0);
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->profile == &(*profiles)[1]);
  CHECK((*out)->decision.node == "busy");  // MostAllocated

  core.UpsertPod(PodFor("foreign", "someone-else", 12), t0);
  CHECK_FALSE(core.Next(t0).has_value());
  CHECK_FALSE(core.queue().Contains("/registry/pods/default/foreign"));
}

}  // namespace
}  // namespace podflow::scheduler

namespace podflow::scheduler {
namespace {

TEST_CASE("services feed the cache; default spreading keeps a Service's pods apart", "[scheduling][core][spread]") {
  Fixture f;
  auto node = [](const std::string& name, const std::string& cpu, int64_t revision) {
    return Stored("apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: {kubernetes.io/hostname: " +
                      name + "}}\nstatus: {allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}}\n",
                  revision);
  };
  auto web = [](const std::string& name, int64_t revision, const std::string& bound = "") {
    return Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, uid: uid-" + name +
                      ", labels: {app: web}}\nspec:\n" + (bound.empty() ? "" : "  nodeName: " + bound + "\n") +
                      "  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]\n",
                  revision);
  };
  // Resources alone prefer the big node.
  f.core.UpsertNode(node("big", "8", 2), t0);
  f.core.UpsertNode(node("small", "2", 3), t0);
  f.core.UpsertPod(web("w1", 4, "big"), t0);
  StoredObject service = Stored(
      "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n"
      "spec: {selector: {app: web}, ports: [{port: 80}]}\n",
      5);
  f.core.UpsertService(service);
  REQUIRE(f.core.cache().Services("default").size() == 1);
  CHECK(f.core.cache().Services("default")[0].selector == Labels{{"app", "web"}});

  // The Service groups w2 with w1: hostname spreading outweighs resources.
  f.core.UpsertPod(web("w2", 6), t0);
  auto first = f.core.Next(t0);
  REQUIRE(first.has_value());
  REQUIRE(first->ok());
  CHECK((*first)->decision.node == "small");

  // Without the Service there is no group: w3 goes where resources say.
  f.core.RemoveService(service.key);
  CHECK(f.core.cache().Services("default").empty());
  f.core.UpsertPod(web("w3", 7), t0);
  auto second = f.core.Next(t0);
  REQUIRE(second.has_value());
  REQUIRE(second->ok());
  CHECK((*second)->decision.node == "big");
}

TEST_CASE("namespaces feed the cache with their labels", "[scheduling][core][inter-pod-affinity]") {
  Fixture f;
  StoredObject prod = Stored("apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}\n", 5);
  bool fed = false;
  for (const auto& feed : f.core.Feeds()) {
    if (feed.prefix != "/registry/namespaces/") continue;
    fed = true;
    feed.upsert(prod, t0);
    const Labels* labels = f.core.cache().NamespaceLabels("prod");
    REQUIRE(labels != nullptr);
    CHECK(*labels == Labels{{"env", "prod"}});
    feed.remove(prod.key, t0);
    CHECK(f.core.cache().NamespaceLabels("prod") == nullptr);
  }
  CHECK(fed);
}

}  // namespace
}  // namespace podflow::scheduler

namespace podflow::scheduler {
namespace {

TEST_CASE("a pod placed elsewhere moves pods waiting on affinity, not pods waiting for room",
          "[scheduling][core][queue]") {
  Registry registry = plugins::NewInTreeRegistry().value();
  Profile profile = Profile::Build(registry, DefaultProfileConfig()).value();
  SchedulerCore core(profile);
  core.UpsertNode(Stored("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {kubernetes.io/hostname: a}}\n"
                         "status: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"110\"}}\n",
                         2),
                  t0);
  core.UpsertNode(Stored("apiVersion: v1\nkind: Node\nmetadata: {name: b, labels: {kubernetes.io/hostname: b}}\n"
                         "status: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"110\"}}\n",
                         3),
                  t0);
  // Wants to sit beside an app=cache pod; there is none yet (and it is not one).
  core.UpsertPod(Stored(R"(apiVersion: v1
kind: Pod
metadata: {name: follower, namespace: default, uid: uid-follower, labels: {app: web}}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: cache}}
        topologyKey: kubernetes.io/hostname
  containers: [{name: c, image: nginx}]
)",
                        10),
                 t0);
  core.UpsertPod(Pod("huge", "8", 11), t0);
  for (int i = 0; i < 2; ++i) {
    auto out = core.Next(t0);
    REQUIRE(out.has_value());
    REQUIRE(out->ok());
    CHECK_FALSE((*out)->decision.scheduled());
  }
  REQUIRE(core.queue().unschedulable_size() == 2);

  // The cache pod arrives bound to b: only the follower may now fit.
  core.UpsertPod(Stored("apiVersion: v1\nkind: Pod\nmetadata: {name: cache, namespace: default, uid: uid-cache, "
                        "labels: {app: cache}}\nspec:\n  nodeName: b\n  containers: [{name: c, image: redis}]\n",
                        12),
                 t0);
  CHECK(core.queue().unschedulable_size() == 1);
  auto out = core.Next(t0 + seconds(2));  // after its 1 s backoff
  REQUIRE(out.has_value());
  REQUIRE(out->ok());
  CHECK((*out)->key == "/registry/pods/default/follower");
  CHECK((*out)->decision.node == "b");
  CHECK_FALSE(core.Next(t0 + seconds(2)).has_value());  // "huge" still waits
  CHECK(core.queue().unschedulable_size() == 1);
}

}  // namespace
}  // namespace podflow::scheduler
