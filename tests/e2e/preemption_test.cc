// Priority preemption end to end: a high-priority pod that fits nowhere
// evicts the lowest-priority pod, is nominated to its node, and is bound
// there once the victim is gone.
#include <catch2/catch.hpp>

#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

std::string Key(const std::string& name) { return model::ObjectKey(model::Kind("Pod"), "default", name); }

// A pod of the PriorityClass "priority-<priority>" (admission resolves it
// into spec.priority, as kube-apiserver's Priority plugin does).
std::string PodYaml(const std::string& name, int priority, const std::string& cpu) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  priorityClassName: priority-" +
         std::to_string(priority) +
         "\n  containers: [{name: app, image: busybox:1.28, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n";
}

std::string PriorityClassYaml(int value) {
  return "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: priority-" +
         std::to_string(value) + "}\nvalue: " + std::to_string(value) + "\nglobalDefault: false\n";
}

bool Bound(const api::Pod& p) { return p.spec()->node_name() != nullptr && p.spec()->node_name()->size() > 0; }

TEST_CASE("A high-priority pod preempts the lowest-priority pod and is bound to its node", "[e2e][preemption]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  for (int value : {1, 2, 3, 1000}) {
    for (const auto& [reason, message] : pipeline.Submit(PriorityClassYaml(value))) {
      INFO(message);
      REQUIRE(reason.empty());
    }
  }
  // node-1 and node-2 have 4 cpu, node-3 has 2: fill all three, one pod at
  // a time (the queue would take the highest priority first).
  const std::map<std::string, std::string> fillers = {{"low-1", PodYaml("low-1", 1, "3500m")},
                                                      {"low-2", PodYaml("low-2", 2, "3500m")},
                                                      {"low-3", PodYaml("low-3", 3, "1500m")}};
  std::map<std::string, std::string> node_of;
  for (const char* name : {"low-1", "low-2", "low-3"}) {
    for (const auto& [reason, message] : pipeline.Submit(fillers.at(name))) REQUIRE(reason.empty());
    std::string bytes;
    const api::Pod* pod = pipeline.WaitFor<api::Pod>(Key(name), Bound, &bytes);
    INFO(pipeline.Logs());
    REQUIRE(pod != nullptr);
    node_of[name] = pod->spec()->node_name()->str();
  }
  REQUIRE(node_of["low-3"] == "node-3");  // only node-3 has room left for it

  for (const auto& [reason, message] : pipeline.Submit(PodYaml("vip", 1000, "3"))) REQUIRE(reason.empty());
  std::string bytes;
  const api::Pod* vip = pipeline.WaitFor<api::Pod>(Key("vip"), Bound, &bytes);
  INFO(pipeline.Logs());
  REQUIRE(vip != nullptr);
  const std::string uid = vip->metadata()->uid()->str();
  // The victim is the pod of lowest priority on a node where 3 cpu can be made free.
  CHECK(vip->spec()->node_name()->str() == node_of["low-1"]);
  REQUIRE(vip->status() != nullptr);
  REQUIRE(vip->status()->nominated_node_name() != nullptr);
  CHECK(vip->status()->nominated_node_name()->str() == node_of["low-1"]);
  REQUIRE(vip->spec()->priority().has_value());
  CHECK(*vip->spec()->priority() == 1000);

  CHECK_FALSE(pipeline.Get(Key("low-1")).has_value());
  CHECK(pipeline.Get(Key("low-2")).has_value());
  CHECK(pipeline.Get(Key("low-3")).has_value());
  std::vector<std::string> events = pipeline.EventsFor("default", "low-1");
  CHECK(std::find(events.begin(), events.end(),
                  "Normal Preempted: Preempted by pod " + uid + " on node " + node_of["low-1"]) != events.end());
  std::vector<std::string> vip_events = pipeline.EventsFor("default", "vip");
  REQUIRE_FALSE(vip_events.empty());
  CHECK(vip_events[0] == "Warning FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu.");
}

}  // namespace
}  // namespace podflow::e2e
