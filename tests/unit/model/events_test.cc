#include <catch2/catch.hpp>
#include <regex>
#include <set>

#include "model/codec.h"
#include "model/conditions.h"
#include "model/events.h"
#include "model/objects.h"
#include "pod_builder.h"

namespace podflow::model {
namespace {

using testing::FakeClock;
using testing::PodBuilder;

TEST_CASE("kubelet events: involvedObject, source and timestamps") {
  const api::PodT pod = PodBuilder("nginx-pod").Obj();
  const ReportEvent e{"Normal", "Pulling", "Pulling image \"nginx:1.14.2\"",
                               "2024-05-01T12:00:01Z", "spec.containers{nginx}"};
  const api::EventT ev = KubeletEvent(RefOf(pod), "node-2", e, "nginx-pod.17abc00000000000");
  CHECK(ev.api_version == "v1");
  CHECK(ev.kind == "Event");
  CHECK(ev.metadata->name == "nginx-pod.17abc00000000000");
  CHECK(ev.metadata->namespace_ == "default");
  const api::ObjectReferenceT& obj = *ev.involved_object;
  CHECK(obj.kind == "Pod");
  CHECK(obj.namespace_ == "default");
  CHECK(obj.name == "nginx-pod");
  CHECK(obj.uid == "uid-nginx-pod");
  CHECK(obj.api_version == "v1");
  CHECK(obj.field_path == "spec.containers{nginx}");
  CHECK(ev.reason == "Pulling");
  CHECK(ev.message == "Pulling image \"nginx:1.14.2\"");
  CHECK(ev.type == "Normal");
  CHECK(ev.source->component == "kubelet");
  CHECK(ev.source->host == "node-2");
  CHECK(ev.first_timestamp == "2024-05-01T12:00:01Z");
  CHECK(ev.last_timestamp == "2024-05-01T12:00:01Z");
  CHECK(ev.count == 1);
  CHECK(ev.reporting_component == "kubelet");
  CHECK(ev.reporting_instance == "node-2");
}

TEST_CASE("event names are <pod>.<16 hex> and unique, also across namers") {
  FakeClock clock;
  EventNamer status_namer(1), scheduler_namer(2);
  std::set<std::string> names;
  const std::regex shape("nginx-pod\\.[0-9a-f]{16}");
  for (int i = 0; i < 500; ++i) {  // many in the same millisecond
    for (EventNamer* n : {&status_namer, &scheduler_namer}) {
      const std::string name = n->Next("nginx-pod", clock.now);
      CHECK(std::regex_match(name, shape));
      CHECK(names.insert(name).second);
    }
  }
  // Later times sort later, as client-go's UnixNano names do.
  const std::string earlier = status_namer.Next("x", clock.Advance(1));
  CHECK(status_namer.Next("x", clock.Advance(1)) > earlier);
}

TEST_CASE("scheduler events: Scheduled and FailedScheduling") {
  FakeClock clock;
  EventNamer namer;
  const api::PodT pod = PodBuilder("nginx-pod").Obj();
  const api::EventT scheduled = ScheduledEvent(pod, "node-2", clock.now, namer);
  CHECK(scheduled.reason == "Scheduled");
  CHECK(scheduled.type == "Normal");
  CHECK(scheduled.message == "Successfully assigned default/nginx-pod to node-2");
  CHECK(scheduled.action == "Binding");
  CHECK(scheduled.reporting_component == "default-scheduler");
  CHECK(scheduled.event_time == "2024-05-01T12:00:00.000000Z");
  CHECK(scheduled.involved_object->name == "nginx-pod");
  CHECK(scheduled.involved_object->field_path.empty());
  CHECK(scheduled.first_timestamp.empty());

  const api::EventT failed =
      FailedSchedulingEvent(pod, "0/3 nodes are available: 3 Insufficient cpu.", clock.now, namer);
  CHECK(failed.type == "Warning");
  CHECK(failed.reason == "FailedScheduling");
  CHECK(failed.action == "Scheduling");
  CHECK(failed.message == "0/3 nodes are available: 3 Insufficient cpu.");
  CHECK(failed.metadata->name != scheduled.metadata->name);

  const PackedEvent packed = PackEvent(scheduled);
  CHECK(packed.key == "/registry/events/default/" + scheduled.metadata->name);
  flatbuffers::Verifier v(reinterpret_cast<const uint8_t*>(packed.bytes.data()),
                          packed.bytes.size());
  REQUIRE(v.VerifyBuffer<api::Event>(nullptr));
  CHECK(model::Unpack<api::Event>(packed.bytes)->message == scheduled.message);
}

TEST_CASE("conditions: Kubernetes' messages for unknown and unready containers") {
  api::PodT pod = PodBuilder("p").Container("a", "x").Container("b", "x").Container("c", "x").Obj();
  api::PodStatusT status;
  for (auto [name, ready] : {std::pair{"a", true}, std::pair{"b", false}}) {
    auto s = std::make_unique<api::ContainerStatusT>();
    s->name = name;
    s->ready = ready;
    s->state = std::make_unique<api::ContainerStateT>();
    status.container_statuses.push_back(std::move(s));
  }
  struct Case {
    api::PodPhase phase;
    api::ConditionStatus status;
    const char* reason;
    const char* message;
  };
  const Case cases[] = {
      {api::PodPhase::Pending, api::ConditionStatus::False, "ContainersNotReady",
       "containers with unknown status: [c], containers with unready status: [b]"},
      {api::PodPhase::Failed, api::ConditionStatus::False, "PodFailed", ""},
  };
  for (const Case& c : cases) {
    status.phase = c.phase;
    const ConditionValue v = ContainersReadyCondition(*pod.spec, status);
    CHECK(v.status == c.status);
    CHECK(v.reason == c.reason);
    CHECK(v.message == c.message);
    CHECK(ReadyCondition(*pod.spec, status).message == c.message);
  }
  api::PodStatusT empty;
  CHECK(ContainersReadyCondition(*pod.spec, empty).reason == "UnknownContainerStatuses");
}

TEST_CASE("conditions: readiness gates hold Ready") {
  api::PodT pod = PodBuilder("p").Container("a", "x").Obj();
  auto gate = std::make_unique<api::PodReadinessGateT>();
  gate->condition_type = "example.com/feature-1";
  pod.spec->readiness_gates.push_back(std::move(gate));
  api::PodStatusT status;
  auto s = std::make_unique<api::ContainerStatusT>();
  s->name = "a";
  s->ready = true;
  s->state = std::make_unique<api::ContainerStateT>();
  status.container_statuses.push_back(std::move(s));
  ConditionValue ready = ReadyCondition(*pod.spec, status);
  CHECK(ready.reason == "ReadinessGatesNotReady");
  CHECK(ready.message ==
        "corresponding condition of pod readiness gate \"example.com/feature-1\" does not exist.");
}

TEST_CASE("conditions: the status of a stored pod's or node's condition") {
  const auto stored = [](const std::string& manifest) {
    Result<std::vector<Decoded>> decoded = DecodeManifests(manifest);
    REQUIRE(decoded.ok());
    REQUIRE(decoded->size() == 1);
    INFO((*decoded)[0].status.ToString());
    REQUIRE((*decoded)[0].status.ok());
    return (*decoded)[0].object.bytes;
  };
  const std::string pod = stored(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: nginx}]}
status: {conditions: [{type: Ready, status: "True"}, {type: PodScheduled, status: "False"}]}
)");
  const api::Pod& p = *flatbuffers::GetRoot<api::Pod>(pod.data());
  CHECK(ConditionStatusOf(p, "Ready") == api::ConditionStatus::True);
  CHECK(ConditionIsTrue(p, "Ready"));
  CHECK(ConditionStatusOf(p, "PodScheduled") == api::ConditionStatus::False);
  CHECK_FALSE(ConditionIsTrue(p, "PodScheduled"));
  CHECK_FALSE(ConditionStatusOf(p, "Initialized").has_value());
  const std::string bare = stored("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n");
  CHECK_FALSE(ConditionStatusOf(*flatbuffers::GetRoot<api::Pod>(bare.data()), "Ready").has_value());

  const std::string node = stored(R"(apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {conditions: [{type: Ready, status: Unknown, lastHeartbeatTime: "2026-01-01T00:00:00Z"}]}
)");
  const api::Node& n = *flatbuffers::GetRoot<api::Node>(node.data());
  CHECK(ConditionStatusOf(n, "Ready") == api::ConditionStatus::Unknown);
  REQUIRE(FindCondition(n, "Ready") != nullptr);
  CHECK(FindCondition(n, "Ready")->last_heartbeat_time()->str() == "2026-01-01T00:00:00Z");
  CHECK(FindCondition(n, "DiskPressure") == nullptr);
}

}  // namespace
}  // namespace podflow::model
