// Fixtures for runtime and status tests: a pod builder, a catalog and a
// fake clock. Shared with tests/unit/stages/status.
#pragma once

#include <memory>
#include <string>

#include "pod_generated.h"
#include "stages/runtime/runtime.h"

namespace podflow::runtime::testing {

// The clock is a value the test moves.
struct FakeClock {
  SimTime now = FromUnixMillis(1'714'564'800'000);  // 2024-05-01T12:00:00Z
  SimTime Advance(int64_t ms) { return now += SimDuration(ms); }
};

class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    pod_.api_version = "v1";
    pod_.kind = "Pod";
    pod_.metadata = std::make_unique<api::ObjectMetaT>();
    pod_.metadata->name = std::move(name);
    pod_.metadata->namespace_ = "default";
    pod_.metadata->uid = "uid-" + pod_.metadata->name;
    pod_.metadata->resource_version = "7";
    pod_.spec = std::make_unique<api::PodSpecT>();
  }
  PodBuilder& Uid(std::string uid) {
    pod_.metadata->uid = std::move(uid);
    return *this;
  }
  PodBuilder& Node(std::string node) {
    pod_.spec->node_name = std::move(node);
    return *this;
  }
  PodBuilder& Container(std::string name, std::string image) {
    pod_.spec->containers.push_back(Make(std::move(name), std::move(image)));
    return *this;
  }
  PodBuilder& Init(std::string name, std::string image) {
    pod_.spec->init_containers.push_back(Make(std::move(name), std::move(image)));
    return *this;
  }
  PodBuilder& Sidecar(std::string name, std::string image) {
    Init(std::move(name), std::move(image));
    pod_.spec->init_containers.back()->restart_policy = "Always";
    return *this;
  }
  PodBuilder& ReadinessDelay(int seconds) {  // on the last app container
    auto& c = pod_.spec->containers.back();
    c->readiness_probe = std::make_unique<api::ProbeT>();
    c->readiness_probe->initial_delay_seconds = seconds;
    return *this;
  }
  std::shared_ptr<const api::PodT> Shared() const { return std::make_shared<api::PodT>(pod_); }
  api::PodT Obj() const { return pod_; }

 private:
  static std::unique_ptr<api::ContainerT> Make(std::string name, std::string image) {
    auto c = std::make_unique<api::ContainerT>();
    c->name = std::move(name);
    c->image = std::move(image);
    return c;
  }
  api::PodT pod_;
};

inline PodAssignment Assign(const PodBuilder& pod, int64_t revision = 7) {
  auto shared = pod.Shared();
  return PodAssignment{"/registry/pods/default/" + shared->metadata->name, revision, shared};
}

inline std::vector<CatalogImage> TestRegistry() {
  return {
      {"nginx", {"1.14.2", "1.25", "latest"}, 44'000'000, SimDuration(500)},
      {"busybox", {"1.28", "1.36", "latest"}, 2'200'000, SimDuration(100)},
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

// The waiting reason of a container status, or "" when not waiting.
inline std::string WaitingReason(const api::ContainerStatusT& s) {
  return s.state && s.state->waiting ? s.state->waiting->reason : "";
}

}  // namespace podflow::runtime::testing
