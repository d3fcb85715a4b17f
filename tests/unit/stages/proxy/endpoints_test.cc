#include "stages/proxy/endpoints.h"

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"

namespace podflow::proxy {
namespace {

std::string Decode(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object.bytes;
}

std::string Pod(const std::string& name, const std::string& app, const std::string& ip, bool ready,
                const std::string& ns = "default") {
  return Decode("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns +
                ", uid: uid-" + name + ", labels: {app: " + app +
                "}}\nspec: {nodeName: node-1, containers: [{name: c, image: nginx, ports: "
                "[{name: http, containerPort: 8080}]}]}\nstatus: {phase: Running, podIP: \"" + ip +
                "\", conditions: [{type: Ready, status: \"" + (ready ? "True" : "False") + "\"}]}\n");
}

const char* kService = R"(apiVersion: v1
kind: Service
metadata: {name: web, namespace: default, labels: {tier: front}}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: metrics, port: 9090, targetPort: 9090}
)";

TEST_CASE("Endpoints list the matching pods' IPs, ready and not ready apart") {
  std::string svc = Decode(kService);
  std::vector<std::string> bytes = {
      Pod("b", "web", "10.244.0.7", true), Pod("a", "web", "10.244.0.5", true),
      Pod("c", "web", "10.244.0.9", false), Pod("d", "db", "10.244.0.11", true),
      Pod("e", "web", "10.244.1.2", true, "other"), Pod("f", "web", "", true)};
  std::vector<const api::Pod*> pods;
  for (const auto& b : bytes) pods.push_back(flatbuffers::GetRoot<api::Pod>(b.data()));
  api::EndpointsT ep = ComputeEndpoints(*flatbuffers::GetRoot<api::Service>(svc.data()), pods);
  CHECK(ep.metadata->name == "web");
  CHECK(ep.metadata->labels.size() == 1);
  REQUIRE(ep.subsets.size() == 1);
  const api::EndpointSubsetT& subset = *ep.subsets[0];
  REQUIRE(subset.addresses.size() == 2);
  CHECK(subset.addresses[0]->ip == "10.244.0.5");
  CHECK(subset.addresses[1]->ip == "10.244.0.7");
  CHECK(subset.addresses[0]->target_ref->name == "a");
  CHECK(subset.addresses[0]->node_name == "node-1");
  REQUIRE(subset.not_ready_addresses.size() == 1);
  CHECK(subset.not_ready_addresses[0]->ip == "10.244.0.9");
  REQUIRE(subset.ports.size() == 2);
  CHECK(subset.ports[0]->name == "http");
  CHECK(subset.ports[0]->port == 8080);  // the named container port
  CHECK(subset.ports[1]->port == 9090);
  // The result packs into a valid Endpoints object.
  CHECK(model::VerifyObject(model::Kind("Endpoints"), model::Pack(ep)).ok());
}

TEST_CASE("A service without matching pods has no subsets") {
  std::string svc = Decode(kService);
  std::string db = Pod("d", "db", "10.244.0.11", true);
  std::vector<const api::Pod*> pods = {flatbuffers::GetRoot<api::Pod>(db.data())};
  api::EndpointsT ep = ComputeEndpoints(*flatbuffers::GetRoot<api::Service>(svc.data()), pods);
  CHECK(ep.subsets.empty());
}

}  // namespace
}  // namespace podflow::proxy
