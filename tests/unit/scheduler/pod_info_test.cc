// PodInfo / NodeInfo / Snapshot: requests computed as Kubernetes'
// resourcehelper.PodRequests, allocatable as framework.NewResource.
#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;
constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

TEST_CASE("pod requests: sum of containers, max with init containers, plus overhead") {
  struct Case {
    const char* name;
    PodInfo pod;
    int64_t milli_cpu, memory, non_zero_cpu, non_zero_memory;
  };
  std::vector<Case> cases;
  cases.push_back({"one container", MakePod().Cpu("500m").Memory("1Gi").Info(), 500, kGi, 500, kGi});
  cases.push_back({"no requests: non-zero defaults 100m / 200Mi", MakePod().Container().Info(), 0, 0,
                   100, 200 * kMi});
  cases.push_back({"explicit zero is not missing", MakePod().Cpu("0").Memory("0").Info(), 0, 0, 0, 0});
  cases.push_back({"two containers add up",
                   MakePod().Container({{"cpu", "1"}, {"memory", "1Gi"}})
                       .Container({{"cpu", "250m"}})
                       .Info(),
                   1250, kGi, 1250, kGi + 200 * kMi});
  // max(sum(containers)=1000m, init 2000m) = 2000m; memory max(512Mi, 0) = 512Mi.
  cases.push_back({"init container bigger than containers",
                   MakePod().Container({{"cpu", "1"}, {"memory", "512Mi"}})
                       .InitContainer({{"cpu", "2"}})
                       .Info(),
                   2000, 512 * kMi, 2000, 512 * kMi});
  // Sidecar (restartPolicy Always) 500m counts with the containers: 1000 + 500 = 1500;
  // the later plain init container 1200m runs beside the sidecar: 1700 > 1500.
  cases.push_back({"sidecar counted with containers and beside later init containers",
                   MakePod().Container({{"cpu", "1"}, {"memory", "100Mi"}})
                       .InitContainer({{"cpu", "500m"}, {"memory", "100Mi"}}, /*sidecar=*/true)
                       .InitContainer({{"cpu", "1200m"}, {"memory", "10Mi"}})
                       .Info(),
                   1700, 200 * kMi, 1700, 200 * kMi});
  cases.push_back({"overhead added",
                   MakePod().Cpu("500m").Memory("1Gi").Overhead("cpu", "250m").Overhead("memory", "120Mi").Info(),
                   750, kGi + 120 * kMi, 750, kGi + 120 * kMi});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(c.pod.requests.milli_cpu == c.milli_cpu);
    CHECK(c.pod.requests.memory == c.memory);
    CHECK(c.pod.non_zero_milli_cpu == c.non_zero_cpu);
    CHECK(c.pod.non_zero_memory == c.non_zero_memory);
  }
}

TEST_CASE("pod requests: extended and ephemeral-storage resources") {
  PodInfo pod = MakePod().Request("nvidia.com/gpu", "2").Request("ephemeral-storage", "1Gi").Info();
  CHECK(pod.requests.Scalar("nvidia.com/gpu") == 2);
  CHECK(pod.requests.ephemeral_storage == kGi);
  CHECK(IsScalarResourceName("nvidia.com/gpu"));
  CHECK(IsScalarResourceName("hugepages-2Mi"));
  CHECK_FALSE(IsScalarResourceName("cpu"));
  CHECK_FALSE(IsScalarResourceName("requests.nvidia.com/gpu"));
}

TEST_CASE("pod info: identity, scheduling constraints, host ports sanitized") {
  PodInfo pod = MakePod()
                    .Name("web")
                    .Namespace("prod")
                    .Priority(7)
                    .NodeSelector("disktype", "ssd")
                    .Toleration("k", api::TolerationOperator::Exists, "", api::TaintEffect::NoSchedule)
                    .HostPort(8080)
                    .HostPort(53, api::Protocol::UDP, "10.0.0.1")
                    .Info();
  CHECK(pod.FullName() == "prod/web");
  CHECK(pod.uid == "uid-web");
  CHECK(pod.priority == 7);
  REQUIRE(pod.node_selector.size() == 1);
  CHECK(pod.tolerations.size() == 1);
  REQUIRE(pod.host_ports.size() == 2);
  CHECK(pod.host_ports[0] == HostPort{api::Protocol::TCP, "0.0.0.0", 8080});
  CHECK(pod.host_ports[1] == HostPort{api::Protocol::UDP, "10.0.0.1", 53});
  CHECK_FALSE(pod.required_node_affinity.has_value());
}

TEST_CASE("a quantity that does not parse is Invalid, naming the field") {
  std::string bytes = MakePod().Cpu("lots").Bytes();
  auto info = PodInfoFromPod(*flatbuffers::GetRoot<api::Pod>(bytes.data()));
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == Code::kInvalid);
  CHECK_THAT(info.status().message(), Catch::Contains("spec.containers[0].resources.requests"));
}

TEST_CASE("node info: allocatable, taints, AddPod / RemovePod keep the sums") {
  NodeInfo node = MakeNode()
                      .Name("n1")
                      .Cpu("4")
                      .Memory("8Gi")
                      .Allocatable("ephemeral-storage", "100Gi")
                      .Allocatable("nvidia.com/gpu", "2")
                      .Taint("dedicated", "gpu", api::TaintEffect::NoSchedule)
                      .Info();
  CHECK(node.name == "n1");
  CHECK(node.allocatable.milli_cpu == 4000);
  CHECK(node.allocatable.memory == 8 * kGi);
  CHECK(node.allocatable.ephemeral_storage == 100 * kGi);
  CHECK(node.allocatable.allowed_pods == 110);
  CHECK(node.allocatable.Scalar("nvidia.com/gpu") == 2);
  REQUIRE(node.taints.size() == 1);

  auto pod = std::make_shared<const PodInfo>(MakePod().Name("a").Container().HostPort(80).Info());
  node.AddPod(pod);
  CHECK(node.requested().milli_cpu == 0);
  CHECK(node.non_zero_milli_cpu() == 100);
  CHECK(node.non_zero_memory() == 200 * kMi);
  CHECK(node.used_ports().size() == 1);
  CHECK(node.RemovePod("uid-a").ok());
  CHECK(node.non_zero_milli_cpu() == 0);
  CHECK(node.used_ports().empty());
  CHECK(node.RemovePod("uid-a").code() == Code::kNotFound);
}

TEST_CASE("snapshot: assume a pod on a node, forget it, replace a node keeping pods") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("2").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("2").Info()).ok());
  PodInfo pod = MakePod().Name("p").Cpu("1").Info();
  pod.node_name = "zzz";
  CHECK(snap.AddPod(pod).code() == Code::kNotFound);
  pod.node_name = "b";
  REQUIRE(snap.AddPod(pod).ok());
  CHECK(snap.AddPod(pod).code() == Code::kAlreadyExists);
  CHECK(snap.FindNode("b")->requested().milli_cpu == 1000);
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("8").Info()).ok());
  CHECK(snap.FindNode("b")->allocatable.milli_cpu == 8000);
  CHECK(snap.FindNode("b")->requested().milli_cpu == 1000);
  CHECK(snap.nodes()[1].name == "b");
  REQUIRE(snap.RemoveNode("a").ok());
  CHECK(snap.FindPod("uid-p") != nullptr);
  REQUIRE(snap.RemovePod("uid-p").ok());
  CHECK(snap.FindNode("b")->requested().milli_cpu == 0);
  CHECK(snap.RemovePod("uid-p").code() == Code::kNotFound);
}

}  // namespace
}  // namespace podflow::scheduler
