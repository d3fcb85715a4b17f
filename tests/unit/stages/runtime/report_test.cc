#include <catch2/catch.hpp>

#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::Assign;
using testing::FakeClock;
using testing::PodBuilder;

TEST_CASE("a report survives the frame round trip") {
  const ImageCatalog catalog(testing::TestRegistry());
  const RuntimeTiming timing;
  NodeRuntime node(testing::TestNode(), &catalog, &timing);
  FakeClock clock;
  PodRunner runner(
      Assign(PodBuilder("nginx-pod").Node("node-1").Container("nginx", "nginx:1.14.2"), 42), &node,
      clock.now);
  runner.Step();
  const model::Report report = runner.Step();  // pulled, created, started
  REQUIRE(report.events.size() == 3);

  const std::vector<model::Report> reports = {report};
  const std::string frame = model::EncodeReports(reports, 9);
  Result<std::vector<model::Report>> decoded = model::DecodeReports(frame);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  const model::Report* back = &decoded->front();
  CHECK(back->node_name == "node-1");
  CHECK(back->pod_key == "/registry/pods/default/nginx-pod");
  CHECK(back->pod_uid == "uid-nginx-pod");
  CHECK(back->observed_mod_revision == 42);
  CHECK(back->events == report.events);
  CHECK(back->events[0].field_path == "spec.containers{nginx}");
  CHECK(back->status.phase == api::PodPhase::Running);
  CHECK(back->status.pod_ip == report.status.pod_ip);
  REQUIRE(back->status.container_statuses.size() == 1);
  CHECK(back->status.container_statuses[0]->container_id ==
        report.status.container_statuses[0]->container_id);
  CHECK(back->status.container_statuses[0]->state->running->started_at ==
        report.status.container_statuses[0]->state->running->started_at);
  CHECK(model::EncodeReports(*decoded, 9) == frame);
}

}  // namespace
}  // namespace podflow::runtime
