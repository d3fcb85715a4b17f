#include <catch2/catch.hpp>

#include "model/conditions.h"

#include "model/codec.h"
#include "model/objects.h"
#include "model/value.h"
#include "stages/controllers/config.h"
#include "stages/controllers/node_lifecycle.h"

namespace podflow::controllers {
namespace {

const SimTime kT0 = FromUnixMillis(1'767'000'000'000);

// A stored object from a manifest, as the log holds it.
std::string Stored(const std::string& manifest) {
  Result<std::vector<model::Decoded>> decoded = model::DecodeManifests(manifest);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  REQUIRE((*decoded)[0].status.ok());
  return (*decoded)[0].object.bytes;
}

const api::Node& AsNode(const std::string& bytes) { return *flatbuffers::GetRoot<api::Node>(bytes.data()); }

std::string ReadyNode(const std::string& ready = "True", const std::string& heartbeat = "2026-01-01T00:00:00Z",
                      const std::string& extra_spec = "") {
  return Stored(R"(apiVersion: v1
kind: Node
metadata: {name: n1, creationTimestamp: "2025-12-31T00:00:00Z"}
spec: {podCIDR: 10.244.0.0/24)" + extra_spec + R"(}
status:
  conditions:
  - {type: MemoryPressure, status: "False", reason: KubeletHasSufficientMemory, lastHeartbeatTime: ")" + heartbeat +
                R"(", lastTransitionTime: "2025-12-31T00:00:00Z"}
  - {type: Ready, status: ")" + ready + R"(", reason: KubeletReady, message: kubelet is posting ready status,
     lastHeartbeatTime: ")" + heartbeat + R"(", lastTransitionTime: "2025-12-31T00:00:00Z"}
)");
}

std::string Lease(const std::string& renewed) {
  return Stored(R"(apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: n1, namespace: kube-node-lease}
spec: {holderIdentity: n1, leaseDurationSeconds: 40, renewTime: ")" + renewed + R"("}
)");
}

const api::NodeConditionT* Condition(const api::NodeT& node, const std::string& type) {
  return model::FindCondition(*node.status, type);
}

std::vector<std::string> TaintNames(const api::NodeT& node) {
  std::vector<std::string> out;
  for (const auto& t : node.spec->taints) out.push_back(t->key + ":" + api::EnumNameTaintEffect(t->effect));
  return out;
}

TEST_CASE("a node is timed out once neither its lease nor its heartbeat moved for the grace period") {
  NodeHealth health(NodeLifecycleConfig{});  // 5s / 50s / 60s
  const std::string node = ReadyNode();
  CHECK_FALSE(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(3'600'000)));  // never seen: not judged
  health.ObserveNode("n1", AsNode(node), kT0);
  CHECK_FALSE(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(50'000)));
  CHECK(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(50'001)));

  // A lease renewal is a probe on the controller's own clock.
  health.ObserveLease("n1", *flatbuffers::GetRoot<api::Lease>(Lease("2026-01-01T00:00:10.000000Z").data()),
                      kT0 + SimDuration(40'000));
  CHECK_FALSE(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(90'000)));
  CHECK(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(90'001)));
  // The same renewTime seen again (a re-list) is no news.
  health.ObserveLease("n1", *flatbuffers::GetRoot<api::Lease>(Lease("2026-01-01T00:00:10.000000Z").data()),
                      kT0 + SimDuration(80'000));
  CHECK(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(90'001)));
  // So is the node with the same heartbeat; a new heartbeat is a probe.
  health.ObserveNode("n1", AsNode(node), kT0 + SimDuration(85'000));
  CHECK(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(90'001)));
  health.ObserveNode("n1", AsNode(ReadyNode("True", "2026-01-01T00:01:00Z")), kT0 + SimDuration(85'000));
  CHECK_FALSE(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(135'000)));

  health.Forget("n1");
  CHECK_FALSE(health.TimedOut("n1", AsNode(node), kT0 + SimDuration(3'600'000)));
}

TEST_CASE("a node that never posted a Ready condition gets the startup grace period") {
  NodeHealth health(NodeLifecycleConfig{});
  const std::string bare = Stored("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  health.ObserveNode("n1", AsNode(bare), kT0);
  CHECK_FALSE(health.TimedOut("n1", AsNode(bare), kT0 + SimDuration(60'000)));
  CHECK(health.TimedOut("n1", AsNode(bare), kT0 + SimDuration(60'001)));
  // Marked as kube-controller-manager marks one: every kubelet condition never updated.
  std::optional<api::NodeT> marked = MarkedUnknown(AsNode(bare), kT0 + SimDuration(60'001));
  REQUIRE(marked.has_value());
  REQUIRE(marked->status->conditions.size() == 4);
  for (const auto& c : marked->status->conditions) {
    CHECK(c->status == api::ConditionStatus::Unknown);
    CHECK(c->reason == "NodeStatusNeverUpdated");
    CHECK(c->message == "Kubelet never posted node status.");
    CHECK(c->last_transition_time == FormatRfc3339(kT0 + SimDuration(60'001)));
  }
}

TEST_CASE("a timed-out node's kubelet conditions become Unknown; their heartbeats stay") {
  const SimTime now = kT0 + SimDuration(100'000);
  std::optional<api::NodeT> marked = MarkedUnknown(AsNode(ReadyNode()), now);
  REQUIRE(marked.has_value());
  const api::NodeConditionT* ready = Condition(*marked, "Ready");
  REQUIRE(ready != nullptr);
  CHECK(ready->status == api::ConditionStatus::Unknown);
  CHECK(ready->reason == "NodeStatusUnknown");
  CHECK(ready->message == "Kubelet stopped posting node status.");
  CHECK(ready->last_heartbeat_time == "2026-01-01T00:00:00Z");
  CHECK(ready->last_transition_time == FormatRfc3339(now));
  CHECK(Condition(*marked, "MemoryPressure")->status == api::ConditionStatus::Unknown);
  // The two it lacked are added as never posted.
  REQUIRE(Condition(*marked, "DiskPressure") != nullptr);
  CHECK(Condition(*marked, "DiskPressure")->reason == "NodeStatusNeverUpdated");
  CHECK(Condition(*marked, "DiskPressure")->last_heartbeat_time == "2025-12-31T00:00:00Z");  // its creation
  CHECK(marked->spec->pod_cidr == "10.244.0.0/24");

  // Already Unknown: nothing to write.
  const std::string again = model::Pack(*marked);
  CHECK_FALSE(MarkedUnknown(AsNode(again), now + SimDuration(5'000)).has_value());
  // Ready Unknown already: no write, even with a pressure condition posted
  // since (kube-controller-manager writes only when Ready changes).
  for (auto& c : marked->status->conditions) {
    if (c->type == "DiskPressure") c->status = api::ConditionStatus::False;
  }
  const std::string partly = model::Pack(*marked);
  CHECK_FALSE(MarkedUnknown(AsNode(partly), now + SimDuration(5'000)).has_value());
  // Ready False (not Unknown): every kubelet condition that is not Unknown is marked.
  for (auto& c : marked->status->conditions) {
    if (c->type == "Ready") c->status = api::ConditionStatus::False;
  }
  const std::string not_ready = model::Pack(*marked);
  std::optional<api::NodeT> remarked = MarkedUnknown(AsNode(not_ready), now + SimDuration(5'000));
  REQUIRE(remarked.has_value());
  CHECK(Condition(*remarked, "Ready")->status == api::ConditionStatus::Unknown);
  CHECK(Condition(*remarked, "DiskPressure")->status == api::ConditionStatus::Unknown);
}

TEST_CASE("taints follow the conditions: unreachable and not-ready, NoSchedule and NoExecute") {
  const SimTime now = kT0 + SimDuration(100'000);
  SECTION("Ready: nothing to add") { CHECK_FALSE(ConditionTaints(AsNode(ReadyNode()), now).has_value()); }
  SECTION("Unknown: unreachable, both effects, with timeAdded; other taints stay") {
    std::optional<api::NodeT> tainted = ConditionTaints(
        AsNode(ReadyNode("Unknown", "2026-01-01T00:00:00Z", ", taints: [{key: gpu, effect: NoSchedule}]")), now);
    REQUIRE(tainted.has_value());
    CHECK(TaintNames(*tainted) == std::vector<std::string>{"gpu:NoSchedule", "node.kubernetes.io/unreachable:NoSchedule",
                                                           "node.kubernetes.io/unreachable:NoExecute"});
    CHECK(tainted->spec->taints[1]->time_added.empty());  // NoSchedule: no time
    CHECK(tainted->spec->taints[2]->time_added == FormatRfc3339(now));
    // Applied once: nothing more to do.
    CHECK_FALSE(ConditionTaints(*flatbuffers::GetRoot<api::Node>(model::Pack(*tainted).data()), now).has_value());
  }
  SECTION("False: not-ready; back to True: the node's own taints only") {
    std::optional<api::NodeT> tainted = ConditionTaints(
        AsNode(ReadyNode("False", "2026-01-01T00:00:00Z", ", taints: [{key: gpu, effect: NoSchedule}]")), now);
    REQUIRE(tainted.has_value());
    CHECK(TaintNames(*tainted) == std::vector<std::string>{"gpu:NoSchedule", "node.kubernetes.io/not-ready:NoSchedule",
                                                           "node.kubernetes.io/not-ready:NoExecute"});
    for (auto& c : tainted->status->conditions) {
      if (c->type == "Ready") c->status = api::ConditionStatus::True;
    }
    std::optional<api::NodeT> cleared =
        ConditionTaints(*flatbuffers::GetRoot<api::Node>(model::Pack(*tainted).data()), now);
    REQUIRE(cleared.has_value());
    CHECK(TaintNames(*cleared) == std::vector<std::string>{"gpu:NoSchedule"});
  }
  SECTION("memory pressure and an unschedulable node") {
    std::string node = Stored(R"(apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {unschedulable: true}
status:
  conditions:
  - {type: MemoryPressure, status: "True"}
  - {type: Ready, status: "True"}
)");
    std::optional<api::NodeT> tainted = ConditionTaints(AsNode(node), now);
    REQUIRE(tainted.has_value());
    CHECK(TaintNames(*tainted) == std::vector<std::string>{"node.kubernetes.io/memory-pressure:NoSchedule",
                                                           "node.kubernetes.io/unschedulable:NoSchedule"});
  }
}

TEST_CASE("the status patch that sets one condition") {
  CHECK(PodConditionPatch("Ready", "False", "", "", kT0) ==
        R"({"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":")" + FormatRfc3339(kT0) +
            R"("}]}})");
  CHECK(PodConditionPatch("DisruptionTarget", "True", "DeletionByTaintManager",
                          "Taint manager: deleting due to \"NoExecute\" taint", kT0)
            .find(R"("message":"Taint manager: deleting due to \"NoExecute\" taint")") != std::string::npos);
}

TEST_CASE("the controllers config section: kube-controller-manager's durations") {
  Result<ControllersConfig> defaults = ParseControllersConfig(YAML::Node());
  REQUIRE(defaults.ok());
  CHECK(defaults->node_lifecycle.monitor_period == SimDuration(5'000));
  CHECK(defaults->node_lifecycle.grace_period == SimDuration(50'000));
  CHECK(defaults->node_lifecycle.startup_grace_period == SimDuration(60'000));
  Result<ControllersConfig> set =
      ParseControllersConfig(YAML::Load("{nodeMonitorPeriod: 500ms, nodeMonitorGracePeriod: 3s, nodeStartupGracePeriod: 1m}"));
  REQUIRE(set.ok());
  CHECK(set->node_lifecycle.monitor_period == SimDuration(500));
  CHECK(set->node_lifecycle.grace_period == SimDuration(3'000));
  CHECK(set->node_lifecycle.startup_grace_period == SimDuration(60'000));
  CHECK(ParseControllersConfig(YAML::Load("{nodeMonitorPeriods: 5s}")).status().message() ==
        "controllers.nodeMonitorPeriods: unknown field");
  CHECK(ParseControllersConfig(YAML::Load("{nodeMonitorGracePeriod: soon}")).status().message() ==
        "controllers.nodeMonitorGracePeriod: must be a positive duration such as 5s, not \"soon\"");
  CHECK(ParseControllersConfig(YAML::Load("{nodeMonitorGracePeriod: 4s}")).status().message() ==
        "controllers.nodeMonitorGracePeriod: must be longer than nodeMonitorPeriod");
  CHECK(ParseControllersConfig(YAML::Load("[1]")).status().message() == "controllers: must be a map");
}

}  // namespace
}  // namespace podflow::controllers
