// Whole-profile scheduling cycles with the default profile.
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;

const Profile& DefaultProfile(uint64_t seed = 0) {
  static auto registry = plugins::NewInTreeRegistry();
  static std::map<uint64_t, Profile> profiles;
  auto it = profiles.find(seed);
  if (it == profiles.end()) {
    ProfileConfig config = DefaultProfileConfig();
    config.seed = seed;
    auto p = Profile::Build(*registry, config);
    REQUIRE(p.ok());
    it = profiles.emplace(seed, std::move(p).value()).first;
  }
  return it->second;
}

Snapshot ThreeNodes() {
  Snapshot snap;
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu("4").Memory("8Gi").Info()).ok());
  }
  return snap;
}

void Bind(Snapshot& snap, PodInfo pod, const std::string& node) {
  pod.node_name = node;
  REQUIRE(snap.AddPod(std::move(pod)).ok());
}

TEST_CASE("the emptiest node wins") {
  Snapshot snap = ThreeNodes();
  Bind(snap, MakePod().Name("x").Cpu("2").Memory("4Gi").Info(), "a");
  Bind(snap, MakePod().Name("y").Cpu("1").Memory("2Gi").Info(), "b");
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("500m").Memory("1Gi").Info(), snap);
  REQUIRE(d.ok());
  INFO(d->Explain());
  CHECK(d->node == "c");
  CHECK(d->feasible_nodes == 3);
  CHECK(d->tied_nodes == 1);
  REQUIRE(d->scores.size() == 3);
  auto raw = [&](size_t node, std::string_view plugin) {
    for (const PluginScore& p : d->scores[node].plugins) {
      if (p.plugin == plugin) return p.raw;
    }
    return int64_t{-1};
  };
  // c: Fit cpu (4000-500)*100/4000 = 87, memory 7/8 -> 87 => 87; Balanced 0.125 vs 0.125 -> 100.
  CHECK(raw(2, "NodeResourcesFit") == 87);
  CHECK(raw(2, "NodeResourcesBalancedAllocation") == 100);
  // The other default scores are the same on every node here: TaintToleration
  // 100 * 3 (no taints), NodePreferAvoidPods 100 * 10000, the rest 0.
  constexpr int64_t kSame = 300 + 1000000;
  CHECK(d->scores[2].total == kSame + 187);
  // b: cpu (4000-1500)/4000 = 62, memory 5/8 -> 62 => 62; Balanced 100 => 162.
  CHECK(d->scores[1].total == kSame + 162);
  // a: cpu (4000-2500)/4000 = 37, memory 3/8 -> 37 => 37; Balanced 100 => 137.
  CHECK(d->scores[0].total == kSame + 137);
}

TEST_CASE("nodeSelector disktype=ssd lands on the labelled node") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("4").Memory("8Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("4").Memory("8Gi").Label("disktype", "ssd").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("c").Cpu("4").Memory("8Gi").Label("disktype", "hdd").Info()).ok());
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("1").NodeSelector("disktype", "ssd").Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->node == "b");
  CHECK(d->feasible_nodes == 1);
  CHECK(d->scores.empty());  // one feasible node: not scored, as kube-scheduler
  REQUIRE(d->verdicts.size() == 3);
  CHECK(d->verdicts[0].status.plugin() == "NodeAffinity");
  CHECK(d->verdicts[1].status.IsSuccess());
}

TEST_CASE("a pod asking more cpu than any node has") {
  Snapshot snap = ThreeNodes();
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("5").Info(), snap);
  REQUIRE(d.ok());
  CHECK_FALSE(d->scheduled());
  CHECK(d->message ==
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod..");
  for (const auto& v : d->verdicts) CHECK(v.status.plugin() == "NodeResourcesFit");
}

TEST_CASE("the first failing filter decides a node's verdict") {
  Snapshot snap;
  // Cordoned and too small: NodeUnschedulable runs first and is the reason.
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("1").Unschedulable().Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("1").Taint("dedicated", "gpu", api::TaintEffect::NoSchedule).Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("c").Cpu("1").Memory("1Gi").Info()).ok());
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("2").Memory("2Gi").Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->message ==
        "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, "
        "1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling..");
}

TEST_CASE("no nodes") {
  Snapshot snap;
  auto d = Schedule(DefaultProfile(), MakePod().Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->message == "no nodes available to schedule pods");
}

