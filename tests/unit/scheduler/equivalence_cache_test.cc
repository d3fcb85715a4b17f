// The equivalence cache: a cycle that reuses verdicts and raw scores of an
// equivalent pod decides exactly as one that runs every plugin on every
// visited node. Checked on hand-made cases (a node changed since, a pod
// nominated since, a plugin that reads other nodes' pods) and on long
// seeded sequences of cluster changes over every plugin family.
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "builders.h"
#include "volume_builders.h"

namespace podflow::scheduler {
namespace {

using testing::ClaimVolume;
using testing::GceVolume;
using testing::MakeNode;
using testing::MakePod;
using testing::PvBuilder;
using testing::PvcBuilder;
using testing::Req;

constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kHostname = "kubernetes.io/hostname";

Profile BuildProfile(int32_t percentage) {
  static auto registry = plugins::NewInTreeRegistry();
  ProfileConfig config = DefaultProfileConfig();
  config.seed = 7;
  config.percentage_of_nodes_to_score = percentage;
  auto p = Profile::Build(*registry, config);
  REQUIRE(p.ok());
  return std::move(p).value();
}

void Bind(Snapshot& snap, PodInfo pod, const std::string& node) {
  pod.node_name = node;
  REQUIRE(snap.AddPod(std::move(pod)).ok());
}

// Schedules `pod` with and without `cache`; REQUIREs the same decision and
// returns it.
Decision Both(const Profile& profile, EquivalenceCache& cache, const PodInfo& pod, const Snapshot& snap,
              size_t start = 0) {
  ScheduleOptions with{start, &cache};
  ScheduleOptions without{start, nullptr};
  auto a = Schedule(profile, pod, snap, with);
  auto b = Schedule(profile, pod, snap, without);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::vector<std::string> why = DecisionDifferences(*b, *a);
  INFO(pod.FullName() << " with the cache:\n" << a->Explain());
  for (const std::string& w : why) UNSCOPED_INFO(w);
  REQUIRE(why.empty());
  return std::move(a).value();
}

// Adds required pod anti-affinity, per hostname, to pods labelled
// app=`app` (an empty selector when `app` is empty).
testing::PodBuilder& AntiAffinityTo(testing::PodBuilder& b, const std::string& app) {
  b.EditAffinity([&](api::AffinityT& a) {
    a.pod_anti_affinity = std::make_unique<api::PodAntiAffinityT>();
    auto term = std::make_unique<api::PodAffinityTermT>();
    term->label_selector = std::make_unique<api::LabelSelectorT>();
    if (!app.empty()) testing::PutString(term->label_selector->match_labels, "app", app);
    term->topology_key = std::string(kHostname);
    a.pod_anti_affinity->required_during_scheduling_ignored_during_execution.push_back(std::move(term));
  });
  return b;
}

std::string VerdictOn(const Decision& d, std::string_view node) {
  for (const NodeVerdict& v : d.verdicts) {
    if (v.node == node) return v.status.ToString();
  }
  return "not visited";
}

TEST_CASE("EquivalenceSignature: only what names the pod is left out", "[equivalence]") {
  const PodInfo base = MakePod().Name("a").Cpu("100m").Memory("500Mi").Label("app", "web").Info();
  CHECK(EquivalenceSignature(base) == EquivalenceSignature(MakePod().Name("b").Cpu("100m").Memory("500Mi").Label("app", "web").Info()));
  PodInfo started = base;
  started.start_time = "2026-01-01T00:00:00Z";
  CHECK(EquivalenceSignature(base) == EquivalenceSignature(started));

  struct Case {
    const char* what;
    PodInfo pod;
  };
  auto like = [] { return MakePod().Name("b").Cpu("100m").Memory("500Mi").Label("app", "web"); };
  std::vector<Case> cases;
  cases.push_back({"another label", like().Label("tier", "x").Info()});
  cases.push_back({"another namespace", like().Namespace("other").Info()});
  cases.push_back({"another request", MakePod().Name("b").Cpu("200m").Memory("500Mi").Label("app", "web").Info()});
  cases.push_back({"an extended resource", like().Request("nvidia.com/gpu", "1").Info()});
  cases.push_back({"a nodeSelector", like().NodeSelector("disktype", "ssd").Info()});
  cases.push_back({"required node affinity", like().AffinityTerm({Req{"disktype", api::NodeSelectorOperator::In, {"ssd"}}}).Info()});
  cases.push_back({"preferred node affinity", like().PreferredTerm(5, {Req{"disktype", api::NodeSelectorOperator::In, {"ssd"}}}).Info()});
  cases.push_back({"a toleration", like().Toleration("gpu", api::TolerationOperator::Exists, "", api::TaintEffect::NoSchedule).Info()});
  cases.push_back({"a host port", like().HostPort(8080).Info()});
  cases.push_back({"an image", like().Image("nginx:1.25").Info()});
  cases.push_back({"a volume", like().Volume(GceVolume("disk")).Info()});
  cases.push_back({"a priority", like().Priority(10).Info()});
  cases.push_back({"a controller", like().Owner("ReplicaSet", "rs-1").Info()});
  cases.push_back({"a scheduler name", like().SchedulerName("other").Info()});
  cases.push_back({"a nominated node", like().NominatedNode("n1").Info()});
  cases.push_back({"a node name", like().Node("n1").Info()});
  cases.push_back({"being deleted", like().Deleting().Info()});
  cases.push_back({"a preemption policy", like().PreemptNever().Info()});
  cases.push_back({"an init container", like().InitImage("busybox:1.28").Info()});
  {
    auto c = std::make_unique<api::TopologySpreadConstraintT>();
    c->max_skew = 1;
    c->topology_key = std::string(kZone);
    cases.push_back({"a spread constraint", like().SpreadConstraint(std::move(c)).Info()});
  }
  cases.push_back({"pod anti-affinity", AntiAffinityTo(like().Name("b"), "").Info()});
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(EquivalenceSignature(c.pod) != EquivalenceSignature(base));
  }
}

TEST_CASE("Snapshot generations follow node and object changes", "[equivalence]") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Info()).ok());
  const uint64_t a0 = snap.NodeGeneration(0), b0 = snap.NodeGeneration(1), o0 = snap.ObjectsGeneration();
  CHECK(a0 != b0);

  Bind(snap, MakePod().Name("p").Info(), "a");
  CHECK(snap.NodeGeneration(0) != a0);
  CHECK(snap.NodeGeneration(1) == b0);
  CHECK(snap.ObjectsGeneration() == o0);

  const uint64_t a1 = snap.NodeGeneration(0);
  REQUIRE(snap.RemovePod("uid-p").ok());
  CHECK(snap.NodeGeneration(0) != a1);

  // Nominations change nothing: the runner reads them itself.
  const uint64_t a2 = snap.NodeGeneration(0);
  snap.AddNominatedPod(MakePod().Name("n").NominatedNode("a").Info());
  CHECK(snap.NodeGeneration(0) == a2);
  CHECK(snap.ObjectsGeneration() == o0);

  // Objects that are not pods move the objects generation.
  std::vector<std::pair<const char*, std::function<void()>>> changes = {
      {"a node replaced", [&] { REQUIRE(snap.UpsertNode(MakeNode().Name("b").Label("x", "y").Info()).ok()); }},
      {"a node added", [&] { REQUIRE(snap.UpsertNode(MakeNode().Name("c").Info()).ok()); }},
      {"a node removed", [&] { REQUIRE(snap.RemoveNode("c").ok()); }},
      {"a service", [&] { REQUIRE(snap.UpsertService(ServiceInfo{"default", "web", {{"app", "web"}}}).ok()); }},
      {"a namespace", [&] { REQUIRE(snap.UpsertNamespace("team", {{"t", "1"}}).ok()); }},
      {"a volume", [&] { snap.UpsertPersistentVolume(PvBuilder("pv").Gce("d").Info()); }},
      {"a claim", [&] { snap.UpsertPersistentVolumeClaim(PvcBuilder("data").Info()); }},
  };
  for (auto& [what, change] : changes) {
    INFO(what);
    const uint64_t before = snap.ObjectsGeneration();
    change();
    CHECK(snap.ObjectsGeneration() != before);
  }
  // A replaced node keeps its pods and gets a new generation.
  const uint64_t b1 = snap.NodeGeneration(1);
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Info()).ok());
  CHECK(snap.NodeGeneration(1) != b1);
}

