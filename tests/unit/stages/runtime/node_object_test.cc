#include <catch2/catch.hpp>

#include "model/conditions.h"

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

namespace podflow::runtime {
namespace {

const api::NodeConditionT* FindCondition(const api::NodeT& node, const std::string& type) {
  return model::FindCondition(*node.status, type);
}

TEST_CASE("a node marked Unknown gets the kubelet's conditions posted again; a Ready one is left alone") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Load("nodes: [{name: n1}]"));
  REQUIRE(config.ok());
  const std::vector<SimNode> nodes = *ResolveNodes(*config);
  const ImageCatalog catalog(config->registry);
  testing::FakeClock clock;
  api::NodeT registered = BuildNode(nodes[0], catalog, clock.now);
  const std::string ready_bytes = model::Pack(registered);
  CHECK_FALSE(RepostedNodeStatus(*flatbuffers::GetRoot<api::Node>(ready_bytes.data()), clock.now + SimDuration(60'000))
                  .has_value());

  // The node lifecycle controller's marks: Ready and MemoryPressure Unknown.
  const std::string registered_at = FormatRfc3339(clock.now);
  for (auto& c : registered.status->conditions) {
    if (c->type == "Ready" || c->type == "MemoryPressure") {
      c->status = api::ConditionStatus::Unknown;
      c->reason = "NodeStatusUnknown";
      c->message = "Kubelet stopped posting node status.";
      c->last_transition_time = FormatRfc3339(clock.now + SimDuration(50'000));
    }
  }
  registered.status->conditions.erase(registered.status->conditions.begin() + 2);  // PIDPressure gone
  auto custom = std::make_unique<api::NodeConditionT>();
  custom->type = "NetworkUnavailable";
  custom->status = api::ConditionStatus::False;
  registered.status->conditions.push_back(std::move(custom));
  const std::string unknown_bytes = model::Pack(registered);
  const SimTime back = clock.now + SimDuration(90'000);
  std::optional<api::NodeT> reposted =
      RepostedNodeStatus(*flatbuffers::GetRoot<api::Node>(unknown_bytes.data()), back);
  REQUIRE(reposted.has_value());
  const api::NodeConditionT* ready = FindCondition(*reposted, "Ready");
  REQUIRE(ready != nullptr);
  CHECK(ready->status == api::ConditionStatus::True);
  CHECK(ready->reason == "KubeletReady");
  CHECK(ready->message == "kubelet is posting ready status");
  CHECK(ready->last_transition_time == FormatRfc3339(back));
  CHECK(ready->last_heartbeat_time == FormatRfc3339(back));
  const api::NodeConditionT* memory = FindCondition(*reposted, "MemoryPressure");
  REQUIRE(memory != nullptr);
  CHECK(memory->status == api::ConditionStatus::False);
  CHECK(memory->reason == "KubeletHasSufficientMemory");
  // Unchanged status: its transition time stays; a lost one comes back.
  const api::NodeConditionT* disk = FindCondition(*reposted, "DiskPressure");
  REQUIRE(disk != nullptr);
  CHECK(disk->last_transition_time == registered_at);
  CHECK(disk->last_heartbeat_time == FormatRfc3339(back));
  REQUIRE(FindCondition(*reposted, "PIDPressure") != nullptr);
  CHECK(FindCondition(*reposted, "NetworkUnavailable") != nullptr);  // not the kubelet's: kept
  CHECK(reposted->metadata->name == "n1");
  CHECK(reposted->spec->pod_cidr == registered.spec->pod_cidr);
}

TEST_CASE("Node.status.images lists the node's store as kubelet does: pulls added once done, largest first, 50 at most") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Load(R"(
nodes: [{name: n1, images: ["nginx:1.14.2"]}]
registry:
  - {name: nginx, tags: ["1.14.2"], sizeBytes: 44000000, pullMillis: 300}
  - {name: example/big, sizeBytes: 900000000, pullMillis: 2000}
)"));
  REQUIRE(config.ok());
  const std::vector<SimNode> nodes = *ResolveNodes(*config);
  const ImageCatalog catalog(config->registry);
  const RuntimeTiming timing;
  testing::FakeClock clock;
  const std::string registered = BuildNodeBytes(nodes[0], catalog, clock.now);
  const api::Node& stored = *flatbuffers::GetRoot<api::Node>(registered.data());
  NodeRuntime node(nodes[0], &catalog, &timing);

  // Nothing pulled: the stored list is the store's.
  CHECK_FALSE(NodeStatusUpdate(stored, node.Images(clock.now), nodes[0].internal_ip).has_value());

  // A pull in flight is not in the store yet; once done it is, first (larger).
  const PullTicket pull = node.RequestPull(*catalog.Resolve("example/big:v2"), clock.now);
  CHECK_FALSE(NodeStatusUpdate(stored, node.Images(pull.done - SimDuration(1)), nodes[0].internal_ip).has_value());
  std::optional<api::NodeT> posted = NodeStatusUpdate(stored, node.Images(pull.done), nodes[0].internal_ip);
  REQUIRE(posted.has_value());
  REQUIRE(posted->status->images.size() == 2);
  const auto& big = *posted->status->images[0];
  CHECK(big.names.size() == 2);
  CHECK(big.names[0].starts_with("docker.io/example/big@sha256:"));
  CHECK(big.names[1] == "docker.io/example/big:v2");
  CHECK(big.size_bytes == 900'000'000);
  CHECK(posted->status->images[1]->names[1] == "docker.io/library/nginx:1.14.2");
  CHECK(posted->metadata->name == "n1");  // the rest of the stored node kept
  CHECK(posted->status->conditions.size() == 4);
  const std::string after = model::Pack(*posted);
  CHECK_FALSE(NodeStatusUpdate(*flatbuffers::GetRoot<api::Node>(after.data()), node.Images(pull.done),
                               nodes[0].internal_ip)
                  .has_value());
  CHECK(posted->status->addresses.size() == 2);

  // A node now at another address (the pod network took it, or refused it,
  // since it was stored) posts that one, and keeps its Hostname.
  std::optional<api::NodeT> moved = NodeStatusUpdate(*flatbuffers::GetRoot<api::Node>(after.data()),
                                                     node.Images(pull.done), *ParseIpv4("127.0.0.1"));
  REQUIRE(moved.has_value());
  REQUIRE(moved->status->addresses.size() == 2);
  CHECK(moved->status->addresses[0]->type == "InternalIP");
  CHECK(moved->status->addresses[0]->address == "127.0.0.1");
  CHECK(moved->status->addresses[1]->type == "Hostname");
  CHECK(moved->status->images.size() == 2);

  // An image pulled by its digest and by its tag is one image, named by both;
  // one known by its digest only has that one name.
  const ResolvedImage tagged = *catalog.Resolve("example/big:v2");
  std::vector<CachedImage> store = node.Images(pull.done);
  store.push_back(CachedImage{tagged.image_id, tagged.image_id, tagged.size_bytes});
  store.push_back(CachedImage{"docker.io/example/big@sha256:" + std::string(64, 'a'),
                              "docker.io/example/big@sha256:" + std::string(64, 'a'), 5});
  std::vector<std::unique_ptr<api::ContainerImageT>> listed = NodeStatusImages(store);
  REQUIRE(listed.size() == 3);
  CHECK(listed[0]->names == big.names);
  CHECK(listed[2]->names == std::vector<std::string>{"docker.io/example/big@sha256:" + std::string(64, 'a')});

  // kubelet's nodeStatusMaxImages: the 50 largest.
  std::vector<CachedImage> many;
  for (int i = 0; i < 60; ++i) {
    const std::string name = "docker.io/library/app:" + std::to_string(i);
    many.push_back(CachedImage{name, "docker.io/library/app@sha256:" + std::to_string(i), 1000 + i});
  }
  listed = NodeStatusImages(many);
  REQUIRE(listed.size() == kNodeStatusMaxImages);
  CHECK(listed.front()->size_bytes == 1059);
  CHECK(listed.back()->size_bytes == 1010);
}

TEST_CASE("node leases are renewed every quarter of their duration, owned by their node") {
  testing::FakeClock clock;
  NodeLeases leases(40);
  CHECK(leases.renew_interval() == SimDuration(10'000));
  CHECK_FALSE(leases.NextDue().has_value());
  leases.Add("n1", "uid-n1", clock.now);
  std::vector<NodeLeases::Write> due = leases.Renew(clock.now);
  REQUIRE(due.size() == 1);
  CHECK(due[0].key == "/registry/leases/kube-node-lease/n1");
  std::unique_ptr<api::LeaseT> lease = model::Unpack<api::Lease>(due[0].bytes);
  CHECK(lease->api_version == "coordination.k8s.io/v1");
  CHECK(lease->metadata->name == "n1");
  CHECK(lease->metadata->namespace_ == "kube-node-lease");
  REQUIRE(lease->metadata->owner_references.size() == 1);
  CHECK(lease->metadata->owner_references[0]->kind == "Node");
  CHECK(lease->metadata->owner_references[0]->uid == "uid-n1");
  CHECK(lease->spec->holder_identity == "n1");
  CHECK(lease->spec->lease_duration_seconds == 40);
  CHECK(lease->spec->renew_time == FormatRfc3339Micro(clock.now));
  const std::string first_uid = lease->metadata->uid;

  // After its first write a lease's next renewal takes a share of the
  // interval of its own (nodes registered together spread out); from then
  // on, every interval.
  REQUIRE(leases.NextDue().has_value());
  const SimTime second = *leases.NextDue();
  CHECK(second >= clock.now);
  CHECK(second < clock.now + SimDuration(10'000));
  if (second > clock.now) CHECK(leases.Renew(second - SimDuration(1)).empty());
  due = leases.Renew(second);
  REQUIRE(due.size() == 1);
  lease = model::Unpack<api::Lease>(due[0].bytes);
  CHECK(lease->metadata->uid == first_uid);
  CHECK(lease->spec->renew_time == FormatRfc3339Micro(second));
  CHECK(leases.Renew(second + SimDuration(9'999)).empty());
  CHECK(leases.NextDue() == second + SimDuration(10'000));
  CHECK(leases.Renew(second + SimDuration(10'000)).size() == 1);
  const SimTime third = second + SimDuration(10'000);

  // A failed write is due again soon, not a whole interval later.
  leases.RetryAfter(due, SimDuration(200), third);
  CHECK(leases.NextDue() == third + SimDuration(200));
  CHECK(leases.Renew(third + SimDuration(200)).size() == 1);

  // Many nodes added at once renew at spread times after their first write.
  NodeLeases many(40);
  for (int i = 0; i < 100; ++i) many.Add("node-" + std::to_string(i), "uid", clock.now);
  CHECK(many.Renew(clock.now).size() == 100);
  size_t at_once = 0;
  for (int ms = 0; ms < 10'000; ms += 500) {
    const size_t renewed = many.Renew(clock.now + SimDuration(ms)).size();
    at_once = std::max(at_once, renewed);
  }
  CHECK(at_once < 30);

  leases.Remove("n1");
  CHECK(leases.Renew(clock.now + SimDuration(60'000)).empty());
}

TEST_CASE("a restarted agent renews the lease it held before") {
  testing::FakeClock clock;
  NodeLeases before(40);
  before.Add("n1", "uid-n1", clock.now - SimDuration(3'600'000));
  const std::string stored = before.Renew(clock.now - SimDuration(3'600'000)).at(0).bytes;
  std::unique_ptr<api::LeaseT> old = model::Unpack<api::Lease>(stored);
  old->metadata->uid = "kept-uid";
  const std::string stored_bytes = model::Pack(*old);

  NodeLeases after(40);
  after.Add("n1", "uid-n1", clock.now, flatbuffers::GetRoot<api::Lease>(stored_bytes.data()));
  std::unique_ptr<api::LeaseT> renewed = model::Unpack<api::Lease>(after.Renew(clock.now).at(0).bytes);
  CHECK(renewed->metadata->uid == "kept-uid");
  CHECK(renewed->metadata->creation_timestamp == FormatRfc3339(clock.now - SimDuration(3'600'000)));
  CHECK(renewed->spec->renew_time == FormatRfc3339Micro(clock.now));
}

TEST_CASE("nodeLeaseDurationSeconds is read and bounded") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Load("nodeLeaseDurationSeconds: 4"));
  REQUIRE(config.ok());
  CHECK(config->timing.node_lease_seconds == 4);
  CHECK(ParseRuntimeConfig(YAML::Load("{}"))->timing.node_lease_seconds == 40);
  Result<RuntimeConfig> zero = ParseRuntimeConfig(YAML::Load("nodeLeaseDurationSeconds: 0"));
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "runtime.nodeLeaseDurationSeconds: must be 1..3600");
}

}  // namespace
}  // namespace podflow::runtime