TEST_CASE("the seeded tie-break is reproducible and spreads over ties") {
  Snapshot snap;
  for (const char* name : {"n0", "n1", "n2", "n3"}) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu("4").Memory("8Gi").Info()).ok());
  }
  PodInfo pod = MakePod().Name("p").Cpu("1").Info();
  std::set<std::string> chosen;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto first = Schedule(DefaultProfile(seed), pod, snap);
    auto again = Schedule(DefaultProfile(seed), pod, snap);
    REQUIRE(first.ok());
    REQUIRE(again.ok());
    CHECK(first->tied_nodes == 4);
    CHECK(first->node == again->node);
    chosen.insert(first->node);
  }
  CHECK(chosen.size() == 4);

  // Different pods under one seed spread too.
  std::set<std::string> by_pod;
  for (int i = 0; i < 40; ++i) {
    auto d = Schedule(DefaultProfile(7), MakePod().Name("p" + std::to_string(i)).Info(), snap);
    REQUIRE(d.ok());
    by_pod.insert(d->node);
  }
  CHECK(by_pod.size() == 4);
}

TEST_CASE("assumed pods count in the next cycle") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("2").Memory("4Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("2").Memory("4Gi").Info()).ok());
  std::vector<std::string> placed;
  for (int i = 0; i < 4; ++i) {
    PodInfo pod = MakePod().Name("p" + std::to_string(i)).Cpu("1").Memory("1Gi").Info();
    auto d = Schedule(DefaultProfile(), pod, snap);
    REQUIRE(d.ok());
    REQUIRE(d->scheduled());
    Bind(snap, pod, d->node);
    placed.push_back(d->node);
  }
  // After the first pod, the other node is emptier; so they alternate.
  CHECK(placed[1] != placed[0]);
  CHECK(placed[3] != placed[2]);
  auto full = Schedule(DefaultProfile(), MakePod().Name("late").Cpu("1").Info(), snap);
  REQUIRE(full.ok());
  CHECK(full->message ==
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod..");
}

TEST_CASE("large clusters: visiting stops after enough feasible nodes") {
  CHECK(NumFeasibleNodesToFind(0, 50) == 50);
  CHECK(NumFeasibleNodesToFind(0, 1000) == 420);   // 50 - 1000/125 = 42%
  CHECK(NumFeasibleNodesToFind(0, 5000) == 500);   // 50 - 40 = 10%
  CHECK(NumFeasibleNodesToFind(0, 10000) == 500);  // floored at 5%
  CHECK(NumFeasibleNodesToFind(0, 150) == 100);    // 46% = 69 < 100
  CHECK(NumFeasibleNodesToFind(100, 1000) == 1000);

  Snapshot snap;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(snap.UpsertNode(MakeNode().Name("n" + std::to_string(i)).Cpu("4").Memory("8Gi").Info()).ok());
  }
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("1").Info(), snap, {.start_node_index = 900});
  REQUIRE(d.ok());
  CHECK(d->feasible_nodes == 420);
  CHECK(d->verdicts.size() == 420);
  CHECK(d->verdicts.front().node == "n900");
  CHECK(d->next_start_node_index == (900 + 420) % 1000);
}

TEST_CASE("a decision keeps per-plugin scores for the selected node and the best others") {
  Snapshot snap;
  // 100 nodes; the first 10 are half full, so every other node scores higher.
  for (int i = 0; i < 100; ++i) {
    REQUIRE(snap.UpsertNode(MakeNode().Name("n" + std::to_string(i)).Cpu("4").Memory("8Gi").Info()).ok());
    if (i < 10) Bind(snap, MakePod().Name("busy" + std::to_string(i)).Cpu("2").Memory("4Gi").Info(), "n" + std::to_string(i));
  }
  auto d = Schedule(DefaultProfile(), MakePod().Cpu("1").Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->feasible_nodes == 100);
  REQUIRE(d->scores.size() == kMaxExplainedScoredNodes);
  bool has_selected = false;
  for (size_t k = 0; k < d->scores.size(); ++k) {
    has_selected = has_selected || d->scores[k].node == d->node;
    // None of the half-full nodes is among the best 64, and order is visit order.
    const int index = std::stoi(d->scores[k].node.substr(1));
    CHECK(index >= 10);
    if (k > 0) CHECK(index > std::stoi(d->scores[k - 1].node.substr(1)));
    int64_t sum = 0;
    for (const PluginScore& p : d->scores[k].plugins) sum += p.weighted;
    CHECK(sum == d->scores[k].total);
  }
  CHECK(has_selected);
  CHECK(d->tied_nodes == 90);
}

// PreFilter plugins that narrow the nodes worth visiting to a fixed set.
template <const char* kPluginName>
struct Narrow {
  static constexpr std::string_view kName = kPluginName;
  std::vector<std::string> names;
  PreFilterResult PreFilter(CycleState&, const PodInfo&, const Snapshot&) const { return {{}, names}; }
  PluginStatus Filter(const CycleState&, const PodInfo&, const NodeInfo&) const { return {}; }
};
constexpr char kNarrowA[] = "NarrowA";
constexpr char kNarrowB[] = "NarrowB";

