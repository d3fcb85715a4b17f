#include "stages/proxy/endpoints.h"

#include <random>

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"
#include "stages/proxy/endpoint_slices.h"

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
metadata: {name: web, namespace: default, labels: {tier: front, service.kubernetes.io/headless: ""}}
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


std::vector<const api::Pod*> Roots(const std::vector<std::string>& bytes) {
  std::vector<const api::Pod*> pods;
  for (const auto& b : bytes) pods.push_back(flatbuffers::GetRoot<api::Pod>(b.data()));
  return pods;
}

std::string Terminating(std::string pod) {
  auto native = model::Unpack<api::Pod>(pod);
  native->metadata->deletion_timestamp = "2026-11-28T10:00:00Z";
  return model::Pack(*native);
}

TEST_CASE("EndpointSlices: one endpoint per pod with kube's conditions, labels, owner and zone") {
  const std::string svc = Decode(kService);
  const api::Service& service = *flatbuffers::GetRoot<api::Service>(svc.data());
  const std::vector<std::string> bytes = {Pod("a", "web", "10.244.0.5", true), Pod("c", "web", "10.244.0.9", false),
                                          Terminating(Pod("t", "web", "10.244.0.3", true)),
                                          Pod("d", "db", "10.244.0.11", true)};
  const auto slices = DesiredSlices(service, Roots(bytes), [](const std::string& node) -> std::optional<std::string> {
    if (node == "node-1") return "zone-a";
    return std::nullopt;
  });
  REQUIRE(slices.size() == 1);
  const api::EndpointSliceT& slice = slices[0];
  CHECK(slice.api_version == "discovery.k8s.io/v1");
  CHECK(slice.address_type == api::AddressType::IPv4);
  CHECK(slice.metadata->generate_name == "web-");
  CHECK(slice.metadata->namespace_ == "default");
  std::map<std::string, std::string> labels;
  for (const auto& l : slice.metadata->labels) labels[l->key] = l->value;
  CHECK(labels == std::map<std::string, std::string>{{"endpointslice.kubernetes.io/managed-by",
                                                      "endpointslice-controller.k8s.io"},
                                                     {"kubernetes.io/service-name", "web"},
                                                     {"tier", "front"}});
  REQUIRE(slice.metadata->owner_references.size() == 1);
  CHECK(slice.metadata->owner_references[0]->kind == "Service");
  CHECK(slice.metadata->owner_references[0]->controller == true);
  CHECK(slice.metadata->owner_references[0]->block_owner_deletion == true);
  REQUIRE(slice.ports.size() == 2);
  CHECK(slice.ports[0]->name == "http");
  CHECK(slice.ports[0]->port == 8080);
  REQUIRE(slice.endpoints.size() == 3);  // sorted by address; the other app's pod left out
  const api::EndpointT& t = *slice.endpoints[0];
  CHECK(t.addresses == std::vector<std::string>{"10.244.0.3"});
  CHECK(t.conditions->ready == false);  // terminating
  CHECK(t.conditions->serving == true);
  CHECK(t.conditions->terminating == true);
  const api::EndpointT& a = *slice.endpoints[1];
  CHECK(a.conditions->ready == true);
  CHECK(a.conditions->terminating == false);
  CHECK(a.node_name == "node-1");
  CHECK(a.zone == "zone-a");
  CHECK(a.target_ref->name == "a");
  const api::EndpointT& c = *slice.endpoints[2];
  CHECK(c.conditions->ready == false);
  CHECK(c.conditions->serving == false);
  // The legacy Endpoints leave the terminating pod out.
  api::EndpointsT ep = ComputeEndpoints(service, Roots(bytes));
  REQUIRE(ep.subsets.size() == 1);
  CHECK(ep.subsets[0]->addresses.size() == 1);
  CHECK(ep.subsets[0]->not_ready_addresses.size() == 1);
}

