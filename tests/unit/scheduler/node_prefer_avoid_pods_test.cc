// NodePreferAvoidPods (the seeds' priority): 0 on a node whose
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation names the pod's
// ReplicationController / ReplicaSet controller (kind and uid), else 100.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"

namespace podflow::scheduler {
namespace {

using plugins::NodePreferAvoidPods;
using testing::MakeNode;
using testing::MakePod;
using testing::NoState;

constexpr const char* kAvoid = R"({"preferAvoidPods":[
  {"podSignature":{"podController":{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":"rc-1","controller":true}},"reason":"maintenance","message":"soon"},
  {"podSignature":{"podController":{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-1","controller":true}}},
  {"podSignature":{"podController":{"apiVersion":"apps/v1","kind":"StatefulSet","name":"ss","uid":"ss-1","controller":true}}}
]})";

TEST_CASE("NodePreferAvoidPods", "[node-prefer-avoid-pods]") {
  NodePreferAvoidPods p;
  const NodeInfo avoiding = MakeNode().Annotation(std::string(kPreferAvoidPodsAnnotationKey), kAvoid).Info();
  REQUIRE(avoiding.prefer_avoid_pods.size() == 3);
  const NodeInfo plain = MakeNode().Info();
  const NodeInfo malformed =
      MakeNode().Annotation(std::string(kPreferAvoidPodsAnnotationKey), "{\"preferAvoidPods\": [").Info();
  CHECK(malformed.prefer_avoid_pods.empty());

  struct Case {
    const char* name;
    PodInfo pod;
    int64_t on_avoiding;
  };
  std::vector<Case> cases;
  cases.push_back({"its ReplicationController is avoided", MakePod().Owner("ReplicationController", "rc-1").Info(), 0});
  cases.push_back({"its ReplicaSet is avoided", MakePod().Owner("ReplicaSet", "rs-1").Info(), 0});
  cases.push_back({"another ReplicaSet", MakePod().Owner("ReplicaSet", "rs-2").Info(), 100});
  cases.push_back({"same uid, other kind", MakePod().Owner("ReplicaSet", "rc-1").Info(), 100});
  // Only RC and RS controllers are considered, even when listed.
  cases.push_back({"StatefulSet is not considered", MakePod().Owner("StatefulSet", "ss-1").Info(), 100});
  cases.push_back({"owner that is not the controller",
                   MakePod().Owner("ReplicaSet", "rs-1", /*controller=*/false).Info(), 100});
  cases.push_back({"no owner", MakePod().Info(), 100});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(p.Score(NoState(), c.pod, avoiding) == c.on_avoiding);
    CHECK(p.Score(NoState(), c.pod, plain) == 100);
    CHECK(p.Score(NoState(), c.pod, malformed) == 100);
  }
}

}  // namespace
}  // namespace podflow::scheduler