Profile NarrowingProfile(std::vector<std::string> a, std::optional<std::vector<std::string>> b) {
  static Registry registry;
  registry = plugins::NewInTreeRegistry().value();
  REQUIRE(registry.Register("NarrowA", [a](const YAML::Node&) -> Result<PluginInstance> {
    return MakePluginInstance(Narrow<kNarrowA>{a});
  }).ok());
  REQUIRE(registry.Register("NarrowB", [b](const YAML::Node&) -> Result<PluginInstance> {
    return MakePluginInstance(Narrow<kNarrowB>{b.value_or(std::vector<std::string>{})});
  }).ok());
  ProfileConfig config = DefaultProfileConfig();
  config.post_filter.clear();
  config.filter.insert(config.filter.begin(), "NarrowA");
  if (b) config.filter.insert(config.filter.begin() + 1, "NarrowB");
  return Profile::Build(registry, config).value();
}

TEST_CASE("nodes a PreFilter rules out are rejected and counted as kube-scheduler counts them") {
  Snapshot snap = ThreeNodes();
  const Profile profile = NarrowingProfile({"b"}, std::nullopt);
  // Only b is visited; it is too small.
  auto d = Schedule(profile, MakePod().Cpu("5").Info(), snap);
  REQUIRE(d.ok());
  INFO(d->Explain());
  CHECK_FALSE(d->scheduled());
  CHECK(d->message ==
        "0/3 nodes are available: 1 Insufficient cpu, 2 node is filtered out by the prefilter result.");
  REQUIRE(d->verdicts.size() == 3);
  for (const NodeVerdict& v : d->verdicts) {
    if (v.node == "b") continue;
    CHECK(v.status.code() == PluginCode::kUnschedulableAndUnresolvable);
    CHECK(v.status.plugin() == "NarrowA");
  }
  // A pod that fits goes to the one node left, unscored.
  auto fits = Schedule(profile, MakePod().Cpu("1").Info(), snap);
  REQUIRE(fits.ok());
  CHECK(fits->node == "b");
  CHECK(fits->scores.empty());
}

TEST_CASE("PreFilter narrowings with nothing in common reject every node") {
  Snapshot snap = ThreeNodes();
  auto d = Schedule(NarrowingProfile({"a"}, std::vector<std::string>{"c"}), MakePod().Info(), snap);
  REQUIRE(d.ok());
  CHECK_FALSE(d->scheduled());
  CHECK(d->message == "0/3 nodes are available: node(s) didn't satisfy plugin(s) [NarrowA NarrowB] simultaneously.");
  auto one = Schedule(NarrowingProfile({}, std::nullopt), MakePod().Info(), snap);
  REQUIRE(one.ok());
  CHECK(one->message == "0/3 nodes are available: node(s) didn't satisfy plugin NarrowA.");
}

// A plugin that skips (or not) at PreFilter and PreScore and counts the
// Filter and Score calls it gets: Filter rejects node a, Score gives 7 (it
// has no NormalizeScore).
struct Skipper {
  static constexpr std::string_view kName = "Skipper";
  bool skip = true;
  std::shared_ptr<int> filters = std::make_shared<int>(0);
  std::shared_ptr<int> scores = std::make_shared<int>(0);
  PreFilterResult PreFilter(CycleState&, const PodInfo&, const Snapshot&) const {
    return {skip ? PluginStatus::Skip() : PluginStatus::Success(), std::nullopt};
  }
  PluginStatus Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const {
    ++*filters;
    return node.name == "a" ? PluginStatus::Unschedulable("no a") : PluginStatus::Success();
  }
  PluginStatus PreScore(CycleState&, const PodInfo&, const Snapshot&, std::span<const NodeInfo* const>) const {
    return skip ? PluginStatus::Skip() : PluginStatus::Success();
  }
  int64_t Score(const CycleState&, const PodInfo&, const NodeInfo&) const {
    ++*scores;
    return 7;
  }
};

