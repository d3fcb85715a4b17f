#include <catch2/catch.hpp>

#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::Assign;
using testing::FakeClock;
using testing::PodBuilder;
using testing::WaitingReason;

struct Fixture {
  ImageCatalog catalog{testing::TestRegistry()};
  RuntimeTiming timing;
  std::unique_ptr<NodeRuntime> node;
  FakeClock clock;

  Fixture() { node = std::make_unique<NodeRuntime>(testing::TestNode(), &catalog, &timing); }

  // Steps `runner` up to and including `until`, collecting every report.
  std::vector<model::Report> RunUntil(PodRunner& runner, SimTime until) {
    std::vector<model::Report> out;
    while (runner.due() && *runner.due() <= until) out.push_back(runner.Step());
    return out;
  }
};

std::vector<std::string> Reasons(const model::Report& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events) out.push_back(e.reason);
  return out;
}

TEST_CASE("nginx: Pending -> image pulled -> Running, with kubelet's events") {
  Fixture f;
  const SimTime t0 = f.clock.now;
  PodRunner runner(
      Assign(PodBuilder("nginx-pod").Node("node-1").Container("nginx", "nginx:1.14.2")),
      f.node.get(), t0);
  REQUIRE(runner.due() == t0);

  const model::Report first = runner.Step();
  CHECK(first.status.phase == api::PodPhase::Pending);
  CHECK(first.status.host_ip == "192.168.0.2");
  CHECK(first.status.pod_ip == "10.244.1.2");
  REQUIRE(first.status.pod_ips.size() == 1);
  CHECK(first.status.start_time == "2024-05-01T12:00:00Z");
  CHECK(first.status.conditions.at(0)->type == "PodReadyToStartContainers");
  CHECK(first.status.conditions.at(0)->status == api::ConditionStatus::True);
  const auto& waiting = *first.status.container_statuses.at(0);
  CHECK(WaitingReason(waiting) == "ContainerCreating");
  CHECK(waiting.image == "nginx:1.14.2");
  CHECK_FALSE(waiting.ready);
  REQUIRE(first.events.size() == 1);
  CHECK(first.events[0].type == "Normal");
  CHECK(first.events[0].reason == "Pulling");
  CHECK(first.events[0].message == "Pulling image \"nginx:1.14.2\"");
  CHECK(first.events[0].field_path == "spec.containers{nginx}");
  CHECK(first.events[0].time == "2024-05-01T12:00:00Z");

  REQUIRE(runner.due() == t0 + SimDuration(500));
  const model::Report second = runner.Step();
  REQUIRE(Reasons(second) == std::vector<std::string>{"Pulled", "Created", "Started"});
  CHECK(second.events[0].message ==
        "Successfully pulled image \"nginx:1.14.2\" in 500ms (500ms including waiting). "
        "Image size: 44000000 bytes.");
  CHECK(second.events[1].message == "Created container: nginx");
  CHECK(second.events[2].message == "Started container nginx");
  CHECK(second.status.phase == api::PodPhase::Running);
  const auto& running = *second.status.container_statuses.at(0);
  REQUIRE(running.state->running);
  CHECK(running.state->running->started_at == "2024-05-01T12:00:00Z");
  CHECK(running.ready);
  CHECK(running.started == true);
  CHECK(running.restart_count == 0);
  CHECK(running.image == "docker.io/library/nginx:1.14.2");
  CHECK_THAT(running.image_id, Catch::StartsWith("docker.io/library/nginx@sha256:"));
  CHECK_THAT(running.container_id, Catch::StartsWith("podflow-sim://"));
  CHECK(running.container_id.size() == std::string("podflow-sim://").size() + 64);
  CHECK_FALSE(runner.due());  // nothing more happens
}

TEST_CASE("container start time separates Created from Started") {
  Fixture f;
  f.timing.container_start = SimDuration(250);
  PodRunner runner(Assign(PodBuilder("p").Container("nginx", "nginx:1.14.2")), f.node.get(),
                   f.clock.now);
  auto reports = f.RunUntil(runner, f.clock.now + SimDuration(500));
  REQUIRE(reports.size() == 2);
  CHECK(Reasons(reports[1]) == std::vector<std::string>{"Pulled", "Created"});
  CHECK(reports[1].status.phase == api::PodPhase::Pending);
  CHECK(WaitingReason(*reports[1].status.container_statuses[0]) == "ContainerCreating");
  reports = f.RunUntil(runner, f.clock.now + SimDuration(750));
  REQUIRE(reports.size() == 1);
  CHECK(Reasons(reports[0]) == std::vector<std::string>{"Started"});
  CHECK(reports[0].status.phase == api::PodPhase::Running);
}

