// Service node ports: the allocator, their handing out on create and their
// keeping on update, as kube-apiserver does them.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

TEST_CASE("node port allocator: the range's upper band first, the lower band when it is full",
          "[admission][nodeport]") {
  std::mt19937_64 rng(7);
  const NodePortAllocator ports;  // 30000-32767: the lower band is 30000-30085 (2768/32 = 86)
  CHECK(ports.range() == "30000-32767");
  std::set<int32_t> seen;
  for (int i = 0; i < 200; ++i) {
    Result<int32_t> port = ports.Allocate({}, rng);
    REQUIRE(port.ok());
    CHECK(*port >= 30086);
    CHECK(*port <= 32767);
    seen.insert(*port);
  }
  CHECK(seen.size() > 100);  // a random start each time, not the lowest free port

  auto small = NodePortAllocator::Create("31000-31019");  // 20 ports: a band of 16, then 4
  REQUIRE(small.ok());
  std::set<int32_t> taken;
  for (int i = 0; i < 4; ++i) {
    Result<int32_t> port = small->Allocate(taken, rng);
    REQUIRE(port.ok());
    CHECK(*port >= 31016);
    taken.insert(*port);
  }
  Result<int32_t> lower = small->Allocate(taken, rng);
  REQUIRE(lower.ok());
  CHECK(*lower < 31016);
  for (int32_t p = 31000; p < 31016; ++p) taken.insert(p);
  Result<int32_t> none = small->Allocate(taken, rng);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "range is full");
}

TEST_CASE("node port allocator: a port asked for", "[admission][nodeport]") {
  const NodePortAllocator ports;
  CHECK(ports.Check(30080, {}).ok());
  CHECK(ports.Check(30080, {30080}).message() == "provided port is already allocated");
  CHECK(ports.Check(8080, {}).message() ==
        "provided port is not in the valid range. The range of valid ports is 30000-32767");
  CHECK(ports.Check(32768, {}).message() ==
        "provided port is not in the valid range. The range of valid ports is 30000-32767");
  for (std::string_view bad : {"", "30000-", "x-1", "32767-30000", "0-10", "30000-70000"}) {
    INFO(bad);
    CHECK_FALSE(NodePortAllocator::Create(bad).ok());
  }
  CHECK(NodePortAllocator::Create("20000-20010")->Check(20010, {}).ok());
}

constexpr std::string_view kNodePort = R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
)";

Result<std::unique_ptr<api::ServiceT>> Admitted(std::string_view manifest, std::set<int32_t> taken = {}) {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifest, {.taken_node_ports = std::move(taken)});
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 1);
  if (!reply.results[0].admitted()) return Status::Invalid(reply.results[0].status.message);
  return model::Unpack<api::Service>(reply.results[0].bytes);
}

