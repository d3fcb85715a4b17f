#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "stages/runtime/runtime.h"

namespace podflow::runtime {
namespace {

Result<RuntimeConfig> Parse(const std::string& yaml) {
  return ParseRuntimeConfig(YAML::Load(yaml));
}

TEST_CASE("runtime config: the default cluster's section parses and resolves") {
  Result<RuntimeConfig> config = Parse(R"(
clusterCIDR: 10.244.0.0/16
nodes:
  - name: node-1
    labels: {disktype: ssd}
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
    capacity: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: 2}
  - name: node-2
    capacity: {cpu: 4000m, memory: 8Gi}
registry:
  - {name: nginx, tags: ["1.14.2", latest], sizeBytes: 44000000, pullMillis: 300}
containerStartMillis: 20
)");
  REQUIRE(config.ok());
  CHECK_FALSE(config->registry.open);
  CHECK(config->registry.images.size() == 1);
  CHECK(config->registry.images[0].pull_time == SimDuration(300));
  CHECK(config->timing.container_start == SimDuration(20));
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 2);
  const SimNode& n1 = (*nodes)[0];
  CHECK(n1.labels.at("disktype") == "ssd");
  CHECK(n1.taints.at(0).effect == "NoSchedule");
  CHECK(n1.capacity.at("nvidia.com/gpu") == "2");
  CHECK(n1.capacity.at("ephemeral-storage") == "100Gi");  // default filled
  CHECK(n1.pod_cidr.ToString() == "10.244.0.0/24");
  CHECK(FormatIpv4(n1.internal_ip) == "192.168.0.2");
  const SimNode& n2 = (*nodes)[1];
  CHECK(n2.capacity.at("cpu") == "4");  // canonical form of 4000m
  CHECK(n2.capacity.at("pods") == "110");
  CHECK(n2.pod_cidr.ToString() == "10.244.1.0/24");
  CHECK(FormatIpv4(n2.internal_ip) == "192.168.0.3");
}

TEST_CASE("runtime config: a template names node-1..node-N and assigns /24s in order") {
  Result<RuntimeConfig> config = Parse(R"(
clusterCIDR: 10.244.0.0/16
nodes:
  - {name: special, podCIDR: 10.244.0.0/24}
nodeTemplate:
  count: 3
  labels: {pool: general}
  capacity: {cpu: "8"}
)");
  REQUIRE(config.ok());
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 4);
  CHECK((*nodes)[1].name == "node-1");
  CHECK((*nodes)[3].name == "node-3");
  CHECK((*nodes)[3].labels.at("pool") == "general");
  CHECK((*nodes)[3].capacity.at("cpu") == "8");
  // 10.244.0.0/24 is claimed explicitly: the template starts at .1.0.
  CHECK((*nodes)[1].pod_cidr.ToString() == "10.244.1.0/24");
  CHECK((*nodes)[3].pod_cidr.ToString() == "10.244.3.0/24");
}

TEST_CASE("runtime config: what runs a node's containers, for all or per node") {
  Result<RuntimeConfig> config = Parse(R"(
type: process
nodes:
  - {name: real}
  - {name: sim, type: simulated}
nodeTemplate: {count: 1, type: simulated}
)");
  REQUIRE(config.ok());
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 3);
  CHECK((*nodes)[0].type == RuntimeType::kProcess);
  CHECK((*nodes)[1].type == RuntimeType::kSimulated);
  CHECK((*nodes)[2].type == RuntimeType::kSimulated);
  Result<RuntimeConfig> plain = Parse("nodes: [{name: a}, {name: b, type: process}]\n");
  REQUIRE(plain.ok());
  nodes = ResolveNodes(*plain);
  REQUIRE(nodes.ok());
  CHECK((*nodes)[0].type == RuntimeType::kSimulated);
  CHECK((*nodes)[1].type == RuntimeType::kProcess);
  CHECK(plain->pod_network);
}