TEST_CASE("the equivalence cache sees what changed since it was filled", "[equivalence]") {
  const Profile profile = BuildProfile(0);
  EquivalenceCache cache(profile);
  Snapshot snap;
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu("4").Memory("8Gi").Info()).ok());
  }
  auto pod = [](const std::string& name) { return MakePod().Name(name).Cpu("3").Memory("1Gi").Info(); };

  Decision first = Both(profile, cache, pod("p1"), snap);
  CHECK(first.feasible_nodes == 3);
  CHECK(cache.misses() == 1);
  CHECK(cache.hits() == 0);

  SECTION("a node tainted since rejects the next equivalent pod") {
    REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("4").Memory("8Gi")
                                .Taint("dedicated", "gpu", api::TaintEffect::NoSchedule).Info()).ok());
    Decision d = Both(profile, cache, pod("p2"), snap);
    CHECK(cache.hits() == 1);
    CHECK(VerdictOn(d, "a") == "UnschedulableAndUnresolvable (TaintToleration): node(s) had untolerated taint {dedicated: gpu}");
    CHECK(d.feasible_nodes == 2);
  }
  SECTION("a pod counted on a node since is counted for the next equivalent pod") {
    Bind(snap, pod("p1"), "b");
    Decision d = Both(profile, cache, pod("p2"), snap);
    CHECK(cache.hits() == 1);
    CHECK(VerdictOn(d, "b") == "Unschedulable (NodeResourcesFit): Insufficient cpu");
    CHECK(VerdictOn(d, "a") == "Success");
    CHECK(d.feasible_nodes == 2);
  }
  SECTION("a pod nominated to a node since holds its room") {
    snap.AddNominatedPod(MakePod().Name("high").Cpu("2").Priority(100).NominatedNode("c").Info());
    Decision d = Both(profile, cache, pod("p2"), snap);
    CHECK(VerdictOn(d, "c") == "Unschedulable (NodeResourcesFit): Insufficient cpu");
    snap.RemoveNominatedPod("uid-high");
    Decision again = Both(profile, cache, pod("p3"), snap);
    CHECK(VerdictOn(again, "c") == "Success");
  }
  SECTION("a pod that differs in anything scheduling reads is another class") {
    Both(profile, cache, MakePod().Name("p2").Cpu("3").Memory("2Gi").Info(), snap);
    CHECK(cache.misses() == 2);
    CHECK(cache.hits() == 0);
  }
  SECTION("pods whose inter-pod affinity reads other nodes do not use the cache") {
    auto anti = [](const std::string& name) {
      return AntiAffinityTo(MakePod().Name(name).Cpu("1").Label("app", "db"), "db").Info();
    };
    for (const char* name : {"a", "b", "c"}) {
      REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu("4").Memory("8Gi").Label(std::string(kHostname), name).Info()).ok());
    }
    Bind(snap, anti("db-0"), "a");
    const uint64_t lookups = cache.hits() + cache.misses();
    Decision d = Both(profile, cache, anti("db-1"), snap);
    CHECK(VerdictOn(d, "a") == "Unschedulable (InterPodAffinity): node(s) didn't match pod anti-affinity rules");
    CHECK(cache.hits() + cache.misses() == lookups);
  }
}

