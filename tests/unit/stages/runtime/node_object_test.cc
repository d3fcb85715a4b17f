#include <catch2/catch.hpp>

#include "model/objects.h"
#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

std::string Get(const std::vector<std::unique_ptr<api::StringEntryT>>& v, const std::string& k) {
  for (const auto& e : v) {
    if (e->key == k) return e->value;
  }
  return "<absent>";
}
std::string Get(const std::vector<std::unique_ptr<api::QuantityEntryT>>& v, const std::string& k) {
  for (const auto& e : v) {
    if (e->key == k) return e->value;
  }
  return "<absent>";
}

TEST_CASE("node objects carry the configured labels, taints and capacity") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Load(R"(
nodes:
  - name: gpu-1
    labels: {disktype: ssd, kubernetes.io/arch: arm64}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8"}
    images: ["nginx:1.14.2"]
registry:
  - {name: nginx, tags: ["1.14.2"], sizeBytes: 44000000, pullMillis: 300}
)"));
  REQUIRE(config.ok());
  const std::vector<SimNode> nodes = *ResolveNodes(*config);
  const ImageCatalog catalog(config->registry);
  testing::FakeClock clock;
  const std::string bytes = BuildNodeBytes(nodes[0], catalog, clock.now);

  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  REQUIRE(verifier.VerifyBuffer<api::Node>(nullptr));
  std::unique_ptr<api::NodeT> node = model::Unpack<api::Node>(bytes);

  CHECK(node->kind == "Node");
  CHECK(node->metadata->name == "gpu-1");
  const auto& labels = node->metadata->labels;
  CHECK(Get(labels, "disktype") == "ssd");
  CHECK(Get(labels, "kubernetes.io/hostname") == "gpu-1");
  CHECK(Get(labels, "kubernetes.io/os") == "linux");
  CHECK(Get(labels, "kubernetes.io/arch") == "arm64");  // configured label wins
  for (size_t i = 1; i < labels.size(); ++i) CHECK(labels[i - 1]->key < labels[i]->key);

  REQUIRE(node->spec->taints.size() == 1);
  CHECK(node->spec->taints[0]->key == "nvidia.com/gpu");
  CHECK(node->spec->taints[0]->effect == api::TaintEffect::NoSchedule);
  CHECK(node->spec->pod_cidr == "10.244.0.0/24");

  const auto& status = *node->status;
  CHECK(Get(status.capacity, "cpu") == "32");
  CHECK(Get(status.capacity, "nvidia.com/gpu") == "8");
  CHECK(Get(status.capacity, "pods") == "110");
  CHECK(Get(status.allocatable, "memory") == "256Gi");

  REQUIRE(status.conditions.size() == 4);
  const auto& ready = *status.conditions[3];
  CHECK(ready.type == "Ready");
  CHECK(ready.status == api::ConditionStatus::True);
  CHECK(ready.reason == "KubeletReady");
  CHECK(ready.message == "kubelet is posting ready status");
  CHECK(ready.last_heartbeat_time == "2024-05-01T12:00:00Z");
  for (int i = 0; i < 3; ++i) CHECK(status.conditions[i]->status == api::ConditionStatus::False);
  for (const auto& c : status.conditions) CHECK(c->type != "NetworkUnavailable");

  REQUIRE(status.addresses.size() == 2);
  CHECK(status.addresses[0]->type == "InternalIP");
  CHECK(status.addresses[0]->address == "192.168.0.2");
  CHECK(status.addresses[1]->type == "Hostname");
  CHECK(status.node_info->kubelet_version == "v1.32.0-podflow");
  CHECK(status.node_info->container_runtime_version == "podflow-sim://1");
  CHECK(status.node_info->operating_system == "linux");
  CHECK(status.node_info->architecture == "amd64");
  REQUIRE(status.images.size() == 1);
  CHECK(status.images[0]->names[1] == "docker.io/library/nginx:1.14.2");
  CHECK(status.images[0]->size_bytes == 44'000'000);
}

}  // namespace
}  // namespace podflow::runtime
