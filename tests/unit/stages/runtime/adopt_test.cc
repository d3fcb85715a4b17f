#include "stages/runtime/adopt.h"

#include <catch2/catch.hpp>

#include "model/codec.h"
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

}  // namespace
}  // namespace podflow::runtime