TEST_CASE("Admit hands out node ports", "[admission][nodeport]") {
  SECTION("one per port, from the range, none taken twice") {
    auto svc = Admitted(std::string(kNodePort) + "  ports: [{name: http, port: 80}, {name: https, port: 443}]\n");
    REQUIRE(svc.ok());
    const int32_t a = (*svc)->spec->ports[0]->node_port, b = (*svc)->spec->ports[1]->node_port;
    CHECK(a >= 30000);
    CHECK(a <= 32767);
    CHECK(b >= 30000);
    CHECK(a != b);
  }
  SECTION("TCP and UDP of one port number share one") {
    auto svc = Admitted(std::string(kNodePort) +
                        "  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]\n");
    REQUIRE(svc.ok());
    CHECK((*svc)->spec->ports[0]->node_port != 0);
    CHECK((*svc)->spec->ports[0]->node_port == (*svc)->spec->ports[1]->node_port);
  }
  SECTION("one asked for is kept; a taken one is refused in kube-apiserver's words") {
    const std::string manifest = std::string(kNodePort) + "  ports: [{port: 80, nodePort: 30080}]\n";
    auto svc = Admitted(manifest);
    REQUIRE(svc.ok());
    CHECK((*svc)->spec->ports[0]->node_port == 30080);
    auto refused = Admitted(manifest, {30080});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message() ==
          "Service \"web\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated");
  }
  SECTION("out of the range") {
    auto refused = Admitted(std::string(kNodePort) + "  ports: [{port: 80, nodePort: 8080}]\n");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message() ==
          "Service \"web\" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the "
          "valid range. The range of valid ports is 30000-32767");
  }
  SECTION("two ports asking for one node port") {
    auto same_protocol = Admitted(std::string(kNodePort) +
                                  "  ports: [{name: a, port: 80, nodePort: 30080}, {name: b, port: 81, nodePort: 30080}]\n");
    REQUIRE_FALSE(same_protocol.ok());
    // Allocation comes before validation: the second is refused by the
    // allocator, not as a duplicate.
    CHECK(same_protocol.status().message() ==
          "Service \"web\" is invalid: spec.ports[1].nodePort: Invalid value: 30080: provided port is already "
          "allocated");
    auto across = Admitted(std::string(kNodePort) +
                           "  ports: [{name: a, port: 80, nodePort: 30080}, {name: b, port: 81, protocol: UDP, "
                           "nodePort: 30080}]\n");
    REQUIRE_FALSE(across.ok());
    CHECK(across.status().message() ==
          "Service \"web\" is invalid: spec.ports[1].nodePort: Invalid value: 30080: provided port is already "
          "allocated");
  }
  SECTION("ClusterIP gets none; LoadBalancer gets them unless allocateLoadBalancerNodePorts is false") {
    auto cluster_ip = Admitted("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n");
    REQUIRE(cluster_ip.ok());
    CHECK((*cluster_ip)->spec->ports[0]->node_port == 0);
    auto lb = Admitted("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, "
                       "externalTrafficPolicy: Local, ports: [{port: 80}]}\n");
    REQUIRE(lb.ok());
    CHECK((*lb)->spec->ports[0]->node_port != 0);
    CHECK((*lb)->spec->health_check_node_port != 0);
    CHECK((*lb)->spec->health_check_node_port != (*lb)->spec->ports[0]->node_port);
    auto lb_none = Admitted("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, "
                            "allocateLoadBalancerNodePorts: false, ports: [{port: 80}]}\n");
    REQUIRE(lb_none.ok());
    CHECK((*lb_none)->spec->ports[0]->node_port == 0);
  }
  SECTION("a health check port asked for that is taken: the server's internal error") {
    auto refused = Admitted("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, "
                            "externalTrafficPolicy: Local, healthCheckNodePort: 32000, ports: [{port: 80}]}\n",
                            {32000});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message() ==
          "Internal error occurred: failed to allocate requested HealthCheck NodePort 32000: provided port is already "
          "allocated");
    auto cluster = Admitted("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: NodePort, "
                            "healthCheckNodePort: 32000, ports: [{port: 80}]}\n");
    REQUIRE_FALSE(cluster.ok());
    CHECK(cluster.status().message() ==
          "Service \"web\" is invalid: spec.healthCheckNodePort: Invalid value: 32000: may only be set when `type` "
          "is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'");
  }
  SECTION("the range is the config's") {
    AdmissionConfig config = testing::TestConfig();
    config.node_ports = *NodePortAllocator::Create("40000-40001");
    Admission admission = testing::TestAdmission(std::move(config));
    AdmitReply reply = admission.Admit(testing::kAdminToken,
                                       std::string(kNodePort) + "  ports: [{port: 80}]\n", {.taken_node_ports = {40000}});
    REQUIRE(reply.results.size() == 1);
    REQUIRE(reply.results[0].admitted());
    CHECK(model::Unpack<api::Service>(reply.results[0].bytes)->spec->ports[0]->node_port == 40001);
    reply = admission.Admit(testing::kAdminToken, std::string(kNodePort) + "  ports: [{port: 80}]\n",
                            {.taken_node_ports = {40000, 40001}});
    CHECK(KubectlMessage(reply.results[0].status) ==
          "Error from server (InternalError): Internal error occurred: failed to allocate a nodePort: range is full");
  }
}

