// Registry duplicates and profile validation.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

// A plugin that only scores, and one that scores out of range.
struct OnlyScore {
  static constexpr std::string_view kName = "OnlyScore";
  int64_t Score(const CycleState&, const PodInfo&, const NodeInfo&) const { return 7; }
};
static_assert(ScorePlugin<OnlyScore>);
static_assert(!FilterPlugin<OnlyScore>);

struct Doubler {
  static constexpr std::string_view kName = "Doubler";
  int64_t Score(const CycleState&, const PodInfo&, const NodeInfo& node) const {
    return node.allocatable.milli_cpu;
  }
  // Scales the highest to 100.
  void NormalizeScore(const PodInfo&, std::span<int64_t> scores) const {
    int64_t max = 0;
    for (int64_t s : scores) max = std::max(max, s);
    for (int64_t& s : scores) s = max == 0 ? 0 : s * 100 / max;
  }
};
static_assert(NormalizeScorePlugin<Doubler>);

// Scores out of range and has no NormalizeScore.
struct Raw {
  static constexpr std::string_view kName = "Raw";
  int64_t Score(const CycleState&, const PodInfo&, const NodeInfo&) const { return 101; }
};

TEST_CASE("registry refuses a duplicate name") {
  Registry r;
  REQUIRE(r.Register<OnlyScore>().ok());
  Status again = r.Register<OnlyScore>();
  CHECK(again.code() == Code::kAlreadyExists);
  CHECK_THAT(again.message(), Catch::Contains("\"OnlyScore\" is already registered"));
  CHECK(r.Register("", [](const YAML::Node&) { return Result<PluginInstance>(MakePluginInstance(OnlyScore{})); }).code() ==
        Code::kInvalid);
}

TEST_CASE("the in-tree registry holds every plugin once") {
  auto r = plugins::NewInTreeRegistry();
  REQUIRE(r.ok());
  // Names() is sorted; registering a name twice would have failed above.
  const std::vector<std::string> names = r->Names();
  for (const char* want : {"ImageLocality", "NodeAffinity", "NodeName", "NodePorts", "NodePreferAvoidPods",
                           "NodePressure", "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                           "NodeUnschedulable", "TaintToleration"}) {
    INFO(want);
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  }
  const ProfileConfig config = DefaultProfileConfig();
  auto profile = Profile::Build(*r, config);
  REQUIRE(profile.ok());
  REQUIRE(profile->filter_plugins().size() == config.filter.size());
  CHECK(profile->filter_plugins()[0]->name == "NodeUnschedulable");
  REQUIRE(profile->score_plugins().size() == config.score.size());
  // kube-scheduler's default weights, and the seeds' NodePreferAvoidPods.
  std::map<std::string, int64_t> weights;
  for (const auto& s : profile->score_plugins()) weights[s.plugin->name] = s.weight;
  CHECK(weights["TaintToleration"] == 3);
  CHECK(weights["NodeAffinity"] == 2);
  CHECK(weights["NodeResourcesFit"] == 1);
  CHECK(weights["NodeResourcesBalancedAllocation"] == 1);
  CHECK(weights["ImageLocality"] == 1);
  CHECK(weights["NodePreferAvoidPods"] == 10000);
  // NodeResourcesFit filters and scores: one instance.
  const PluginInstance* fit_filter = nullptr;
  const PluginInstance* fit_score = nullptr;
  for (const auto* f : profile->filter_plugins()) {
    if (f->name == "NodeResourcesFit") fit_filter = f;
  }
  for (const auto& sc : profile->score_plugins()) {
    if (sc.plugin->name == "NodeResourcesFit") fit_score = sc.plugin;
  }
  CHECK(fit_filter != nullptr);
  CHECK(fit_filter == fit_score);
}

TEST_CASE("profile validation") {
  auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  struct Case {
    const char* name;
    ProfileConfig config;
    const char* error;
  };
  auto with = [](auto edit) {
    ProfileConfig c = DefaultProfileConfig();
    edit(c);
    return c;
  };
  std::vector<Case> cases;
  cases.push_back({"unknown filter plugin", with([](ProfileConfig& c) { c.filter.push_back("NodeFoo"); }),
                   "profile \"default-scheduler\": filter plugin \"NodeFoo\": unknown plugin (known: "});
  cases.push_back({"unknown score plugin", with([](ProfileConfig& c) { c.score.push_back({"ImageLocalityX", 1}); }),
                   "score plugin \"ImageLocalityX\": unknown plugin"});
  cases.push_back({"score plugin without weight",
                   with([](ProfileConfig& c) {
                     for (auto& s : c.score) {
                       if (s.name == "NodeResourcesBalancedAllocation") s.weight.reset();
                     }
                   }),
                   "score plugin \"NodeResourcesBalancedAllocation\" has no weight"});
  cases.push_back({"zero weight", with([](ProfileConfig& c) {
                     for (auto& s : c.score) {
                       if (s.name == "NodeResourcesFit") s.weight = 0;
                     }
                   }),
                   "score plugin \"NodeResourcesFit\": weight must be positive, got 0"});
  cases.push_back({"filter without Filter",
                   with([](ProfileConfig& c) { c.filter.push_back("NodeResourcesBalancedAllocation"); }),
                   "filter plugin \"NodeResourcesBalancedAllocation\" does not implement Filter"});
  cases.push_back({"score without Score", with([](ProfileConfig& c) { c.score.push_back({"NodeName", 1}); }),
                   "score plugin \"NodeName\" does not implement Score"});
  cases.push_back({"duplicate filter", with([](ProfileConfig& c) { c.filter.push_back("NodeName"); }),
                   "filter plugin \"NodeName\" is listed twice"});
  cases.push_back({"duplicate score", with([](ProfileConfig& c) { c.score.push_back({"NodeResourcesFit", 2}); }),
                   "score plugin \"NodeResourcesFit\" is listed twice"});
  cases.push_back({"empty scheduler name", with([](ProfileConfig& c) { c.scheduler_name.clear(); }),
                   "schedulerName is empty"});
  cases.push_back({"percentage out of range", with([](ProfileConfig& c) { c.percentage_of_nodes_to_score = 101; }),
                   "percentageOfNodesToScore must be in 0..100, got 101"});
  for (const auto& c : cases) {
    INFO(c.name);
    auto p = Profile::Build(*registry, c.config);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == Code::kInvalid);
    CHECK_THAT(p.status().message(), Catch::Contains(c.error));
  }
}