// One of a few kinds of pod, i naming it.
PodInfo TemplatePod(int kind, int i) {
  const std::string name = "p" + std::to_string(i);
  switch (kind) {
    case 0:
      return MakePod().Name(name).Cpu("100m").Memory("500Mi").Info();
    case 1:
      return MakePod().Name(name).Cpu("500m").NodeSelector(std::string(kZone), "z1")
          .Toleration("dedicated", api::TolerationOperator::Equal, "gpu", api::TaintEffect::NoSchedule).Info();
    case 2:
      return MakePod().Name(name).Cpu("200m").HostPort(8080).Info();
    case 3:
      return MakePod().Name(name).Cpu("300m").Image("nginx:1.25")
          .PreferredTerm(10, {Req{"disktype", api::NodeSelectorOperator::In, {"ssd"}}}).Info();
    case 4:
      return MakePod().Name(name).Cpu("100m").Volume(GceVolume("disk-1")).Info();
    case 5:
      return MakePod().Name(name).Cpu("100m").Volume(ClaimVolume("data")).Info();
    case 6:
      return MakePod().Name(name).Cpu("2").Memory("4Gi").Info();
    case 7:
      return MakePod().Name(name).Info();  // BestEffort: kept off memory pressure
    case 8:
      return MakePod().Name(name).Cpu("100m").Label("app", "web").Owner("ReplicaSet", "rs-web").Info();
    case 9:
      return MakePod().Name(name).Cpu("1").Priority(100).Info();
    case 10: {
      // Keeps off nodes running kind 8 pods; once placed, kind 8 pods keep
      // off it too: InterPodAffinity stops skipping for both kinds.
      return AntiAffinityTo(MakePod().Name(name).Cpu("100m").Label("app", "guard"), "web").Info();
    }
    default: {
      // Spread over zones, scored: the filters may use the cache, the scores not.
      auto c = std::make_unique<api::TopologySpreadConstraintT>();
      c->max_skew = 1;
      c->topology_key = std::string(kZone);
      c->when_unsatisfiable = api::UnsatisfiableConstraintAction::ScheduleAnyway;
      c->label_selector = std::make_unique<api::LabelSelectorT>();
      testing::PutString(c->label_selector->match_labels, "app", "web");
      return MakePod().Name(name).Cpu("100m").Label("app", "web").SpreadConstraint(std::move(c)).Info();
    }
  }
}