TEST_CASE("An update keeps a Service's node ports, hands out new ones, and drops them with the type",
          "[admission][nodeport]") {
  auto created = testing::AdmitOne(std::string(kNodePort) + "  ports: [{name: http, port: 80}]\n");
  REQUIRE(created.admitted());
  const int32_t kept = model::Unpack<api::Service>(created.bytes)->spec->ports[0]->node_port;
  const StoredObject stored{created.key, created.bytes, 3};
  Admission admission = testing::TestAdmission();
  SECTION("left out: the stored port's of the same name; a new port gets its own") {
    ChangeOutcome out = admission.Update(model::Kind("Service"), "default", "web", "",
                                         std::string(kNodePort) +
                                             "  ports: [{name: http, port: 80}, {name: https, port: 443}]\n",
                                         stored, {.cluster = {.taken_node_ports = {30500}}});
    INFO(out.status.message);
    REQUIRE(out.ok());
    auto svc = model::Unpack<api::Service>(out.bytes);
    CHECK(svc->spec->ports[0]->node_port == kept);
    CHECK(svc->spec->ports[1]->node_port != 0);
    CHECK(svc->spec->ports[1]->node_port != kept);
  }
  SECTION("one another Service holds is refused") {
    ChangeOutcome out = admission.Patch(model::Kind("Service"), "default", "web", "", model::PatchType::kMerge,
                                        R"({"spec":{"ports":[{"name":"http","port":80,"nodePort":30500}]}})", stored,
                                        {.cluster = {.taken_node_ports = {30500}}});
    CHECK(out.status.message ==
          "Service \"web\" is invalid: spec.ports[0].nodePort: Invalid value: 30500: provided port is already "
          "allocated");
  }
  SECTION("a value the new spec gives another port is not restored by name") {
    ChangeOutcome out = admission.Update(model::Kind("Service"), "default", "web", "",
                                         std::string(kNodePort) + "  ports: [{name: http, port: 80}, {name: alt, "
                                                                  "port: 8080, nodePort: " +
                                             std::to_string(kept) + "}]\n",
                                         stored);
    INFO(out.status.message);
    REQUIRE(out.ok());
    auto svc = model::Unpack<api::Service>(out.bytes);
    CHECK(svc->spec->ports[1]->node_port == kept);
    CHECK(svc->spec->ports[0]->node_port != 0);
    CHECK(svc->spec->ports[0]->node_port != kept);
  }
  SECTION("a LoadBalancer that turns to the Cluster policy gives its health check port back") {
    auto lb = testing::AdmitOne("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, "
                                "externalTrafficPolicy: Local, ports: [{name: http, port: 80}]}\n");
    REQUIRE(lb.admitted());
    REQUIRE(model::Unpack<api::Service>(lb.bytes)->spec->health_check_node_port != 0);
    const std::string lb_spec = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, ";
    ChangeOutcome same = admission.Update(model::Kind("Service"), "default", "web", "",
                                          lb_spec + "externalTrafficPolicy: Local, ports: [{name: http, port: 80}]}\n",
                                          StoredObject{lb.key, lb.bytes, 3});
    REQUIRE(same.ok());
    CHECK(model::Unpack<api::Service>(same.bytes)->spec->health_check_node_port ==
          model::Unpack<api::Service>(lb.bytes)->spec->health_check_node_port);
    // A patch carries the stored port along; it is dropped all the same.
    ChangeOutcome cluster =
        admission.Patch(model::Kind("Service"), "default", "web", "", model::PatchType::kMerge,
                        R"({"spec":{"externalTrafficPolicy":"Cluster"}})", StoredObject{lb.key, lb.bytes, 3}, {});
    INFO(cluster.status.message);
    REQUIRE(cluster.ok());
    CHECK(model::Unpack<api::Service>(cluster.bytes)->spec->health_check_node_port == 0);
  }
  SECTION("the ports it holds are not checked again: a label change after the range moved is taken") {
    AdmissionConfig config = testing::TestConfig();
    config.node_ports = *NodePortAllocator::Create("40000-40001");
    Admission moved = testing::TestAdmission(std::move(config));
    ChangeOutcome out = moved.Patch(model::Kind("Service"), "default", "web", "", model::PatchType::kMerge,
                                    R"({"metadata":{"labels":{"tier":"front"}}})", stored, {});
    INFO(out.status.message);
    CHECK(out.ok());
  }
  SECTION("type ClusterIP applied over it drops the node port it kept") {
    ChangeOutcome out = admission.Update(model::Kind("Service"), "default", "web", "",
                                         "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: "
                                         "ClusterIP, selector: {app: web}, ports: [{name: http, port: 80, nodePort: " +
                                             std::to_string(kept) + "}]}\n",
                                         stored);
    INFO(out.status.message);
    REQUIRE(out.ok());
    CHECK(model::Unpack<api::Service>(out.bytes)->spec->ports[0]->node_port == 0);
  }
}

}  // namespace
}  // namespace podflow::admission

