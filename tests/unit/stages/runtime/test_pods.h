// Fixtures for runtime and status tests: assignments, a catalog and a node
// (the pod builder and the fake clock are tests/support/pod_builder.h's).
// Shared with tests/unit/stages/status.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "model/codec.h"
#include "pod_builder.h"
#include "pod_generated.h"
#include "stages/runtime/runtime.h"

namespace podflow::runtime::testing {

using ::podflow::testing::FakeClock;
using ::podflow::testing::PodBuilder;

inline PodAssignment Assign(const PodBuilder& pod, int64_t revision = 7) {
  auto shared = pod.Shared();
  return PodAssignment{"/registry/pods/default/" + shared->metadata->name, revision, shared};
}

inline std::vector<CatalogImage> TestRegistry() {
  return {
      {"nginx", {"1.14.2", "1.25", "latest"}, 44'000'000, SimDuration(500), {}},
      {"busybox", {"1.28", "1.36", "latest"}, 2'200'000, SimDuration(100), {}},
  };
}

inline SimNode TestNode(std::string name = "node-1", std::string pod_cidr = "10.244.1.0/24") {
  SimNode n;
  n.name = std::move(name);
  n.capacity = CapacityDefaults();
  n.pod_cidr = *ParseCidr(pod_cidr);
  n.internal_ip = *ParseIpv4("192.168.0.2");
  return n;
}

// The one Pod of a manifest, bound to node-1 with uid "uid-1".
inline std::shared_ptr<const api::PodT> PodFromYaml(const std::string& yaml) {
  Result<std::vector<model::Decoded>> decoded = model::DecodeManifests(yaml);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  INFO(decoded->at(0).status.ToString());
  REQUIRE(decoded->at(0).status.ok());
  auto pod = std::shared_ptr<api::PodT>(
      flatbuffers::GetRoot<api::Pod>(decoded->at(0).object.bytes.data())->UnPack());
  pod->metadata->uid = "uid-1";
  if (pod->metadata->namespace_.empty()) pod->metadata->namespace_ = "default";  // as admission sets it
  pod->spec->node_name = "node-1";
  return pod;
}

// The waiting reason of a container status, or "" when not waiting.
inline std::string WaitingReason(const api::ContainerStatusT& s) {
  return s.state && s.state->waiting ? s.state->waiting->reason : "";
}

}  // namespace podflow::runtime::testing
