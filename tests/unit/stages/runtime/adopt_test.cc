#include "stages/runtime/adopt.h"

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "stages/runtime/node_runtime.h"
#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

std::string NodeBytes(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  INFO((*docs)[0].status.ToString());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object.bytes;
}

TEST_CASE("a published Node is adopted with its own facts and the next free addresses") {
  const std::string bytes = NodeBytes(R"(apiVersion: v1
kind: Node
metadata:
  name: kwok-1
  labels: {type: kwok}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "31", memory: 250Gi, pods: "110"}
)");
  const api::Node* stored = flatbuffers::GetRoot<api::Node>(bytes.data());
  NodeDef def = NodeDefFromNode(*stored);
  CHECK(def.name == "kwok-1");
  CHECK(def.shape.labels.at("type") == "kwok");
  REQUIRE(def.shape.taints.size() == 1);
  CHECK(def.shape.taints[0].effect == "NoSchedule");
  CHECK(def.shape.capacity.at("cpu") == "32");
  CHECK(def.pod_cidr.empty());

  RuntimeConfig config;  // clusterCIDR 10.244.0.0/16, /24 per node, nodeIPRange 192.168.0.0/16
  std::vector<NodeDef> hosted = {NodeDefFromSim(testing::TestNode("node-1", "10.244.0.0/24")),
                                 NodeDefFromSim(testing::TestNode("node-2", "10.244.1.0/24"))};
  hosted[1].internal_ip = "192.168.0.3";
  Result<SimNode> node = ResolveAdopted(config, hosted, def);
  REQUIRE(node.ok());
  CHECK(node->pod_cidr.ToString() == "10.244.2.0/24");
  // .2 and .3 are the hosted nodes' own: the adopted one gets .4.
  CHECK(FormatIpv4(node->internal_ip) == "192.168.0.4");

  const ImageCatalog catalog(testing::TestRegistry());
  api::NodeT adopted = AdoptedNode(*stored, *node, catalog, testing::FakeClock().now);
  CHECK(adopted.spec->pod_cidr == "10.244.2.0/24");
  REQUIRE(adopted.spec->taints.size() == 1);
  bool ready = false;
  for (const auto& c : adopted.status->conditions) ready |= c->type == "Ready" && c->status == api::ConditionStatus::True;
  CHECK(ready);
  std::string allocatable_cpu;
  for (const auto& q : adopted.status->allocatable) {
    if (q->key == "cpu") allocatable_cpu = q->value;
  }
  CHECK(allocatable_cpu == "31");  // the object's own reservations stay

  SECTION("a node naming a podCIDR a hosted node has is refused, naming the node") {
    def.pod_cidr = "10.244.1.0/24";
    Result<SimNode> clash = ResolveAdopted(config, hosted, def);
    REQUIRE_FALSE(clash.ok());
    CHECK(clash.status().message().find("kwok-1") != std::string::npos);
  }
}

const api::QuantityEntryT* Quantity(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list,
                                    const std::string& key) {
  for (const auto& q : list) {
    if (q->key == key) return q.get();
  }
  return nullptr;
}

// The node `stored` becomes when adopted by a runtime hosting no other.
SimNode Resolved(const api::Node& stored) {
  Result<SimNode> node = ResolveAdopted(RuntimeConfig(), {}, NodeDefFromNode(stored));
  REQUIRE(node.ok());
  return std::move(*node);
}