// A seeded walk through cluster changes; every cycle is run with and
// without the cache and must decide the same.
void RandomWalk(int32_t percentage, int num_nodes, uint32_t seed, int steps) {
  const Profile profile = BuildProfile(percentage);
  EquivalenceCache cache(profile, 3);  // fewer classes than kinds: eviction happens
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };

  Snapshot snap;
  auto node = [&](int i, int variant) {
    const std::string name = "n" + std::to_string(i);
    auto b = MakeNode().Name(name).Cpu(variant % 5 == 0 ? "2" : "4").Memory("8Gi").Pods("20")
                 .Label(std::string(kHostname), name).Label(std::string(kZone), "z" + std::to_string(i % 3));
    if (variant % 3 == 1) b.Label("disktype", "ssd");
    if (variant % 7 == 2) b.Taint("dedicated", "gpu", api::TaintEffect::NoSchedule);
    if (variant % 11 == 3) b.Taint("spot", "true", api::TaintEffect::PreferNoSchedule);
    if (variant % 13 == 4) b.Condition("MemoryPressure", api::ConditionStatus::True);
    if (variant % 17 == 5) b.Unschedulable();
    if (variant % 4 == 1) b.Image({"nginx:1.25"}, 200 * 1024 * 1024);
    if (variant % 19 == 6) {
      b.Annotation(std::string(kPreferAvoidPodsAnnotationKey),
                   R"({"preferAvoidPods":[{"podSignature":{"podController":{"kind":"ReplicaSet","uid":"rs-web"}}}]})");
    }
    return b.Info();
  };
  for (int i = 0; i < num_nodes; ++i) REQUIRE(snap.UpsertNode(node(i, i)).ok());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("data").BoundTo("pv-data").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-data").Gce("pd-data").Label(std::string(kZone), "z1").ClaimRef("default", "data").Info());

  std::vector<std::pair<std::string, std::string>> placed;  // uid, node
  size_t start = 0;
  int scheduled = 0;
  for (int step = 0; step < steps; ++step) {
    const int what = pick(20);
    if (what < 13) {  // a pod, most often one like the last
      const PodInfo pod = TemplatePod(pick(12), step);
      Decision d = Both(profile, cache, pod, snap, start);
      start = d.next_start_node_index;
      if (d.scheduled()) {
        ++scheduled;
        placed.emplace_back(pod.uid, d.node);
        Bind(snap, pod, d.node);
      }
    } else if (what < 15 && !placed.empty()) {  // a pod goes away
      const size_t k = static_cast<size_t>(pick(static_cast<int>(placed.size())));
      REQUIRE(snap.RemovePod(placed[k].first).ok());
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (what < 17) {  // a node changes (its pods stay)
      REQUIRE(snap.UpsertNode(node(pick(num_nodes), pick(40))).ok());
    } else if (what == 17) {  // a nomination comes or goes
      const std::string uid = "uid-nominated";
      if (!snap.NominatedNodeOf(uid).empty()) {
        snap.RemoveNominatedPod(uid);
      } else {
        snap.AddNominatedPod(MakePod().Name("nominated").Cpu("3").Priority(1000)
                                 .NominatedNode("n" + std::to_string(pick(num_nodes))).Info());
      }
    } else if (what == 18) {  // a volume moves zone
      snap.UpsertPersistentVolume(PvBuilder("pv-data").Gce("pd-data")
                                      .Label(std::string(kZone), "z" + std::to_string(pick(3)))
                                      .ClaimRef("default", "data").Info());
    } else {  // a Service selecting kind 8 pods (default spreading)
      REQUIRE(snap.UpsertService(ServiceInfo{"default", "web", {{"app", "web"}}}).ok());
    }
  }
  // The walk exercised the cache, and not only its misses.
  CHECK(scheduled > steps / 4);
  CHECK(cache.hits() > 0);
  CHECK(cache.misses() > 0);
}

TEST_CASE("with the equivalence cache every decision is that of a full evaluation", "[equivalence]") {
  SECTION("every node visited (percentageOfNodesToScore 100)") { RandomWalk(100, 40, 1, 400); }
  SECTION("the adaptive percentage over 150 nodes, start index rotating") { RandomWalk(0, 150, 2, 300); }
  SECTION("another seed") { RandomWalk(50, 120, 3, 300); }
}

}  // namespace
}  // namespace podflow::scheduler
