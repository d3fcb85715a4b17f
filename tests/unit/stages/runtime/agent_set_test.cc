#include <catch2/catch.hpp>
#include <set>

#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::Assign;
using testing::FakeClock;
using testing::PodBuilder;

TEST_CASE("agent set: steps come out in time order across pods") {
  ImageCatalog catalog(testing::TestRegistry());
  NodeAgentSet agents(&catalog, RuntimeTiming{});
  FakeClock clock;
  REQUIRE(agents.AddNode(testing::TestNode("node-1", "10.244.1.0/24")).ok());
  REQUIRE(agents.AddNode(testing::TestNode("node-2", "10.244.2.0/24")).ok());
  CHECK(agents.AddNode(testing::TestNode("node-1")).code() == Code::kAlreadyExists);

  REQUIRE(agents.AddPod("node-1", Assign(PodBuilder("a").Container("c", "nginx:1.14.2")), clock.now)
              .ok());
  REQUIRE(agents.AddPod("node-2", Assign(PodBuilder("b").Container("c", "busybox:1.28")), clock.now)
              .ok());
  CHECK(agents.AddPod("node-9", Assign(PodBuilder("x").Container("c", "busybox:1.28")), clock.now)
            .code() == Code::kNotFound);

  std::vector<model::Report> r = agents.Advance(clock.now);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status.pod_ip == "10.244.1.2");
  CHECK(r[1].status.pod_ip == "10.244.2.2");
  CHECK(agents.NextDue() == clock.now + SimDuration(100));
  r = agents.Advance(clock.now + SimDuration(1000));
  REQUIRE(r.size() == 2);
  CHECK(r[0].pod_key == "/registry/pods/default/b");  // busybox pulls faster
  CHECK(r[1].pod_key == "/registry/pods/default/a");
  CHECK_FALSE(agents.NextDue());
}

TEST_CASE("agent set: a removed pod stops and frees its IP; a new uid restarts") {
  ImageCatalog catalog(testing::TestRegistry());
  NodeAgentSet agents(&catalog, RuntimeTiming{});
  FakeClock clock;
  REQUIRE(agents.AddNode(testing::TestNode()).ok());
  REQUIRE(agents.AddPod("node-1", Assign(PodBuilder("a").Container("c", "nginx:nope")), clock.now)
              .ok());
  REQUIRE(agents.Advance(clock.now).size() == 1);
  // Same pod, newer revision: keeps running, reports the new revision.
  REQUIRE(
      agents.AddPod("node-1", Assign(PodBuilder("a").Container("c", "nginx:nope"), 12), clock.now)
          .ok());
  std::vector<model::Report> r = agents.Advance(clock.now + SimDuration(1000));
  REQUIRE(r.size() == 1);
  CHECK(r[0].observed_mod_revision == 12);
  CHECK(r[0].events[0].reason == "BackOff");

  agents.RemovePod("/registry/pods/default/a");
  CHECK(agents.pod_count() == 0);
  CHECK(agents.Advance(clock.now + SimDuration(3'600'000)).empty());

  REQUIRE(agents.AddPod("node-1", Assign(PodBuilder("b").Container("c", "busybox:1.28")), clock.now)
              .ok());
  CHECK(agents.Advance(clock.now)[0].status.pod_ip == "10.244.1.2");  // reused
  REQUIRE(agents
              .AddPod("node-1", Assign(PodBuilder("b").Uid("uid-2").Container("c", "busybox:1.28")),
                      clock.now)
              .ok());
  r = agents.Advance(clock.now);
  REQUIRE(r.size() == 1);
  CHECK(r[0].pod_uid == "uid-2");

  agents.RemoveNode("node-1");
  CHECK(agents.pod_count() == 0);
  CHECK_FALSE(agents.HasNode("node-1"));
}

