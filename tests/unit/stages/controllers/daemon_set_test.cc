#include "stages/controllers/daemon_set.h"

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"

namespace podflow::controllers {
namespace {

const SimTime kNow = FromUnixMillis(1'767'000'000'000);
const std::string kNew = "new-hash";
const std::string kOld = "old-hash";

// A pod of the DaemonSet on `node` from the template of `hash`, created
// `age` ago, Running and Ready (for an hour) unless told otherwise.
PodRecord Pod(std::string name, std::string node, const std::string& hash,
              SimDuration age = SimDuration(3'600'000), bool ready = true) {
  PodRecord pod;
  pod.name = pod.uid = std::move(name);
  pod.key = "/registry/pods/kube-system/" + pod.name;
  pod.namespace_ = "kube-system";
  pod.node = pod.target_node = std::move(node);
  pod.labels = {{kControllerRevisionHashLabel, hash}};
  pod.phase = api::PodPhase::Running;
  pod.created = kNow - age;
  pod.ready = ready;
  if (ready) pod.ready_at = kNow - SimDuration(3'600'000);
  return pod;
}

DaemonNode Node(std::string name, std::vector<const PodRecord*> pods, NodeFit fit = {true, true}) {
  DaemonNode node{std::move(name), true, fit, std::move(pods)};
  SortDaemonPods(node.pods);
  return node;
}

std::vector<std::string> Names(const std::vector<const PodRecord*>& pods) {
  std::vector<std::string> out;
  for (const PodRecord* pod : pods) out.push_back(pod->name);
  std::ranges::sort(out);
  return out;
}

scheduler::NodeInfo NodeInfo(std::string name, model::Labels labels = {},
                             std::vector<model::Taint> taints = {}) {
  scheduler::NodeInfo node;
  node.name = std::move(name);
  node.labels = std::move(labels);
  node.taints = std::move(taints);
  return node;
}

// The pod of spec `spec_json` (JSON), packed.
std::string PackedPod(const std::string& spec_json) {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec_json + "}";
  Result<std::vector<model::Decoded>> decoded = model::DecodeManifests(pod);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  REQUIRE((*decoded)[0].status.ok());
  return (*decoded)[0].object.bytes;
}

// The placement of a pod template spec written as JSON.
DaemonPlacement Placement(const std::string& spec_json) {
  const std::string bytes = PackedPod(spec_json);
  return DaemonPlacementOf(flatbuffers::GetRoot<api::Pod>(bytes.data())->spec());
}

model::Taint Taint(std::string key, api::TaintEffect effect) {
  model::Taint t;
  t.key = std::move(key);
  t.effect = effect;
  return t;
}

TEST_CASE(
    "where a DaemonSet's pod should run: nodeName, nodeSelector, required affinity, NoSchedule and "
    "NoExecute taints") {
  const DaemonPlacement any = Placement(R"({"containers":[{"name":"c","image":"i"}]})");
  CHECK(NodeShouldRunDaemonPod(any, NodeInfo("n1")).should_run);

  const DaemonPlacement named =
      Placement(R"({"nodeName":"n2","containers":[{"name":"c","image":"i"}]})");
  CHECK_FALSE(NodeShouldRunDaemonPod(named, NodeInfo("n1")).should_run);
  CHECK_FALSE(NodeShouldRunDaemonPod(named, NodeInfo("n1")).should_continue_running);
  CHECK(NodeShouldRunDaemonPod(named, NodeInfo("n2")).should_run);

  const DaemonPlacement ssd =
      Placement(R"({"nodeSelector":{"disktype":"ssd"},"containers":[{"name":"c","image":"i"}]})");
  CHECK_FALSE(NodeShouldRunDaemonPod(ssd, NodeInfo("n1")).should_continue_running);
  CHECK_FALSE(NodeShouldRunDaemonPod(ssd, NodeInfo("n1", {{"disktype", "hdd"}})).should_run);
  CHECK(NodeShouldRunDaemonPod(ssd, NodeInfo("n1", {{"disktype", "ssd"}})).should_run);

  const DaemonPlacement zone = Placement(
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
      R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}}},)"
      R"("containers":[{"name":"c","image":"i"}]})");
  CHECK(NodeShouldRunDaemonPod(zone, NodeInfo("n1", {{"zone", "b"}})).should_run);
  CHECK_FALSE(NodeShouldRunDaemonPod(zone, NodeInfo("n1", {{"zone", "c"}})).should_run);

  // A NoSchedule taint it does not tolerate: no new pod, but one there stays.
  const NodeFit tainted = NodeShouldRunDaemonPod(
      any, NodeInfo("n1", {}, {Taint("dedicated", api::TaintEffect::NoSchedule)}));
  CHECK_FALSE(tainted.should_run);
  CHECK(tainted.should_continue_running);
  // NoExecute: neither.
  const NodeFit evicting = NodeShouldRunDaemonPod(
      any, NodeInfo("n1", {}, {Taint("dedicated", api::TaintEffect::NoExecute)}));
  CHECK_FALSE(evicting.should_run);
  CHECK_FALSE(evicting.should_continue_running);
  // PreferNoSchedule does not count.
  CHECK(NodeShouldRunDaemonPod(
            any, NodeInfo("n1", {}, {Taint("dedicated", api::TaintEffect::PreferNoSchedule)}))
            .should_run);
  // Every DaemonSet pod tolerates a cordoned, not-ready or pressured node.
  for (const char* key :
       {"node.kubernetes.io/unschedulable", "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure"}) {
    CHECK(
        NodeShouldRunDaemonPod(any, NodeInfo("n1", {}, {Taint(key, api::TaintEffect::NoSchedule)}))
            .should_run);
  }
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    CHECK(NodeShouldRunDaemonPod(any, NodeInfo("n1", {}, {Taint(key, api::TaintEffect::NoExecute)}))
              .should_run);
  }
  // An unavailable network only with hostNetwork.
  const std::vector<model::Taint> no_network{
      Taint("node.kubernetes.io/network-unavailable", api::TaintEffect::NoSchedule)};
  CHECK_FALSE(NodeShouldRunDaemonPod(any, NodeInfo("n1", {}, no_network)).should_run);
  const DaemonPlacement host =
      Placement(R"({"hostNetwork":true,"containers":[{"name":"c","image":"i"}]})");
  CHECK(NodeShouldRunDaemonPod(host, NodeInfo("n1", {}, no_network)).should_run);
  // The template's own tolerations count.
  const DaemonPlacement control_plane = Placement(
      R"({"tolerations":[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists","effect":"NoSchedule"}],)"
      R"("containers":[{"name":"c","image":"i"}]})");
  CHECK(
      NodeShouldRunDaemonPod(control_plane, NodeInfo("cp", {},
                                                     {Taint("node-role.kubernetes.io/control-plane",
                                                            api::TaintEffect::NoSchedule)}))
          .should_run);
}

