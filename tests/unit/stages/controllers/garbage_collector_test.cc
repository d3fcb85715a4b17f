// The garbage collector's logic: what it reads of an object, the graph of
// owners and dependents and what each change asks it to look at, and the
// fate of a dependent whose owners are gone or going.
#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"
#include "stages/controllers/garbage_collector.h"
#include "stages/controllers/owner_refs.h"

namespace podflow::controllers {
namespace {

using Action = GcDecision::Action;
using List = std::vector<std::string>;

const std::string kSetKey = "/registry/replicasets/default/web-5d";
const std::string kDeployKey = "/registry/deployments/default/web";

GcObject Object(const char* kind, std::string name, std::string uid, std::vector<OwnerLink> owners = {},
                std::vector<std::string> finalizers = {}, bool deleting = false) {
  GcObject o;
  o.kind = &model::Kind(kind);
  o.namespace_ = o.kind->namespaced ? "default" : "";
  o.name = std::move(name);
  o.uid = std::move(uid);
  o.revision = 5;
  o.owners = std::move(owners);
  o.finalizers = std::move(finalizers);
  o.deleting = deleting;
  return o;
}

OwnerLink SetLink(bool block = true) { return OwnerLink{"apps/v1", "ReplicaSet", "web-5d", "rs-1", block}; }
OwnerLink DeployLink() { return OwnerLink{"apps/v1", "Deployment", "web", "d-1", true}; }

std::string PodKey(const std::string& name) { return "/registry/pods/default/" + name; }

TEST_CASE("The collector reads an object's owners, finalizers and deletion from any kind") {
  Result<std::vector<model::Decoded>> docs = model::DecodeManifests(R"(apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5d
  uid: rs-1
  deletionTimestamp: "2026-11-21T14:00:00Z"
  finalizers: [foregroundDeletion]
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: web, uid: d-1, controller: true, blockOwnerDeletion: true}
  - {apiVersion: v1, kind: ConfigMap, name: cfg, uid: c-1}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
)");
  REQUIRE(docs.ok());
  REQUIRE((*docs)[0].status.ok());
  std::optional<GcObject> read = ReadGcObject(model::Kind("ReplicaSet"), (*docs)[0].object.bytes, 42);
  REQUIRE(read.has_value());
  CHECK(read->name == "web-5d");
  CHECK(read->uid == "rs-1");
  CHECK(read->revision == 42);
  REQUIRE(read->owners.size() == 2);
  CHECK(read->owners[0].kind == "Deployment");
  CHECK(read->owners[0].block_owner_deletion);
  CHECK_FALSE(read->owners[1].block_owner_deletion);
  CHECK(read->DeletingDependents());
  CHECK_FALSE(read->Orphaning());
  // Bytes of another kind are refused.
  CHECK_FALSE(ReadGcObject(model::Kind("Pod"), "not a flatbuffer", 1).has_value());
}

TEST_CASE("A dependent is kept while an owner is left, and deleted as its finalizers ask once none is") {
  using S = OwnerState;
  const GcObject orphan = Object("Pod", "a", "p-1");
  CHECK(DecideDependent(orphan, {}, false).action == Action::kKeep);

  GcObject pod = Object("Pod", "a", "p-1", {SetLink(), OwnerLink{"v1", "ConfigMap", "cfg", "c-1", false}});
  CHECK(DecideDependent(pod, {S::kSolid, S::kSolid}, false).action == Action::kKeep);
  // One owner left: the references to the gone one and to one waiting
  // for its dependents are dropped instead.
  GcDecision d = DecideDependent(pod, {S::kDangling, S::kSolid}, false);
  CHECK(d.action == Action::kRemoveOwners);
  CHECK(d.owner_uids == List{"rs-1"});
  d = DecideDependent(pod, {S::kSolid, S::kWaiting}, false);
  CHECK(d.action == Action::kRemoveOwners);
  CHECK(d.owner_uids == List{"c-1"});
  // None left: deleted, in the background unless it asks otherwise.
  d = DecideDependent(pod, {S::kDangling, S::kDangling}, false);
  CHECK(d.action == Action::kDelete);
  CHECK(d.propagation == "Background");
  pod.finalizers = {"orphan"};
  CHECK(DecideDependent(pod, {S::kDangling, S::kDangling}, false).propagation == "Orphan");
  pod.finalizers = {"foregroundDeletion"};
  CHECK(DecideDependent(pod, {S::kDangling, S::kDangling}, false).propagation == "Foreground");
  pod.finalizers.clear();
  // An owner waiting in the foreground: a dependent with dependents of its
  // own goes in the foreground too, so that the owner waits for them all.
  CHECK(DecideDependent(pod, {S::kWaiting, S::kDangling}, true).propagation == "Foreground");
  CHECK(DecideDependent(pod, {S::kWaiting, S::kDangling}, false).propagation == "Background");
  // A reference that cannot resolve leaves it alone.
  CHECK(DecideDependent(pod, {S::kUnresolvable, S::kDangling}, false).action == Action::kKeep);
}

TEST_CASE("The graph looks again at a dependent whose owner is unknown, and at the dependents of one that goes") {
  OwnerGraph graph;
  // Owner first, as the log orders them: nothing to look at.
  CHECK(graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1")).attempt.empty());
  OwnerGraph::Work work = graph.Upsert(PodKey("web-5d-a"), Object("Pod", "web-5d-a", "p-a", {SetLink()}));
  CHECK(work.attempt.empty());
  CHECK(graph.Dependents("rs-1") == List{PodKey("web-5d-a")});
  CHECK(graph.Classify(*graph.Find(PodKey("web-5d-a")), SetLink()) == OwnerState::kSolid);
  // An owner not (yet) seen: only the API can tell.
  const OwnerLink unknown{"v1", "ConfigMap", "cfg", "c-9", false};
  work = graph.Upsert(PodKey("b"), Object("Pod", "b", "p-b", {unknown}));
  CHECK(work.attempt == List{PodKey("b")});
  CHECK_FALSE(graph.Classify(*graph.Find(PodKey("b")), unknown).has_value());
  // The name taken by another object (another uid): not this owner either.
  graph.Upsert("/registry/configmaps/default/cfg", Object("ConfigMap", "cfg", "c-10"));
  CHECK_FALSE(graph.Classify(*graph.Find(PodKey("b")), unknown).has_value());
  // The owner goes: its dependents are looked at.
  work = graph.Remove(kSetKey);
  CHECK(work.attempt == List{PodKey("web-5d-a")});
  CHECK(graph.FindUid("rs-1") == nullptr);
  // A kind podflow does not serve, and a namespaced owner of a
  // cluster-scoped object, never resolve.
  const GcObject pv = Object("PersistentVolume", "pv-1", "pv-1");
  CHECK(graph.Classify(pv, OwnerLink{"v1", "PersistentVolumeClaim", "data", "c-1", false}) ==
        OwnerState::kUnresolvable);
  CHECK(graph.Classify(pv, OwnerLink{"example.com/v1", "Widget", "w", "w-1", false}) == OwnerState::kUnresolvable);
}

TEST_CASE("Deleting in the foreground: the owner and its dependents are looked at; blocking ones hold it") {
  OwnerGraph graph;
  graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1"));
  graph.Upsert(PodKey("a"), Object("Pod", "a", "p-a", {SetLink(true)}));
  graph.Upsert(PodKey("b"), Object("Pod", "b", "p-b", {SetLink(false)}));
  CHECK(graph.BlockingDependents("rs-1") == List{PodKey("a")});
  CHECK(graph.HasDependents("rs-1"));
  CHECK(graph.LinksTo("ReplicaSet") == 2);
  CHECK(graph.Waiting() == 0);

  OwnerGraph::Work work =
      graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1", {}, {"foregroundDeletion"}, true));
  std::sort(work.attempt.begin(), work.attempt.end());
  CHECK(work.attempt == List{PodKey("a"), PodKey("b"), kSetKey});
  CHECK(work.orphan.empty());
  CHECK(graph.Waiting() == 1);
  CHECK(graph.Classify(*graph.Find(PodKey("a")), SetLink()) == OwnerState::kWaiting);
  // The same state seen again (a re-list) asks nothing of the owner.
  work = graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1", {}, {"foregroundDeletion"}, true));
  CHECK(work.attempt.empty());
  // A dependent that stops blocking, or goes, brings the owner back.
  work = graph.Upsert(PodKey("a"), Object("Pod", "a", "p-a", {SetLink(false)}));
  CHECK(std::count(work.attempt.begin(), work.attempt.end(), kSetKey) == 1);
  CHECK(graph.BlockingDependents("rs-1").empty());
  work = graph.Remove(PodKey("b"));
  CHECK(work.attempt == List{kSetKey});
  CHECK(graph.Dependents("rs-1") == List{PodKey("a")});
  // Released (its reference removed): no longer a dependent.
  graph.Upsert(PodKey("a"), Object("Pod", "a", "p-a"));
  CHECK_FALSE(graph.HasDependents("rs-1"));
  CHECK(graph.LinksTo("ReplicaSet") == 0);
}

TEST_CASE("A kind no longer followed is forgotten, not taken as gone") {
  OwnerGraph graph;
  graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1", {}, {"foregroundDeletion"}, true));
  graph.Upsert(PodKey("a"), Object("Pod", "a", "p-a", {SetLink()}));
  graph.Forget(PodKey("a"));
  CHECK(graph.Find(PodKey("a")) == nullptr);
  CHECK_FALSE(graph.HasDependents("rs-1"));
  CHECK(graph.LinksTo("ReplicaSet") == 0);
  graph.Forget(kSetKey);
  CHECK(graph.Waiting() == 0);
  CHECK(graph.size() == 0);
}

TEST_CASE("Deleting with the orphan finalizer asks for the owner's dependents to be released") {
  OwnerGraph graph;
  graph.Upsert(kDeployKey, Object("Deployment", "web", "d-1"));
  graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1", {DeployLink()}));
  OwnerGraph::Work work = graph.Upsert(kDeployKey, Object("Deployment", "web", "d-1", {}, {"orphan"}, true));
  CHECK(work.orphan == List{kDeployKey});
  CHECK(work.attempt.empty());
  CHECK(graph.Find(kDeployKey)->Orphaning());
  // An orphan finalizer without a deletion is only a request for later.
  OwnerGraph other;
  CHECK(other.Upsert(kDeployKey, Object("Deployment", "web", "d-1", {}, {"orphan"}, false)).orphan.empty());
}

TEST_CASE("An object replaced at its key by another uid is the old one gone") {
  OwnerGraph graph;
  graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-1"));
  graph.Upsert(PodKey("a"), Object("Pod", "a", "p-a", {SetLink()}));
  OwnerGraph::Work work = graph.Upsert(kSetKey, Object("ReplicaSet", "web-5d", "rs-2"));
  CHECK(work.attempt == List{PodKey("a")});
  CHECK(graph.FindUid("rs-1") == nullptr);
  CHECK(graph.FindUid("rs-2") != nullptr);
  CHECK_FALSE(graph.Classify(*graph.Find(PodKey("a")), SetLink()).has_value());
}

TEST_CASE("The collector's patches: references dropped by uid, a finalizer removed at a revision") {
  CHECK(ReleasePatch(List{"rs-1", "c-1"}, "p-a") ==
        R"({"metadata":{"ownerReferences":[{"$patch":"delete","uid":"rs-1"},{"$patch":"delete","uid":"c-1"}],)"
        R"("uid":"p-a"}})");
  CHECK(RemoveFinalizerPatch({"example.com/hold", "foregroundDeletion"}, "foregroundDeletion", 17) ==
        R"({"metadata":{"resourceVersion":"17","finalizers":["example.com/hold"]}})");
  CHECK(RemoveFinalizerPatch({"orphan"}, "orphan", 3) == R"({"metadata":{"resourceVersion":"3","finalizers":null}})");
  // In a cycle of foreground deletions an object stops blocking its owners.
  const GcObject pod = Object("Pod", "a", "p-a", {SetLink(true), OwnerLink{"v1", "ConfigMap", "cfg", "c-1", false}});
  CHECK(UnblockOwnersPatch(pod) ==
        R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d","uid":"rs-1",)"
        R"("blockOwnerDeletion":false}],"uid":"p-a"}})");
}

TEST_CASE("An object that names itself as its owner does not hold up its own foreground deletion") {
  OwnerGraph graph;
  const OwnerLink self{"v1", "ConfigMap", "cfg", "c-1", true};
  graph.Upsert("/registry/configmaps/default/cfg",
               Object("ConfigMap", "cfg", "c-1", {self}, {"foregroundDeletion"}, true));
  CHECK(graph.HasDependents("c-1"));
  CHECK(graph.BlockingDependents("c-1").empty());
}

}  // namespace
}  // namespace podflow::controllers
