// A pod builder and a fake clock for tests that need plain pods and times
// (model, runtime, status): PodBuilder("nginx").Node("node-1").Obj().
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "pod_generated.h"

namespace podflow::testing {

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

}  // namespace podflow::testing