TEST_CASE(
    "a DaemonSet pod's tolerations: the template's, with the DaemonSet's added or put in place of "
    "the same one") {
  model::Toleration timed;
  timed.key = "node.kubernetes.io/not-ready";
  timed.op = api::TolerationOperator::Exists;
  timed.effect = api::TaintEffect::NoExecute;
  timed.toleration_seconds = 300;
  model::Toleration own;
  own.key = "dedicated";
  own.op = api::TolerationOperator::Equal;
  own.value = "logs";
  const std::vector<model::Toleration> got = WithDaemonPodTolerations({own, timed}, false);
  REQUIRE(got.size() == 7);
  CHECK(got[0].key == "dedicated");
  CHECK(got[1].key == "node.kubernetes.io/not-ready");
  CHECK_FALSE(got[1].toleration_seconds.has_value());  // replaced: tolerated for ever
  CHECK(got[2].key == "node.kubernetes.io/unreachable");
  CHECK(got[6].key == "node.kubernetes.io/unschedulable");
  CHECK(WithDaemonPodTolerations({}, true).back().key == "node.kubernetes.io/network-unavailable");
}

TEST_CASE(
    "what manage does on a node: create, keep the oldest, delete the misscheduled and the "
    "finished") {
  // None yet: one is made.
  CHECK(PodsShouldBeOnNode(Node("n1", {}), kNew, false, 0, kNow).create);
  // None, and it should not run there: nothing.
  CHECK_FALSE(PodsShouldBeOnNode(Node("n1", {}, {false, false}), kNew, false, 0, kNow).create);

  // Two running: the oldest (scheduled first) stays.
  const PodRecord older = Pod("a", "n1", kNew, SimDuration(7'200'000));
  const PodRecord newer = Pod("b", "n1", kNew);
  NodeActions two = PodsShouldBeOnNode(Node("n1", {&newer, &older}), kNew, false, 0, kNow);
  CHECK_FALSE(two.create);
  CHECK(Names(two.remove) == std::vector<std::string>{"b"});

  // One not yet scheduled goes after a scheduled one, however old.
  PodRecord pending = Pod("c", "", kNew, SimDuration(9'000'000));
  pending.target_node = "n1";
  CHECK(Names(PodsShouldBeOnNode(Node("n1", {&pending, &newer}), kNew, false, 0, kNow).remove) ==
        std::vector<std::string>{"c"});

  // Misscheduled (it may no longer continue): every one that is not deleting goes.
  PodRecord deleting = Pod("d", "n1", kNew);
  deleting.deleting = true;
  NodeActions gone =
      PodsShouldBeOnNode(Node("n1", {&older, &deleting}, {false, false}), kNew, false, 0, kNow);
  CHECK(Names(gone.remove) == std::vector<std::string>{"a"});
  // Tolerated NoExecute but not NoSchedule: it stays.
  CHECK(
      PodsShouldBeOnNode(Node("n1", {&older}, {false, true}), kNew, false, 0, kNow).remove.empty());
  // A deleting pod still counts as there: nothing is made until it is gone.
  CHECK_FALSE(PodsShouldBeOnNode(Node("n1", {&deleting}), kNew, false, 0, kNow).create);

  // Finished pods are reported apart (their Events), and deleted.
  PodRecord failed = Pod("f", "n1", kNew);
  failed.phase = api::PodPhase::Failed;
  PodRecord succeeded = Pod("s", "n1", kNew);
  succeeded.phase = api::PodPhase::Succeeded;
  NodeActions finished =
      PodsShouldBeOnNode(Node("n1", {&failed, &succeeded}), kNew, false, 0, kNow);
  CHECK(Names(finished.failed) == std::vector<std::string>{"f"});
  CHECK(Names(finished.succeeded) == std::vector<std::string>{"s"});
  CHECK(finished.remove.empty());
  CHECK_FALSE(finished.create);  // made once they are gone
}

