// The default profile as a whole, with the per-node plugins of
// kube-scheduler's default profile (TaintToleration 3, NodeAffinity 2,
// NodeResourcesFit 1, NodeResourcesBalancedAllocation 1, ImageLocality 1)
// and the seeds' NodePressure filter and NodePreferAvoidPods score (10000):
// each plugin's normalized score worked by hand, one unique winner.
#include <map>

#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

using api::NodeSelectorOperator;
using api::TaintEffect;
using testing::MakeNode;
using testing::MakePod;

constexpr int64_t kMi = 1024 * 1024;

const Profile& Default() {
  static auto registry = plugins::NewInTreeRegistry();
  static auto profile = Profile::Build(*registry, DefaultProfileConfig());
  REQUIRE(profile.ok());
  return *profile;
}

// The normalized score of `plugin` on the node at `index` of d.scores.
int64_t Normalized(const Decision& d, size_t index, std::string_view plugin) {
  for (const PluginScore& s : d.scores.at(index).plugins) {
    if (s.plugin == plugin) return s.normalized;
  }
  FAIL("no score of " << plugin);
  return -1;
}

TEST_CASE("default profile: per-node scores decide a unique winner", "[default-profile]") {
  const std::string avoid =
      R"({"preferAvoidPods":[{"podSignature":{"podController":{"kind":"ReplicaSet","uid":"rs-1","controller":true}}}]})";
  Snapshot snap;
  // a: preferred zone, image present, but an untolerated PreferNoSchedule taint.
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("4").Memory("8Gi").Label("zone", "a")
                              .Taint("maintenance", "soon", TaintEffect::PreferNoSchedule)
                              .Image({"nginx:1.25"}, 500 * kMi).Info()).ok());
  // b: preferred zone, image present, no taint: the winner.
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("4").Memory("8Gi").Label("zone", "a")
                              .Image({"docker.io/library/nginx:1.25"}, 500 * kMi).Info()).ok());
  // c: other zone, no image, and it asks pods of ReplicaSet rs-1 to stay away.
  REQUIRE(snap.UpsertNode(MakeNode().Name("c").Cpu("4").Memory("8Gi").Label("zone", "b")
                              .Annotation(std::string(kPreferAvoidPodsAnnotationKey), avoid).Info()).ok());
  // d: disk pressure: filtered out.
  REQUIRE(snap.UpsertNode(MakeNode().Name("d").Cpu("4").Memory("8Gi").Label("zone", "a")
                              .Condition("DiskPressure", api::ConditionStatus::True).Info()).ok());
  // e: memory pressure: a Burstable pod may go there; as c otherwise, minus the annotation.
  REQUIRE(snap.UpsertNode(MakeNode().Name("e").Cpu("4").Memory("8Gi").Label("zone", "b")
                              .Condition("MemoryPressure", api::ConditionStatus::True).Info()).ok());

  const PodInfo pod = MakePod()
                          .Name("web-1")
                          .Owner("ReplicaSet", "rs-1")
                          .Image("nginx:1.25")
                          .Cpu("500m")
                          .Memory("1Gi")
                          .PreferredTerm(1, {{"zone", NodeSelectorOperator::In, {"a"}}})
                          .Info();
  auto d = Schedule(Default(), pod, snap);
  REQUIRE(d.ok());
  INFO(d->Explain());
  CHECK(d->node == "b");
  CHECK(d->tied_nodes == 1);
  CHECK(d->feasible_nodes == 4);
  REQUIRE(d->verdicts.size() == 5);
  CHECK(d->verdicts[3].node == "d");
  CHECK(d->verdicts[3].status.plugin() == "NodePressure");
  CHECK(d->verdicts[3].status.reasons() == std::vector<std::string>{"node(s) had disk pressure"});

  REQUIRE(d->scores.size() == 4);  // a, b, c, e
  // TaintToleration: raw 1, 0, 0, 0 -> reversed 0, 100, 100, 100.
  CHECK(Normalized(*d, 0, "TaintToleration") == 0);
  CHECK(Normalized(*d, 1, "TaintToleration") == 100);
  CHECK(Normalized(*d, 2, "TaintToleration") == 100);
  // NodeAffinity: raw 1, 1, 0, 0 -> 100, 100, 0, 0.
  CHECK(Normalized(*d, 0, "NodeAffinity") == 100);
  CHECK(Normalized(*d, 1, "NodeAffinity") == 100);
  CHECK(Normalized(*d, 3, "NodeAffinity") == 0);
  // ImageLocality: on 2 of 5 nodes: int(500Mi * 2/5) = 209715200;
  // 100 * (209715200 - 23Mi) / (1000Mi - 23Mi) = 18.1 -> 18 on a and b.
  CHECK(Normalized(*d, 0, "ImageLocality") == 18);
  CHECK(Normalized(*d, 1, "ImageLocality") == 18);
  CHECK(Normalized(*d, 2, "ImageLocality") == 0);
  // NodePreferAvoidPods: c avoids the pod's ReplicaSet.
  CHECK(Normalized(*d, 1, "NodePreferAvoidPods") == 100);
  CHECK(Normalized(*d, 2, "NodePreferAvoidPods") == 0);
  CHECK(Normalized(*d, 3, "NodePreferAvoidPods") == 100);
  // Fit: cpu (4000-500)*100/4000 = 87, memory 7/8 -> 87; Balanced: 0.125 vs 0.125 -> 100; same everywhere.
  for (size_t i = 0; i < 4; ++i) {
    CHECK(Normalized(*d, i, "NodeResourcesFit") == 87);
    CHECK(Normalized(*d, i, "NodeResourcesBalancedAllocation") == 100);
  }
  // b beats a by TaintToleration's 3 * 100 and e by NodeAffinity's 2 * 100
  // plus ImageLocality's 18, whatever the other plugins add equally.
  CHECK(d->scores[1].total - d->scores[0].total == 300);
  CHECK(d->scores[1].total - d->scores[3].total == 218);
  CHECK(d->scores[1].total - d->scores[2].total == 218 + 100 * 10000);
}

}  // namespace
}  // namespace podflow::scheduler
