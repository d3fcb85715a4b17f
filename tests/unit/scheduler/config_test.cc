// The scheduler section in KubeSchedulerConfiguration's shape: profiles,
// per-point enable/disable, multiPoint, weights, pluginConfig args.
#include <catch2/catch.hpp>

#include "builders.h"

namespace podflow::scheduler {
namespace {

// Filters and scores; remembers its args (a "bias" added to every score).
struct Probe {
  static constexpr std::string_view kName = "Probe";
  int64_t bias = 0;
  static Result<Probe> FromArgs(const YAML::Node& args) {
    Probe p;
    if (!args || args.IsNull()) return p;
    if (!args.IsMap() || !args["bias"]) return Status::Invalid("bias: required");
    p.bias = args["bias"].as<int64_t>();
    if (p.bias < 0 || p.bias > 100) return Status::Invalid("bias: must be in 0..100");
    return p;
  }
  PluginStatus Filter(const CycleState&, const PodInfo&, const NodeInfo&) const { return {}; }
  int64_t Score(const CycleState&, const PodInfo&, const NodeInfo&) const { return bias; }
};
static_assert(FilterPlugin<Probe> && ScorePlugin<Probe>);

Registry TestRegistry() {
  Registry r = plugins::NewInTreeRegistry().value();
  REQUIRE(r.Register<Probe>().ok());
  return r;
}

Result<SchedulerConfig> Parse(const std::string& yaml) {
  static const Registry registry = TestRegistry();
  return ParseSchedulerConfig(YAML::Load(yaml), registry);
}

std::vector<std::string> ScoreNames(const ProfileConfig& p) {
  std::vector<std::string> out;
  for (const auto& s : p.score) out.push_back(s.name + "=" + std::to_string(s.weight.value_or(-1)));
  return out;
}

TEST_CASE("scheduler config: no section is the default profile") {
  auto c = Parse("~");
  REQUIRE(c.ok());
  REQUIRE(c->profiles.size() == 1);
  const ProfileConfig want = DefaultProfileConfig();
  CHECK(c->profiles[0].scheduler_name == "default-scheduler");
  CHECK(c->profiles[0].filter == want.filter);
  CHECK(ScoreNames(c->profiles[0]) == ScoreNames(want));
}

TEST_CASE("scheduler config: top-level seed and percentage reach every profile") {
  auto c = Parse(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
seed: 7
percentageOfNodesToScore: 40
profiles:
  - schedulerName: default-scheduler
  - schedulerName: fast
    percentageOfNodesToScore: 10
)");
  REQUIRE(c.ok());
  REQUIRE(c->profiles.size() == 2);
  CHECK(c->profiles[0].seed == 7);
  CHECK(c->profiles[0].percentage_of_nodes_to_score == 40);
  CHECK(c->profiles[1].seed == 7);
  CHECK(c->profiles[1].percentage_of_nodes_to_score == 10);
}

TEST_CASE("scheduler config: the documentation's no-scoring profile") {
  auto c = Parse(R"(
profiles:
  - schedulerName: default-scheduler
  - schedulerName: no-scoring-scheduler
    plugins:
      preScore:
        disabled:
        - name: '*'
      score:
        disabled:
        - name: '*'
)");
  REQUIRE(c.ok());
  REQUIRE(c->profiles.size() == 2);
  CHECK_FALSE(c->profiles[0].score.empty());
  CHECK(c->profiles[1].score.empty());
  REQUIRE(c->profiles[1].pre_score.has_value());
  CHECK(c->profiles[1].pre_score->empty());
  CHECK(c->profiles[1].filter == DefaultProfileConfig().filter);

  const Registry registry = TestRegistry();
  auto profiles = BuildProfiles(registry, *c);
  REQUIRE(profiles.ok());
  PodInfo pod;
  pod.scheduler_name = "no-scoring-scheduler";
  REQUIRE(ProfileFor(*profiles, pod) == &(*profiles)[1]);
  CHECK(ProfileFor(*profiles, pod)->score_plugins().empty());
  pod.scheduler_name = "";
  CHECK(ProfileFor(*profiles, pod) == &(*profiles)[0]);
  pod.scheduler_name = "someone-else";
  CHECK(ProfileFor(*profiles, pod) == nullptr);
}

TEST_CASE("scheduler config: an enabled default keeps its place and takes the new weight") {
  const ProfileConfig def = DefaultProfileConfig();
  REQUIRE(def.score.size() >= 2);
  const std::string first = def.score[0].name;
  auto c = Parse("profiles:\n  - plugins:\n      score:\n        enabled:\n          - {name: " + first +
                 ", weight: 9}\n          - {name: Probe, weight: 4}\n");
  REQUIRE(c.ok());
  const auto& score = c->profiles[0].score;
  REQUIRE(score.size() == def.score.size() + 1);
  CHECK(score[0].name == first);
  CHECK(score[0].weight == 9);
  CHECK(score.back().name == "Probe");
  CHECK(score.back().weight == 4);
}

TEST_CASE("scheduler config: disabling one filter drops only it") {
  auto c = Parse("profiles:\n  - plugins:\n      filter:\n        disabled: [{name: NodePorts}]\n");
  REQUIRE(c.ok());
  std::vector<std::string> want = DefaultProfileConfig().filter;
  want.erase(std::find(want.begin(), want.end(), "NodePorts"));
  CHECK(c->profiles[0].filter == want);
}

TEST_CASE("scheduler config: multiPoint enables a plugin at every point it implements") {
  auto c = Parse("profiles:\n  - plugins:\n      multiPoint:\n        enabled: [{name: Probe, weight: 3}]\n");
  REQUIRE(c.ok());
  const ProfileConfig& p = c->profiles[0];
  CHECK(p.filter.back() == "Probe");
  REQUIRE_FALSE(p.score.empty());
  CHECK(p.score.back().name == "Probe");
  CHECK(p.score.back().weight == 3);
  CHECK(std::find(p.post_filter.begin(), p.post_filter.end(), "Probe") == p.post_filter.end());

  auto off = Parse("profiles:\n  - plugins:\n      multiPoint:\n        disabled: [{name: '*'}]\n");
  REQUIRE(off.ok());
  CHECK(off->profiles[0].filter.empty());
  CHECK(off->profiles[0].score.empty());
}

TEST_CASE("scheduler config: pluginConfig args reach the plugin") {
  auto c = Parse(R"(
profiles:
  - plugins:
      score:
        disabled: [{name: '*'}]
        enabled: [{name: Probe, weight: 1}]
    pluginConfig:
      - name: Probe
        args: {bias: 42}
)");
  REQUIRE(c.ok());
  const Registry registry = TestRegistry();
  auto profiles = BuildProfiles(registry, *c);
  REQUIRE(profiles.ok());
  const Profile& p = (*profiles)[0];
  REQUIRE(p.score_plugins().size() == 1);
  const PluginInstance& probe = *p.score_plugins()[0].plugin;
  CHECK(probe.score(probe.self.get(), CycleState(), PodInfo(), NodeInfo()) == 42);

  auto bad = Parse("profiles:\n  - plugins:\n      score:\n        enabled: [{name: Probe, weight: 1}]\n"
                   "    pluginConfig:\n      - {name: Probe, args: {bias: 500}}\n");
  REQUIRE(bad.ok());
  auto built = BuildProfiles(registry, *bad);
  REQUIRE_FALSE(built.ok());
  CHECK_THAT(built.status().message(), Catch::Contains("\"Probe\"") && Catch::Contains("bias: must be in 0..100"));
}

TEST_CASE("scheduler config: bad input names the field") {
  struct Case {
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"frobnicate: 1", "scheduler.frobnicate: unknown field"},
      {"percentageOfNodesToScore: 101", "scheduler.percentageOfNodesToScore: must be in 0..100, got 101"},
      {"seed: -1", "scheduler.seed: expected a non-negative integer"},
      {"kind: Pod", "scheduler.kind: expected KubeSchedulerConfiguration"},
      {"profiles: []", "scheduler.profiles: expected a non-empty list"},
      {"profiles:\n  - schedulerName: a\n  - schedulerName: a\n",
       "scheduler.profiles[1].schedulerName: duplicate profile with scheduler name \"a\""},
      {"profiles:\n  - plugins:\n      score:\n        enabled: [{name: NoSuchPlugin, weight: 1}]\n",
       "scheduler.profiles[0].plugins.score.enabled[0].name: unknown plugin \"NoSuchPlugin\""},
      {"profiles:\n  - plugins:\n      score:\n        enabled: [{name: Probe}]\n",
       "scheduler.profiles[0].plugins.score: plugin \"Probe\" has no weight"},
      {"profiles:\n  - plugins:\n      score:\n        enabled: [{name: Probe, weight: 0}]\n",
       "scheduler.profiles[0].plugins.score.enabled[0].weight: must be positive, got 0"},
      {"profiles:\n  - plugins:\n      queueSort:\n        enabled: [{name: PrioritySort}]\n",
       "scheduler.profiles[0].plugins.queueSort: not configurable"},
      {"profiles:\n  - plugins:\n      scores: {}\n", "scheduler.profiles[0].plugins.scores: unknown extension point"},
      {"profiles:\n  - plugins:\n      filter:\n        enabled: [{name: '*'}]\n",
       "scheduler.profiles[0].plugins.filter.enabled[0].name: \"*\" may only be disabled"},
      {"profiles:\n  - pluginConfig:\n      - {name: Nope, args: {}}\n",
       "scheduler.profiles[0].pluginConfig[0].name: unknown plugin \"Nope\""},
      {"profiles:\n  - schedulerName: ''\n", "scheduler.profiles[0].schedulerName: must not be empty"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    auto parsed = Parse(c.yaml);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == Code::kInvalid);
    CHECK_THAT(parsed.status().message(), Catch::Contains(c.error));
  }
}

}  // namespace
}  // namespace podflow::scheduler