TEST_CASE("runtime config: a process node's address is handed out from nodeIPRange unless given; podNetwork; "
          "clusterDNS and clusterDomain") {
  Result<RuntimeConfig> config =
      Parse("type: process\nnodeIPRange: 172.20.0.0/16\npodNetwork: false\n"
            "nodes: [{name: a}, {name: b, internalIP: 172.20.9.9}]\n");
  REQUIRE(config.ok());
  CHECK_FALSE(config->pod_network);
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  REQUIRE(nodes.ok());
  // The runtime puts a process node without a pod network on this
  // machine's loopback; on one it keeps this address.
  CHECK(FormatIpv4((*nodes)[0].internal_ip) == "172.20.0.2");
  CHECK_FALSE((*nodes)[0].internal_ip_given);
  CHECK((*nodes)[0].node_network.ToString() == "172.20.0.0/16");
  CHECK(FormatIpv4((*nodes)[1].internal_ip) == "172.20.9.9");
  CHECK((*nodes)[1].internal_ip_given);
  Result<RuntimeConfig> bad = Parse("podNetwork: maybe\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "runtime.podNetwork: must be true or false");
  // kubelet's clusterDNS and clusterDomain.
  CHECK(config->cluster_dns == std::vector<std::string>{"10.96.0.10"});
  CHECK(config->cluster_domain == "cluster.local");
  Result<RuntimeConfig> dns = Parse("clusterDNS: [10.100.0.10, 10.100.0.11]\nclusterDomain: corp.local.\n");
  REQUIRE(dns.ok());
  CHECK(dns->cluster_dns == std::vector<std::string>{"10.100.0.10", "10.100.0.11"});
  CHECK(dns->cluster_domain == "corp.local");
  Result<RuntimeConfig> bad_dns = Parse("clusterDNS: [10.100.0]\n");
  REQUIRE_FALSE(bad_dns.ok());
  CHECK(bad_dns.status().message() == "runtime.clusterDNS[0]: must be an IPv4 address such as 10.96.0.10, not \"10.100.0\"");
  CHECK_FALSE(Parse("clusterDomain: a..b\n").ok());
}

TEST_CASE("runtime config: errors name the path") {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"nodes: [{name: a, capacity: {cpu: lots}}]", "runtime.nodes[0].capacity.cpu: "},
      {"nodes: [{name: a}, {name: a}]", "runtime.nodes[1].name: Duplicate value: \"a\""},
      {"nodes: [{name: a, taints: [{key: k, effect: Sometimes}]}]",
       "runtime.nodes[0].taints[0].effect: Unsupported value: \"Sometimes\""},
      {"nodes: [{name: a, lables: {}}]", "runtime.nodes[0].lables: unknown key"},
      {"nodes: [{capacity: {}}]", "runtime.nodes[0].name: Required value"},
      {"clusterCIDR: 10.244.0.1/16", "runtime.clusterCIDR: invalid CIDR"},
      {"registry: [{name: nginx, pullMillis: soon}]", "runtime.registry[0].pullMillis: "},
      {"registry: [{tags: [a]}]", "runtime.registry[0].name: Required value"},
      {"nodeTemplate: {count: -1}", "runtime.nodeTemplate.count: "},
      {"nodes: [{name: a, images: [redis]}]", "runtime.nodes[0].images[0]: image \"redis\""},
      {"clusterCIDR: 10.244.0.0/23\nnodeTemplate: {count: 3}", "runtime.nodeTemplate: no podCIDR"},
      {"nodes: {name: a}", "runtime.nodes: must be a list"},
      {"type: docker", "runtime.type: Unsupported value: \"docker\": supported values: \"simulated\", \"process\""},
      {"nodes: [{name: a, type: vm}]", "runtime.nodes[0].type: Unsupported value: \"vm\""},
      {"nodeStatusUpdateMillis: 10", "runtime.nodeStatusUpdateMillis: must be 100..3600000"},
      {"ulimits: [nofile=10:20, files=1]", "runtime.ulimits[1]: ulimit \"files=1\": expected NAME=SOFT:HARD"},
      {"ulimits: [nofile=20:10]", "runtime.ulimits[0]: ulimit \"nofile=20:10\": the soft limit is above the hard one"},
      {"ulimits: [nofile=many]", "runtime.ulimits[0]: ulimit \"nofile=many\": \"many\" is not a limit"},
      {"ulimits: [\"core=-1:5\"]", "runtime.ulimits[0]: ulimit \"core=-1:5\": the soft limit is above"},
      {"ulimits: nofile=1", "runtime.ulimits: must be a list"},
      {"ulimits: [nofile=1, nproc=2, nofile=3]", "runtime.ulimits[2]: Duplicate value: \"nofile\""},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    Result<RuntimeConfig> config = Parse(c.yaml);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().code() == Code::kInvalid);
    CHECK_THAT(config.status().message(), Catch::StartsWith(c.message));
  }
}

TEST_CASE("runtime config: an absent section is the defaults") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Node());
  REQUIRE(config.ok());
  CHECK(config->cluster_cidr == "10.244.0.0/16");
  CHECK(config->timing.backoff_initial == SimDuration(10'000));
  CHECK(config->timing.node_status_update == SimDuration(10'000));
}

TEST_CASE("runtime config: ulimits as CRI-O's default_ulimits write them") {
  Result<RuntimeConfig> config = Parse("ulimits: [nofile=1024:524288, nproc=4096, \"core=-1\", memlock=unlimited:-1]");
  REQUIRE(config.ok());
  REQUIRE(config->ulimits.size() == 4);
  CHECK(config->ulimits[0].resource == RLIMIT_NOFILE);
  CHECK(config->ulimits[0].soft == 1024);
  CHECK(config->ulimits[0].hard == 524288);
  CHECK(config->ulimits[1].resource == RLIMIT_NPROC);
  CHECK(config->ulimits[1].soft == 4096);
  CHECK(config->ulimits[1].hard == 4096);
  CHECK(config->ulimits[2].resource == RLIMIT_CORE);
  CHECK(config->ulimits[2].soft == RLIM_INFINITY);
  CHECK(config->ulimits[3].hard == RLIM_INFINITY);
  CHECK(Parse("{}")->ulimits.empty());
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("runtime config: config/default.yaml's runtime section") {
  const YAML::Node root = YAML::LoadFile(PODFLOW_SOURCE_DIR "/config/default.yaml");
  Result<RuntimeConfig> config = ParseRuntimeConfig(root["runtime"]);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  REQUIRE(nodes.ok());
  CHECK(nodes->size() == 3);
  CHECK(nodes->at(2).capacity.at("memory") == "4Gi");
  // The embedded default's registry is open: the docs' images exist.
  const ImageCatalog catalog(config->registry);
  CHECK(catalog.Resolve("nginx:1.14.2"));
  CHECK(catalog.Resolve("registry.k8s.io/busybox"));
  CHECK(catalog.Resolve("k8s.gcr.io/echoserver:1.4"));
  CHECK_FALSE(catalog.Resolve("nginx:9.9"));
}

}  // namespace
}  // namespace podflow::runtime
