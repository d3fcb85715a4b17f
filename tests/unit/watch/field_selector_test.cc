#include "watch/field_selector.h"

#include <catch2/catch.hpp>

#include "model/codec.h"

namespace podflow {
namespace {

KeyValue PodKv(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  REQUIRE((*docs)[0].status.ok());
  KeyValue kv;
  kv.key = "/registry/pods/default/" + (*docs)[0].object.name;
  kv.value = (*docs)[0].object.bytes;
  return kv;
}

const char* kBound = R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {nodeName: node-1, containers: [{name: a, image: nginx}]}
status: {phase: Running}
)";

const char* kPending = R"(apiVersion: v1
kind: Pod
metadata: {name: queued, namespace: team-a}
spec: {containers: [{name: a, image: nginx}]}
status: {phase: Pending}
)";

TEST_CASE("The node agents' filter matches pods bound to their node only") {
  WatchFilter on_node_1 = PodNodeNameFilter("node-1");
  CHECK(on_node_1(PodKv(kBound)));
  CHECK_FALSE(on_node_1(PodKv(kPending)));
  CHECK_FALSE(PodNodeNameFilter("node-2")(PodKv(kBound)));
  KeyValue garbage;
  garbage.value = "not a pod";
  CHECK_FALSE(on_node_1(garbage));
}

TEST_CASE("Field selectors combine requirements with AND") {
  auto bound_running = PodFieldSelector("spec.nodeName=node-1,status.phase==Running");
  REQUIRE(bound_running.ok());
  CHECK((*bound_running)(PodKv(kBound)));
  CHECK_FALSE((*bound_running)(PodKv(kPending)));

  auto unscheduled = PodFieldSelector("spec.nodeName=");
  REQUIRE(unscheduled.ok());
  CHECK((*unscheduled)(PodKv(kPending)));
  CHECK_FALSE((*unscheduled)(PodKv(kBound)));

  auto not_default = PodFieldSelector("metadata.namespace!=default");
  REQUIRE(not_default.ok());
  CHECK((*not_default)(PodKv(kPending)));
  CHECK_FALSE((*not_default)(PodKv(kBound)));
}

TEST_CASE("Unsupported or malformed selectors are rejected") {
  auto unknown = PodFieldSelector("spec.replicas=3");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() == "field label not supported: spec.replicas");
  CHECK_FALSE(PodFieldSelector("spec.nodeName").ok());
  CHECK_FALSE(PodFieldSelector("=node-1").ok());
  CHECK_FALSE(PodFieldSelector("spec.nodeName=a,,status.phase=Running").ok());
}

}  // namespace
}  // namespace podflow