TEST_CASE("init containers run one after another before the app containers") {
  Fixture f;
  PodRunner runner(Assign(PodBuilder("myapp-pod")
                              .Init("init-myservice", "busybox:1.28")
                              .Init("init-mydb", "busybox:1.28")
                              .Container("myapp-container", "busybox:1.28")),
                   f.node.get(), f.clock.now);
  const model::Report r0 = runner.Step();
  CHECK(r0.status.phase == api::PodPhase::Pending);
  CHECK(WaitingReason(*r0.status.init_container_statuses[0]) == "PodInitializing");
  CHECK(WaitingReason(*r0.status.container_statuses[0]) == "PodInitializing");
  REQUIRE(r0.events.size() == 1);
  CHECK(r0.events[0].field_path == "spec.initContainers{init-myservice}");

  std::vector<model::Report> all = f.RunUntil(runner, f.clock.now + SimDuration(60'000));
  std::vector<std::string> log;  // "<reason> <fieldPath>"
  for (const model::Report& r : all) {
    for (const auto& e : r.events) log.push_back(e.reason + " " + e.field_path);
    // The app container never starts before both init containers completed.
    const auto& app = *r.status.container_statuses[0];
    if (app.state->running) {
      for (const auto& init : r.status.init_container_statuses) {
        REQUIRE(init->state->terminated);
        CHECK(init->state->terminated->exit_code == 0);
        CHECK(init->state->terminated->reason == "Completed");
      }
    }
  }
  CHECK(log == std::vector<std::string>{
                   "Pulled spec.initContainers{init-myservice}",
                   "Created spec.initContainers{init-myservice}",
                   "Started spec.initContainers{init-myservice}",
                   "Pulled spec.initContainers{init-mydb}",
                   "Created spec.initContainers{init-mydb}",
                   "Started spec.initContainers{init-mydb}",
                   "Pulled spec.containers{myapp-container}",
                   "Created spec.containers{myapp-container}",
                   "Started spec.containers{myapp-container}",
               });
  // The second init container found the image on the node.
  CHECK(all[1].events.size() == 3);
  CHECK(all[1].events[0].message == "Container image \"busybox:1.28\" already present on machine");
  // Steps: pulled+started (100ms), first exits (+5ms) and second starts,
  // second exits (+5ms) and the app starts.
  REQUIRE(all.size() == 3);
  const model::Report& last = all.back();
  CHECK(last.status.phase == api::PodPhase::Running);
  CHECK(last.status.init_container_statuses[1]->state->terminated->finished_at ==
        "2024-05-01T12:00:00Z");
  CHECK(last.status.init_container_statuses[0]->ready);
  CHECK(last.status.init_container_statuses[0]->started == false);
  CHECK(last.status.container_statuses[0]->ready);
}

TEST_CASE("an unknown image: ErrImagePull, then ImagePullBackOff, back-off doubling to 300s") {
  Fixture f;
  const SimTime t0 = f.clock.now;
  PodRunner runner(Assign(PodBuilder("bad").Container("nginx", "nginx:nope")), f.node.get(), t0);

  const model::Report r0 = runner.Step();
  REQUIRE(Reasons(r0) == std::vector<std::string>{"Pulling", "Failed", "Failed"});
  const std::string error =
      "rpc error: code = NotFound desc = failed to pull and unpack image "
      "\"docker.io/library/nginx:nope\": failed to resolve reference "
      "\"docker.io/library/nginx:nope\": docker.io/library/nginx:nope: not found";
  CHECK(r0.events[1].type == "Warning");
  CHECK(r0.events[1].message == "Failed to pull image \"nginx:nope\": " + error);
  CHECK(r0.events[2].message == "Error: ErrImagePull");
  const auto& s0 = *r0.status.container_statuses[0];
  CHECK(WaitingReason(s0) == "ErrImagePull");
  CHECK(s0.state->waiting->message == error);
  CHECK(r0.status.phase == api::PodPhase::Pending);

  const model::Report r1 = runner.Step();
  REQUIRE(Reasons(r1) == std::vector<std::string>{"BackOff", "Failed"});
  CHECK(r1.events[0].type == "Normal");
  CHECK(r1.events[0].message == "Back-off pulling image \"nginx:nope\"");
  CHECK(r1.events[1].message == "Error: ImagePullBackOff");
  const auto& s1 = *r1.status.container_statuses[0];
  CHECK(WaitingReason(s1) == "ImagePullBackOff");
  CHECK(s1.state->waiting->message ==
        "Back-off pulling image \"nginx:nope\": ErrImagePull: " + error);

  // Time between a failure and the next pull attempt.
  std::vector<int64_t> gaps;
  SimTime last_failure = t0;
  while (gaps.size() < 7) {
    const SimTime at = *runner.due();
    const model::Report r = runner.Step();
    if (r.events.front().reason == "Pulling") {
      gaps.push_back((at - last_failure).count() / 1000);
      last_failure = at;  // failed_pull is 0: it fails in the same step
      CHECK(WaitingReason(*r.status.container_statuses[0]) == "ErrImagePull");
    }
  }
  CHECK(gaps == std::vector<int64_t>{10, 20, 40, 80, 160, 300, 300});
}

TEST_CASE("an app container in back-off does not hold up the next one") {
  Fixture f;
  PodRunner runner(
      Assign(PodBuilder("two").Container("bad", "nginx:nope").Container("web", "busybox:1.28")),
      f.node.get(), f.clock.now);
  auto reports = f.RunUntil(runner, f.clock.now + SimDuration(1000));
  const model::Report& last = reports.back();
  CHECK(last.status.container_statuses[1]->state->running);
  CHECK(WaitingReason(*last.status.container_statuses[0]) == "ImagePullBackOff");
  CHECK(last.status.phase == api::PodPhase::Pending);  // a container still waits
}

TEST_CASE("pulls on one node are serialized and deduplicated") {
  Fixture f;
  PodRunner a(Assign(PodBuilder("a").Container("c", "nginx:1.14.2")), f.node.get(), f.clock.now);
  PodRunner b(Assign(PodBuilder("b").Container("c", "nginx:1.14.2")), f.node.get(), f.clock.now);
  PodRunner c(Assign(PodBuilder("c").Container("c", "busybox:1.28")), f.node.get(), f.clock.now);
  a.Step();
  b.Step();
  c.Step();
  CHECK(*a.due() == f.clock.now + SimDuration(500));
  CHECK(*b.due() == f.clock.now + SimDuration(500));  // joined a's pull
  CHECK(*c.due() == f.clock.now + SimDuration(600));  // queued behind it
  CHECK(c.Step().events[0].message ==
        "Successfully pulled image \"busybox:1.28\" in 100ms (600ms including waiting). "
        "Image size: 2200000 bytes.");
}

TEST_CASE("readiness probe delay, sidecar init containers, host network") {
  Fixture f;
  SECTION("ready only after the probe's initial delay") {
    PodRunner r(Assign(PodBuilder("p").Container("c", "busybox:1.28").ReadinessDelay(5)),
                f.node.get(), f.clock.now);
    auto reports = f.RunUntil(r, f.clock.now + SimDuration(100));
    CHECK(reports.back().status.container_statuses[0]->state->running);
    CHECK_FALSE(reports.back().status.container_statuses[0]->ready);
    reports = f.RunUntil(r, f.clock.now + SimDuration(5100));
    REQUIRE(reports.size() == 1);
    CHECK(reports[0].events.empty());
    CHECK(reports[0].status.container_statuses[0]->ready);
  }
  SECTION("a sidecar only has to start") {
    PodRunner r(
        Assign(PodBuilder("p").Sidecar("log", "busybox:1.28").Container("c", "busybox:1.28")),
        f.node.get(), f.clock.now);
    auto reports = f.RunUntil(r, f.clock.now + SimDuration(60'000));
    const auto& st = reports.back().status;
    CHECK(st.init_container_statuses[0]->state->running);
    CHECK(st.container_statuses[0]->state->running);
    CHECK(st.phase == api::PodPhase::Running);
  }
}

TEST_CASE("pod IP exhaustion reports FailedCreatePodSandBox and retries") {
  ImageCatalog catalog(testing::TestRegistry());
  RuntimeTiming timing;
  NodeRuntime node(testing::TestNode("tiny", "10.244.9.0/30"), &catalog, &timing);  // one usable
  FakeClock clock;
  auto first = std::make_unique<PodRunner>(Assign(PodBuilder("a").Container("c", "busybox:1.28")),
                                           &node, clock.now);
  PodRunner second(Assign(PodBuilder("b").Container("c", "busybox:1.28")), &node, clock.now);
  CHECK(first->Step().status.pod_ip == "10.244.9.2");
  const model::Report failed = second.Step();
  REQUIRE(failed.events.size() == 1);
  CHECK(failed.events[0].reason == "FailedCreatePodSandBox");
  CHECK(failed.status.pod_ip.empty());
  CHECK(*second.due() == clock.now + SimDuration(10'000));
  first.reset();  // deleted: its IP returns to the pool
  CHECK(second.Step().status.pod_ip == "10.244.9.2");
}


TEST_CASE("a malformed image reference: InvalidImageName, in kubelet's words") {
  Fixture f;
  PodRunner runner(Assign(PodBuilder("bad").Container("c", "busyBOX")), f.node.get(), f.clock.now);
  const model::Report r = runner.Step();
  REQUIRE(Reasons(r) == std::vector<std::string>{"InspectFailed", "Failed"});
  const std::string why =
      "Failed to apply default image tag \"busyBOX\": couldn't parse image name \"busyBOX\": invalid "
      "reference format: repository name (library/busyBOX) must be lowercase";
  CHECK(r.events[0].type == "Warning");
  CHECK(r.events[0].message == why);
  CHECK(r.events[1].message == "Error: InvalidImageName");
  CHECK(WaitingReason(*r.status.container_statuses[0]) == "InvalidImageName");
  CHECK(r.status.container_statuses[0]->state->waiting->message == why);
  CHECK_FALSE(runner.due());
}

TEST_CASE("an open registry pulls any well-formed image; pulls may run in parallel") {
  model::RegistryConfig registry;
  registry.open = true;
  registry.default_size_bytes = 1000;
  registry.default_pull_time = SimDuration(400);
  registry.missing = {"example/gone"};
  ImageCatalog catalog(registry);
  FakeClock clock;
  SECTION("serialized (the default): one pull after the other") {
    RuntimeTiming timing;
    NodeRuntime node(testing::TestNode(), &catalog, &timing);
    PodRunner a(Assign(PodBuilder("a").Container("c", "registry.example.com/api:2.3.1")), &node, clock.now);
    PodRunner b(Assign(PodBuilder("b").Container("c", "fluent/fluent-bit:3.0")), &node, clock.now);
    a.Step();
    b.Step();
    CHECK(*a.due() == clock.now + SimDuration(400));
    CHECK(*b.due() == clock.now + SimDuration(800));
    CHECK(a.Step().events[0].message ==
          "Successfully pulled image \"registry.example.com/api:2.3.1\" in 400ms (400ms including waiting). "
          "Image size: 1000 bytes.");
    PodRunner gone(Assign(PodBuilder("g").Container("c", "example/gone:v2")), &node, clock.now);
    CHECK(WaitingReason(*gone.Step().status.container_statuses[0]) == "ErrImagePull");
  }
  SECTION("two at a time") {
    RuntimeTiming timing;
    timing.max_parallel_pulls = 2;
    NodeRuntime node(testing::TestNode(), &catalog, &timing);
    std::vector<std::unique_ptr<PodRunner>> runners;
    for (const char* image : {"a/one:1", "a/two:1", "a/three:1"}) {
      runners.push_back(std::make_unique<PodRunner>(Assign(PodBuilder(std::string("p") + image[2]).Container("c", image)),
                                                    &node, clock.now));
      runners.back()->Step();
    }
    CHECK(*runners[0]->due() == clock.now + SimDuration(400));
    CHECK(*runners[1]->due() == clock.now + SimDuration(400));
    CHECK(*runners[2]->due() == clock.now + SimDuration(800));
  }
}

TEST_CASE("runtime config: pull parallelism and back-off are validated as kubelet validates them") {
  auto parse = [](const char* yaml) { return ParseRuntimeConfig(YAML::Load(yaml)); };
  CHECK(parse("{serializeImagePulls: false}")->timing.max_parallel_pulls == 0);
  CHECK(parse("{serializeImagePulls: false, maxParallelImagePulls: 3}")->timing.max_parallel_pulls == 3);
  CHECK(parse("{}")->timing.max_parallel_pulls == 1);
  CHECK(parse("{maxParallelImagePulls: 2}").status().message() ==
        "runtime.maxParallelImagePulls: must be 1 or unset when serializeImagePulls is true");
  CHECK(parse("{serializeImagePulls: false, maxParallelImagePulls: 0}").status().message() ==
        "runtime.maxParallelImagePulls: must be at least 1");
  CHECK(parse("{backOffMillis: 0}").status().message() == "runtime.backOffMillis: must be at least 1");
  CHECK(parse("{backOffMillis: 500, maxBackOffMillis: 100}").status().message() ==
        "runtime.maxBackOffMillis: must be at least runtime.backOffMillis (500)");
  auto timing = parse("{backOffMillis: 500, maxBackOffMillis: 2000}")->timing;
  CHECK(timing.backoff_initial == SimDuration(500));
  CHECK(timing.backoff_max == SimDuration(2000));
}

}  // namespace
}  // namespace podflow::runtime