TEST_CASE("EndpointSlices: a pod on a node that does not exist is left out unless not-ready addresses are published") {
  const std::vector<std::string> bytes = {Pod("a", "web", "10.244.0.5", true)};
  const ZoneOf no_nodes = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  const std::string svc = Decode(kService);
  const auto left_out = DesiredSlices(*flatbuffers::GetRoot<api::Service>(svc.data()), Roots(bytes), no_nodes);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out[0].endpoints.empty());  // the placeholder
  const std::string published = Decode(std::string(kService) + "  publishNotReadyAddresses: true\n");
  const auto kept = DesiredSlices(*flatbuffers::GetRoot<api::Service>(published.data()), Roots(bytes), no_nodes);
  REQUIRE(kept.size() == 1);
  REQUIRE(kept[0].endpoints.size() == 1);
  CHECK(kept[0].endpoints[0]->zone.empty());
}

TEST_CASE("EndpointSlices: a placeholder when nothing matches, 100 to a slice, reused by name when they change") {
  const std::string svc = Decode(kService);
  const api::Service& service = *flatbuffers::GetRoot<api::Service>(svc.data());
  std::mt19937_64 rng(1);
  SECTION("no pod: one empty slice") {
    const auto slices = DesiredSlices(service, {}, nullptr);
    REQUIRE(slices.size() == 1);
    CHECK(slices[0].ports.empty());
    CHECK(slices[0].endpoints.empty());
  }
  SECTION("250 pods: three slices") {
    std::vector<std::string> bytes;
    for (int i = 0; i < 250; ++i) {
      bytes.push_back(Pod("p" + std::to_string(i), "web", "10.244." + std::to_string(i / 200) + "." +
                                                             std::to_string(i % 200 + 1), true));
    }
    const auto slices = DesiredSlices(service, Roots(bytes), nullptr);
    REQUIRE(slices.size() == 3);
    CHECK(slices[0].endpoints.size() == 100);
    CHECK(slices[2].endpoints.size() == 50);
  }
  SECTION("reconciled with what is stored") {
    std::vector<std::string> bytes = {Pod("a", "web", "10.244.0.5", true)};
    SliceChanges first = ReconcileSlices(DesiredSlices(service, Roots(bytes), nullptr), {}, "2026-11-28T10:00:00Z", rng);
    REQUIRE(first.put.size() == 1);
    CHECK(first.deleted.empty());
    const std::string name = first.put[0].metadata->name;
    CHECK(name.rfind("web-", 0) == 0);
    CHECK(name.size() == 9);
    CHECK_FALSE(first.put[0].metadata->uid.empty());
    CHECK(first.put[0].metadata->creation_timestamp == "2026-11-28T10:00:00Z");
    const std::map<std::string, std::string> stored = {{name, model::Pack(first.put[0])}};
    // Nothing changed: nothing written.
    SliceChanges same = ReconcileSlices(DesiredSlices(service, Roots(bytes), nullptr), stored, "later", rng);
    CHECK(same.put.empty());
    CHECK(same.deleted.empty());
    // A pod added: the same slice, written again under its name and uid.
    bytes.push_back(Pod("b", "web", "10.244.0.6", true));
    SliceChanges grown = ReconcileSlices(DesiredSlices(service, Roots(bytes), nullptr), stored, "later", rng);
    REQUIRE(grown.put.size() == 1);
    CHECK(grown.put[0].metadata->name == name);
    CHECK(grown.put[0].metadata->uid == first.put[0].metadata->uid);
    CHECK(grown.put[0].metadata->creation_timestamp == "2026-11-28T10:00:00Z");
    CHECK(grown.put[0].endpoints.size() == 2);
    // A stored slice too many is deleted.
    const std::map<std::string, std::string> two = {{name, model::Pack(first.put[0])},
                                                    {"web-zzzzz", model::Pack(first.put[0])}};
    SliceChanges fewer = ReconcileSlices(DesiredSlices(service, Roots(bytes), nullptr), two, "later", rng);
    CHECK(fewer.put.size() == 1);
    CHECK(fewer.deleted.size() == 1);
  }
}

}  // namespace
}  // namespace podflow::proxy