TEST_CASE("manage with surge: an old and a new pod side by side until the new one is available") {
  const PodRecord old_ready = Pod("old", "n1", kOld, SimDuration(7'200'000));
  const PodRecord new_starting = Pod("new", "n1", kNew, SimDuration(1'000), /*ready=*/false);
  CHECK(PodsShouldBeOnNode(Node("n1", {&old_ready, &new_starting}), kNew, true, 0, kNow)
            .remove.empty());
  const PodRecord new_ready = Pod("new", "n1", kNew, SimDuration(1'000));
  CHECK(
      Names(PodsShouldBeOnNode(Node("n1", {&old_ready, &new_ready}), kNew, true, 0, kNow).remove) ==
      std::vector<std::string>{"old"});
  // Ready, but not for minReadySeconds: not yet available.
  CHECK(PodsShouldBeOnNode(Node("n1", {&old_ready, &new_ready}), kNew, true, 7200, kNow)
            .remove.empty());
  // The old one not ready: it goes at once.
  const PodRecord old_unready = Pod("old", "n1", kOld, SimDuration(7'200'000), false);
  CHECK(Names(PodsShouldBeOnNode(Node("n1", {&old_unready, &new_starting}), kNew, true, 0, kNow)
                  .remove) == std::vector<std::string>{"old"});
  // A second new one goes.
  const PodRecord new_extra = Pod("new2", "n1", kNew, SimDuration(500));  // the younger
  CHECK(
      Names(PodsShouldBeOnNode(Node("n1", {&new_ready, &new_extra}), kNew, true, 0, kNow).remove) ==
      std::vector<std::string>{"new2"});
}

TEST_CASE(
    "a rolling update without surge replaces old pods while at most maxUnavailable nodes lack an "
    "available one") {
  const PodRecord a = Pod("a", "n1", kOld), b = Pod("b", "n2", kOld), c = Pod("c", "n3", kOld),
                  d = Pod("d", "n4", kOld);
  std::vector<DaemonNode> nodes{Node("n1", {&a}), Node("n2", {&b}), Node("n3", {&c}),
                                Node("n4", {&d})};
  const DaemonFenceposts one{0, 1};
  RollingPlan plan = PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow);
  CHECK(plan.remove.size() == 1);
  CHECK(plan.create_on.empty());  // manage makes the new pod once the old one is gone

  // n1 is between pods (none there): it counts as unavailable, so no other goes.
  nodes[0] = Node("n1", {});
  CHECK(PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow).remove.empty());
  // n1's new pod is available: the next goes.
  const PodRecord a2 = Pod("a2", "n1", kNew);
  nodes[0] = Node("n1", {&a2});
  CHECK(PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow).remove.size() == 1);
  // Its new pod not ready yet: nothing more.
  const PodRecord a3 = Pod("a3", "n1", kNew, SimDuration(1'000), false);
  nodes[0] = Node("n1", {&a3});
  CHECK(PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow).remove.empty());
  // An old pod that is not available anyway goes whatever the budget.
  const PodRecord b_down = Pod("b", "n2", kOld, SimDuration(3'600'000), false);
  nodes[1] = Node("n2", {&b_down});
  CHECK(Names(PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow).remove) ==
        std::vector<std::string>{"b"});
  // An old pod not available counts against maxUnavailable as it goes:
  // nothing else goes with it.
  nodes[0] = Node("n1", {&a2});
  const PodRecord b_crashing = Pod("b", "n2", kOld, SimDuration(3'600'000), false);
  nodes[1] = Node("n2", {&b_crashing});
  CHECK(Names(PlanRollingUpdate(nodes, kNew, one, 4, 0, kNow).remove) ==
        std::vector<std::string>{"b"});
  // maxUnavailable 2 with one node already unavailable: one more.
  nodes[0] = Node("n1", {&a3});
  nodes[1] = Node("n2", {&b});
  CHECK(PlanRollingUpdate(nodes, kNew, DaemonFenceposts{0, 2}, 4, 0, kNow).remove.size() == 1);
}

TEST_CASE("a rolling update with surge makes new pods beside old ones on at most maxSurge nodes") {
  const PodRecord a = Pod("a", "n1", kOld), b = Pod("b", "n2", kOld), c = Pod("c", "n3", kOld);
  std::vector<DaemonNode> nodes{Node("n1", {&a}), Node("n2", {&b}), Node("n3", {&c})};
  RollingPlan plan = PlanRollingUpdate(nodes, kNew, DaemonFenceposts{1, 0}, 3, 0, kNow);
  CHECK(plan.remove.empty());
  CHECK(plan.create_on.size() == 1);
  // n1 has its new pod, not yet available: the surge is used up.
  const PodRecord a2 = Pod("a2", "n1", kNew, SimDuration(1'000), false);
  nodes[0] = Node("n1", {&a, &a2});
  plan = PlanRollingUpdate(nodes, kNew, DaemonFenceposts{1, 0}, 3, 0, kNow);
  CHECK(plan.create_on.empty());
  CHECK(plan.remove.empty());
  // Available: the old one goes, and the next node surges.
  const PodRecord a3 = Pod("a3", "n1", kNew, SimDuration(1'000));
  nodes[0] = Node("n1", {&a, &a3});
  plan = PlanRollingUpdate(nodes, kNew, DaemonFenceposts{1, 0}, 3, 0, kNow);
  CHECK(Names(plan.remove) == std::vector<std::string>{"a"});
  CHECK(plan.create_on.size() == 1);
  CHECK(plan.create_on[0] != "n1");
}

TEST_CASE(
    "maxSurge and maxUnavailable of a DaemonSet, percentages rounded up, 1 unavailable when both "
    "are 0") {
  api::RollingUpdateDaemonSetT ru;
  ru.max_unavailable = std::make_unique<api::IntOrStringT>();
  ru.max_unavailable->type = api::IntOrStringType::String;
  ru.max_unavailable->str_val = "10%";
  ru.max_surge = std::make_unique<api::IntOrStringT>();
  ru.max_surge->type = api::IntOrStringType::Int;
  ru.max_surge->int_val = 0;
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(api::RollingUpdateDaemonSet::Pack(fbb, &ru));
  const auto* packed = flatbuffers::GetRoot<api::RollingUpdateDaemonSet>(fbb.GetBufferPointer());
  CHECK(ResolveDaemonFenceposts(packed, 25).max_unavailable == 3);  // 2.5 rounded up
  CHECK(ResolveDaemonFenceposts(packed, 25).max_surge == 0);
  CHECK(ResolveDaemonFenceposts(packed, 1).max_unavailable == 1);
  CHECK(ResolveDaemonFenceposts(nullptr, 5).max_unavailable == 1);
  CHECK(ResolveDaemonFenceposts(nullptr, 0).max_unavailable == 0);
}

TEST_CASE(
    "a DaemonSet's status counts: desired, current, ready, updated, available, misscheduled") {
  const PodRecord a = Pod("a", "n1", kNew);
  const PodRecord b = Pod("b", "n2", kOld, SimDuration(3'600'000), false);
  const PodRecord c = Pod("c", "n3", kNew);
  std::vector<DaemonNode> nodes{Node("n1", {&a}), Node("n2", {&b}), Node("n3", {&c}, {false, true}),
                                Node("n4", {})};
  DaemonNode gone{"n5", false, {}, {}};
  const PodRecord e = Pod("e", "n5", kNew);
  gone.pods.push_back(&e);
  nodes.push_back(gone);  // a node that no longer exists counts nowhere
  const DaemonCounts counts = CountDaemonPods(nodes, kNew, 0, kNow);
  CHECK(counts == DaemonCounts{.desired = 3,
                               .current = 2,
                               .misscheduled = 1,
                               .ready = 1,
                               .updated = 1,
                               .available = 1,
                               .unavailable = 2});
  // Ready for less than minReadySeconds: ready, not available.
  CHECK(CountDaemonPods(nodes, kNew, 7200, kNow).available == 0);
}

TEST_CASE(
    "deleting a node's failed daemon pods backs off: 1 s, doubling, forgotten after a quiet "
    "while") {
  FailedPodBackoff backoff;
  SimDuration wait{};
  CHECK_FALSE(backoff.InBackoff("ds/1/n1", kNow, wait));
  backoff.Next("ds/1/n1", kNow);
  CHECK(backoff.InBackoff("ds/1/n1", kNow + SimDuration(500), wait));
  CHECK(wait == SimDuration(1000));
  CHECK_FALSE(backoff.InBackoff("ds/1/n1", kNow + SimDuration(1000), wait));
  CHECK_FALSE(backoff.InBackoff("ds/1/n2", kNow, wait));
  backoff.Next("ds/1/n1", kNow + SimDuration(1000));
  CHECK(backoff.InBackoff("ds/1/n1", kNow + SimDuration(2500), wait));
  CHECK(wait == SimDuration(2000));
  backoff.Collect(kNow + FailedPodBackoff::kMax * 3);
  CHECK_FALSE(backoff.InBackoff("ds/1/n1", kNow + FailedPodBackoff::kMax * 3, wait));
  backoff.Next("ds/1/n1", kNow + FailedPodBackoff::kMax * 3);
  CHECK(backoff.InBackoff("ds/1/n1", kNow + FailedPodBackoff::kMax * 3, wait));
  CHECK(wait == SimDuration(1000));  // started over
}

TEST_CASE(
    "the node a pod is for: its nodeName, else the metadata.name of its required node affinity") {
  auto target = [](const std::string& spec_json) {
    const std::string bytes = PackedPod(spec_json);
    return TargetNodeName(*flatbuffers::GetRoot<api::Pod>(bytes.data()));
  };
  const std::string affinity =
      R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
      R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["n7"]}]}]}}},)";
  CHECK(target(R"({"containers":[{"name":"c","image":"i"}]})").empty());
  CHECK(target("{" + affinity + R"("containers":[{"name":"c","image":"i"}]})") == "n7");
  CHECK(target("{" + affinity + R"("nodeName":"n2","containers":[{"name":"c","image":"i"}]})") ==
        "n2");
}

}  // namespace
}  // namespace podflow::controllers