TEST_CASE("a plugin answering Skip is not called at Filter or Score and scores 0") {
  for (bool skip : {true, false}) {
    INFO("skip " << skip);
    Skipper skipper;
    skipper.skip = skip;
    Registry registry = plugins::NewInTreeRegistry().value();
    REQUIRE(registry.Register("Skipper", [skipper](const YAML::Node&) -> Result<PluginInstance> {
      return MakePluginInstance(skipper);
    }).ok());
    ProfileConfig config = DefaultProfileConfig();
    config.filter.push_back("Skipper");
    config.score.push_back({"Skipper", 1});
    const Profile profile = Profile::Build(registry, config).value();
    Snapshot snap = ThreeNodes();
    auto d = Schedule(profile, MakePod().Cpu("1").Info(), snap);
    REQUIRE(d.ok());
    INFO(d->Explain());
    CHECK(*skipper.filters == (skip ? 0 : 3));
    CHECK(*skipper.scores == (skip ? 0 : 2));
    CHECK(d->feasible_nodes == (skip ? 3 : 2));
    for (const NodeScores& n : d->scores) {
      const PluginScore& last = n.plugins.back();
      REQUIRE(last.plugin == "Skipper");
      CHECK(last.raw == (skip ? 0 : 7));
      CHECK(last.weighted == (skip ? 0 : 7));
    }
  }
}

// A filter that is broken: an Error on every node.
struct Broken {
  static constexpr std::string_view kName = "Broken";
  PluginStatus Filter(const CycleState&, const PodInfo&, const NodeInfo&) const {
    return PluginStatus::Error("broken");
  }
};

TEST_CASE("the runner counts attempts and times extension points, plugins on sampled cycles") {
  Snapshot snap = ThreeNodes();
  SchedulerMetrics metrics;
  ScheduleOptions options;
  options.metrics = &metrics;
  const int every = static_cast<int>(SchedulerMetrics::kPluginSampleEvery);
  const int cycles = 2 * every;
  // Every third pod (i % 3 == 0) fits nowhere: 5 cpu on 4-cpu nodes.
  auto fits = [](int i) { return i % 3 != 0; };
  uint64_t scheduled = 0;
  for (int i = 0; i < cycles; ++i) {
    const std::string cpu = fits(i) ? "1" : "5";
    REQUIRE(Schedule(DefaultProfile(), MakePod().Name("p" + std::to_string(i)).Cpu(cpu).Info(), snap, options).ok());
    scheduled += fits(i) ? 1 : 0;
  }
  const uint64_t unschedulable = static_cast<uint64_t>(cycles) - scheduled;
  CHECK(metrics.total_attempts() == static_cast<uint64_t>(cycles));
  CHECK(metrics.attempts(AttemptResult::kScheduled) == scheduled);
  CHECK(metrics.attempts(AttemptResult::kUnschedulable) == unschedulable);
  CHECK(metrics.attempts(AttemptResult::kError) == 0);
  CHECK(metrics.point(ExtensionPoint::kPreFilter).count == static_cast<uint64_t>(cycles));
  CHECK(metrics.point(ExtensionPoint::kFilter).count == static_cast<uint64_t>(cycles));
  CHECK(metrics.point(ExtensionPoint::kPostFilter).count == unschedulable);  // preemption ran
  CHECK(metrics.point(ExtensionPoint::kScore).count == scheduled);           // three feasible nodes
  // Two cycles time each plugin: i = 0 (unschedulable: filters and
  // preemption ran) and i = every (filters, then scores or preemption).
  const auto& plugins = metrics.plugins();
  REQUIRE(plugins.count("NodeResourcesFit/Filter") == 1);
  CHECK(plugins.at("NodeResourcesFit/Filter").count == 2);
  REQUIRE(plugins.count("DefaultPreemption/PostFilter") == 1);
  CHECK(plugins.at("DefaultPreemption/PostFilter").count == (fits(every) ? 1u : 2u));
  CHECK(plugins.count("NodeResourcesFit/Score") == (fits(every) ? 1u : 0u));
  CHECK(metrics.Summary().rfind(std::to_string(cycles) + " attempts (" + std::to_string(scheduled) + " scheduled, " +
                                    std::to_string(unschedulable) + " unschedulable, 0 error), ",
                                0) == 0);

  // A plugin error is an attempt of its own kind.
  Registry registry = plugins::NewInTreeRegistry().value();
  REQUIRE(registry.Register("Broken", [](const YAML::Node&) -> Result<PluginInstance> {
    return MakePluginInstance(Broken{});
  }).ok());
  ProfileConfig config = DefaultProfileConfig();
  config.filter.push_back("Broken");
  const Profile broken = Profile::Build(registry, config).value();
  metrics.Reset();
  CHECK_FALSE(Schedule(broken, MakePod().Cpu("1").Info(), snap, options).ok());
  CHECK(metrics.total_attempts() == 1);
  CHECK(metrics.attempts(AttemptResult::kError) == 1);
}

}  // namespace
}  // namespace podflow::scheduler