TEST_CASE("adoption keeps the status the manifest gave and adds only what the kubelet owns") {
  // A KWOK-style node: its images (one cached large image), conditions and
  // addresses are the manifest's, and stay.
  const std::string bytes = NodeBytes(R"(apiVersion: v1
kind: Node
metadata:
  name: kwok-2
status:
  capacity: {cpu: "8", memory: 32Gi}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: fake kubelet}
  - {type: NetworkUnavailable, status: "False", reason: RouteCreated, message: routes}
  addresses:
  - {type: Hostname, address: kwok-2}
  images:
  - names: [registry.example/ml/trainer:2.1]
    sizeBytes: 3000000000
  - names: ["docker.io/library/nginx@sha256:0000", "nginx:1.25"]
    sizeBytes: 44000000
  nodeInfo: {kubeletVersion: fake, architecture: arm64}
)");
  const api::Node* stored = flatbuffers::GetRoot<api::Node>(bytes.data());
  const ImageCatalog catalog(testing::TestRegistry());
  const SimNode node = Resolved(*stored);
  api::NodeT adopted = AdoptedNode(*stored, node, catalog, testing::FakeClock().now);
  const api::NodeStatusT& status = *adopted.status;

  REQUIRE(status.images.size() == 2);
  CHECK(status.images[0]->names == std::vector<std::string>{"registry.example/ml/trainer:2.1"});
  CHECK(status.images[0]->size_bytes == 3'000'000'000);

  // A node that says it is Ready keeps its conditions, and gets the
  // kubelet's pressure conditions it lacks.
  REQUIRE(status.conditions.size() == 5);
  CHECK(status.conditions[0]->message == "fake kubelet");
  CHECK(status.conditions[1]->type == "NetworkUnavailable");
  CHECK(status.conditions[2]->type == "MemoryPressure");
  const std::string now = FormatRfc3339(testing::FakeClock().now);
  for (const auto& c : status.conditions) {
    CHECK(c->last_heartbeat_time == now);  // the heartbeat is the kubelet's
    CHECK(c->last_transition_time == now);
  }
  // The manifest's Hostname stays; the InternalIP pods get as hostIP is added.
  REQUIRE(status.addresses.size() == 2);
  CHECK(status.addresses[0]->type == "InternalIP");
  CHECK(status.addresses[0]->address == FormatIpv4(node.internal_ip));
  CHECK(status.addresses[1]->address == "kwok-2");
  CHECK(status.node_info->architecture == "arm64");

  // Named resources keep their amounts; unnamed ones get the defaults, and
  // allocatable (not given) is the capacity.
  REQUIRE(Quantity(status.capacity, "cpu") != nullptr);
  CHECK(Quantity(status.capacity, "cpu")->value == "8");
  REQUIRE(Quantity(status.capacity, "pods") != nullptr);
  CHECK(Quantity(status.capacity, "pods")->value == "110");
  REQUIRE(Quantity(status.allocatable, "memory") != nullptr);
  CHECK(Quantity(status.allocatable, "memory")->value == "32Gi");
  CHECK(status.allocatable.size() == status.capacity.size());
  CHECK(adopted.spec->pod_cidr == node.pod_cidr.ToString());

  // The cached images the registry knows are present on the node: a pod
  // using them starts without a pull.
  SimNode with_images = node;
  with_images.images = CachedImages(*stored, catalog);
  const RuntimeTiming timing;
  const NodeRuntime runtime(with_images, &catalog, &timing);
  const SimTime t = testing::FakeClock().now;
  CHECK(runtime.HasImage("docker.io/library/nginx:1.25", t));  // by its tag, as a pod names it
  CHECK(runtime.HasImage(catalog.Resolve("docker.io/library/nginx@sha256:0000")->canonical, t));
  CHECK_FALSE(runtime.HasImage("docker.io/library/nginx:latest", t));
}

TEST_CASE("a node the manifest says is not Ready is Ready once its kubelet runs; other conditions stay") {
  const std::string bytes = NodeBytes(R"(apiVersion: v1
kind: Node
metadata: {name: revived}
status:
  conditions:
  - {type: Ready, status: Unknown, reason: NodeStatusUnknown, message: Kubelet stopped posting node status.}
  - {type: NetworkUnavailable, status: "False", reason: RouteCreated, message: routes}
  allocatable: {cpu: "32", nvidia.com/gpu: "2"}
)");
  const api::Node* stored = flatbuffers::GetRoot<api::Node>(bytes.data());
  const ImageCatalog catalog(testing::TestRegistry());
  api::NodeT adopted = AdoptedNode(*stored, Resolved(*stored), catalog, testing::FakeClock().now);
  const api::NodeStatusT& status = *adopted.status;
  REQUIRE(status.conditions.size() == 5);
  CHECK(status.conditions[0]->type == "NetworkUnavailable");
  bool ready = false;
  for (const auto& c : status.conditions) {
    if (c->type == "Ready") ready = c->status == api::ConditionStatus::True && c->reason == "KubeletReady";
  }
  CHECK(ready);
  // Resources given only as allocatable have that capacity, never less.
  REQUIRE(Quantity(status.capacity, "cpu") != nullptr);
  CHECK(Quantity(status.capacity, "cpu")->value == "32");
  REQUIRE(Quantity(status.capacity, "nvidia.com/gpu") != nullptr);
  CHECK(Quantity(status.capacity, "nvidia.com/gpu")->value == "2");
}

TEST_CASE("a node published without status gets the simulated kubelet's") {
  const std::string bytes = NodeBytes("apiVersion: v1\nkind: Node\nmetadata: {name: bare}\n");
  const api::Node* stored = flatbuffers::GetRoot<api::Node>(bytes.data());
  const ImageCatalog catalog(testing::TestRegistry());
  const SimNode node = Resolved(*stored);
  api::NodeT adopted = AdoptedNode(*stored, node, catalog, testing::FakeClock().now);
  REQUIRE(adopted.status != nullptr);
  CHECK(adopted.status->conditions.size() == 4);
  REQUIRE(adopted.status->addresses.size() == 2);
  CHECK(adopted.status->addresses[1]->type == "Hostname");
  REQUIRE(Quantity(adopted.status->allocatable, "pods") != nullptr);
  CHECK(adopted.status->node_info != nullptr);
  CHECK(CachedImages(*stored, catalog).empty());
}

}  // namespace
}  // namespace podflow::runtime