TEST_CASE("profile handles pods by schedulerName") {
  auto registry = plugins::NewInTreeRegistry();
  auto profile = Profile::Build(*registry, DefaultProfileConfig());
  REQUIRE(profile.ok());
  CHECK(profile->Handles(testing::MakePod().Info()));
  CHECK(profile->Handles(testing::MakePod().SchedulerName("default-scheduler").Info()));
  CHECK_FALSE(profile->Handles(testing::MakePod().SchedulerName("other").Info()));
}

TEST_CASE("custom plugins: NormalizeScore runs, weights multiply") {
  Registry r;
  REQUIRE(r.Register<OnlyScore>().ok());
  REQUIRE(r.Register<Doubler>().ok());
  ProfileConfig config;
  config.score = {{"OnlyScore", 2}, {"Doubler", 3}};
  auto profile = Profile::Build(r, config);
  REQUIRE(profile.ok());
  Snapshot snap;
  REQUIRE(snap.UpsertNode(testing::MakeNode().Name("small").Cpu("1").Info()).ok());
  REQUIRE(snap.UpsertNode(testing::MakeNode().Name("big").Cpu("4").Info()).ok());
  auto d = Schedule(*profile, testing::MakePod().Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->node == "big");
  REQUIRE(d->scores.size() == 2);
  // small: OnlyScore 7*2 = 14; Doubler raw 1000 -> 1000*100/4000 = 25, *3 = 75; total 89.
  const NodeScores& small = d->scores[0];
  CHECK(small.node == "small");
  CHECK(small.plugins[1].raw == 1000);
  CHECK(small.plugins[1].normalized == 25);
  CHECK(small.plugins[1].weighted == 75);
  CHECK(small.total == 89);
  CHECK(d->scores[1].total == 14 + 300);
}

TEST_CASE("a score out of range after normalizing is an error, not a verdict") {
  Registry r;
  REQUIRE(r.Register("Raw", [](const YAML::Node&) { return Result<PluginInstance>(MakePluginInstance(Raw{})); }).ok());
  ProfileConfig config;
  config.score = {{"Raw", 1}};
  auto profile = Profile::Build(r, config);
  REQUIRE(profile.ok());
  Snapshot snap;
  REQUIRE(snap.UpsertNode(testing::MakeNode().Name("a").Info()).ok());
  REQUIRE(snap.UpsertNode(testing::MakeNode().Name("b").Info()).ok());
  auto d = Schedule(*profile, testing::MakePod().Info(), snap);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == Code::kInternal);
  CHECK_THAT(d.status().message(), Catch::Contains("plugin \"Raw\" returned an invalid score 101"));
}

}  // namespace
}  // namespace podflow::scheduler