TEST_CASE("scale: 1,000 nodes x 10 pods all reach Running") {
  Result<RuntimeConfig> config = ParseRuntimeConfig(YAML::Load(R"(
clusterCIDR: 10.0.0.0/8
nodeIPRange: 172.16.0.0/12
nodeTemplate: {count: 1000}
registry:
  - {name: nginx, tags: ["1.14.2"], sizeBytes: 44000000, pullMillis: 300}
  - {name: busybox, tags: ["1.28"], sizeBytes: 2200000, pullMillis: 100}
)"));
  REQUIRE(config.ok());
  const std::vector<SimNode> nodes = *ResolveNodes(*config);
  const ImageCatalog catalog(config->registry);
  NodeAgentSet agents(&catalog, config->timing);
  FakeClock clock;
  for (const SimNode& n : nodes) REQUIRE(agents.AddNode(n).ok());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int p = 0; p < 10; ++p) {
      const std::string name = "pod-" + std::to_string(n) + "-" + std::to_string(p);
      PodBuilder pod(name);
      pod.Node(nodes[n].name).Init("init", "busybox:1.28").Container("web", "nginx:1.14.2");
      REQUIRE(agents.AddPod(nodes[n].name, Assign(pod), clock.now).ok());
    }
  }
  std::map<std::string, model::Report> latest;
  size_t reports = 0;
  while (std::optional<SimTime> due = agents.NextDue()) {
    for (model::Report& r : agents.Advance(*due)) {
      ++reports;
      latest[r.pod_key] = std::move(r);
    }
  }
  REQUIRE(latest.size() == 10'000);
  std::set<std::string> ips;
  for (const auto& [key, r] : latest) {
    INFO(key);
    REQUIRE(r.status.phase == api::PodPhase::Running);
    REQUIRE(r.status.container_statuses[0]->ready);
    ips.insert(r.status.pod_ip);
  }
  CHECK(ips.size() == 10'000);
  CHECK(reports >= 30'000);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

// A pod removed while waiting out an image backoff leaves its queue entry
// behind; a new pod under the same key that has already finished must not
// be stepped by it (that stepped a runner with nothing due).
TEST_CASE("agent set: an old pod's pending step never runs the new pod of that name") {
  ImageCatalog catalog(testing::TestRegistry());
  NodeAgentSet agents(&catalog, RuntimeTiming{});
  testing::FakeClock clock;
  REQUIRE(agents.AddNode(testing::TestNode()).ok());
  REQUIRE(agents.AddPod("node-1", testing::Assign(testing::PodBuilder("a").Container("c", "nginx:nope")), clock.now)
              .ok());
  // Through ErrImagePull into the backoff: the next retry is seconds away.
  agents.Advance(clock.now);
  agents.Advance(clock.now + SimDuration(1000));
  REQUIRE(agents.NextDue().has_value());
  agents.RemovePod("/registry/pods/default/a");

  // Same name, a pod that comes up at once and has nothing left to do.
  int steps = 0;
  REQUIRE(agents.AddPod("node-1", testing::Assign(testing::PodBuilder("a").Container("c", "busybox:1.28")),
                        clock.now + SimDuration(2000))
              .ok());
  for (int i = 0; i < 10 && agents.NextDue(); ++i) steps += agents.Advance(*agents.NextDue()).size();
  CHECK(steps > 0);
  CHECK_FALSE(agents.NextDue().has_value());
  CHECK(agents.Advance(clock.now + SimDuration(3'600'000)).empty());
  REQUIRE(agents.FindPod("/registry/pods/default/a") != nullptr);
  CHECK(agents.FindPod("/registry/pods/default/a")->status().phase == api::PodPhase::Running);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("agent set: an adopted pod's IP stays out of the pool until the pod is removed") {
  ImageCatalog catalog(testing::TestRegistry());
  NodeAgentSet agents(&catalog, RuntimeTiming{});
  FakeClock clock;
  REQUIRE(agents.AddNode(testing::TestNode("node-1", "10.244.1.0/24")).ok());
  // Found after a restart (being stopped, say) with the pool's first address.
  REQUIRE(agents.AdoptPod("node-1", "/registry/pods/default/old", "uid-old", "10.244.1.2").ok());
  CHECK(agents.AdoptPod("node-9", "/registry/pods/default/x", "uid-x", "10.244.9.2").code() == Code::kNotFound);
  REQUIRE(agents.AddPod("node-1", Assign(PodBuilder("new").Container("c", "nginx:1.14.2")), clock.now).ok());
  std::vector<model::Report> r = agents.Advance(clock.now);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status.pod_ip == "10.244.1.3");  // not the adopted pod's
  // Once the old pod is gone its address is free again.
  agents.RemovePod("/registry/pods/default/old");
  REQUIRE(agents.AddPod("node-1", Assign(PodBuilder("next").Container("c", "nginx:1.14.2")), clock.now).ok());
  r = agents.Advance(clock.now);
  REQUIRE(r.size() == 1);
  CHECK(r[0].pod_key == "/registry/pods/default/next");
  CHECK(r[0].status.pod_ip == "10.244.1.2");
}

}  // namespace
}  // namespace podflow::runtime
