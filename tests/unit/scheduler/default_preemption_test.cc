// DefaultPreemption: eligibility, victim selection, node choice and its
// messages, from kube-scheduler's documented rules (Pod Priority and
// Preemption; the DefaultPreemption plugin's candidate and node rules).
#include <climits>

#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/default_preemption/default_preemption.h"

namespace podflow::scheduler {
namespace {

using plugins::DefaultPreemption;
using testing::MakeNode;
using testing::MakePod;

const Registry& InTree() {
  static auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  return *registry;
}

const Profile& WithPreemption() {
  static auto profile = Profile::Build(InTree(), DefaultProfileConfig());
  REQUIRE(profile.ok());
  return *profile;
}

const Profile& WithoutPreemption() {
  static auto profile = [] {
    ProfileConfig config = DefaultProfileConfig();
    config.post_filter.clear();
    return Profile::Build(InTree(), config);
  }();
  REQUIRE(profile.ok());
  return *profile;
}

void Bind(Snapshot& snap, PodInfo pod, const std::string& node) {
  pod.node_name = node;
  REQUIRE(snap.AddPod(std::move(pod)).ok());
}

Snapshot Nodes(std::vector<std::string> names, const std::string& cpu = "4") {
  Snapshot snap;
  for (const auto& name : names) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu(cpu).Memory("8Gi").Info()).ok());
  }
  return snap;
}

// The default profile's filters, as the runner hands them to PostFilter.
RunFilters DefaultFilters() {
  return RunFilters{[](const CycleState& state, const PodInfo& pod, const NodeInfo& node) {
    for (const PluginInstance* p : WithPreemption().filter_plugins()) {
      PluginStatus s = p->filter(p->self.get(), state, pod, node);
      if (!s.IsSuccess()) return s;
    }
    return PluginStatus::Success();
  }};
}

std::vector<std::string> Uids(const std::vector<const PodInfo*>& pods) {
  std::vector<std::string> out;
  for (const PodInfo* p : pods) out.push_back(p->uid);
  return out;
}

PodInfo Low(const std::string& name, int32_t priority, const std::string& cpu,
            const std::string& start = "") {
  auto b = MakePod().Name(name).Priority(priority).Cpu(cpu);
  if (!start.empty()) b.StartTime(start);
  return b.Info();
}

// --- Victims on one node --------------------------------------------------

struct VictimCase {
  const char* name;
  std::vector<PodInfo> on_node;  // on a 4-cpu node
  PodInfo preemptor;
  PluginCode code;
  std::vector<std::string> reasons;  // when not Success
  std::vector<std::string> victims;  // uids, most important first
};

TEST_CASE("DefaultPreemption: victims on a node", "[preemption]") {
  const std::vector<VictimCase> cases = {
      {"lower-priority pods go, the most important are reprieved first",
       {Low("p1", 1, "1"), Low("p2", 2, "1"), Low("p3", 3, "1"), Low("p4", 10, "1")},
       MakePod().Name("pre").Priority(5).Cpu("2").Info(),
       PluginCode::kSuccess,
       {},
       // p4 outranks the preemptor; p3 is reprieved (2 cpu free); p2 and p1 go.
       {"uid-p2", "uid-p1"}},
      {"equal priority: the earlier started pod is reprieved",
       {Low("late", 1, "2", "2026-01-01T11:00:00Z"), Low("early", 1, "2", "2026-01-01T10:00:00Z")},
       MakePod().Name("pre").Priority(5).Cpu("2").Info(),
       PluginCode::kSuccess,
       {},
       {"uid-late"}},
      {"a pod not started yet counts as started last",
       {Low("unstarted", 1, "2"), Low("started", 1, "2", "2026-01-01T10:00:00Z")},
       MakePod().Name("pre").Priority(5).Cpu("2").Info(),
       PluginCode::kSuccess,
       {},
       {"uid-unstarted"}},
      {"a lower-priority pod that fits beside the preemptor is not a victim",
       {Low("small", 1, "1"), Low("big", 2, "3")},
       MakePod().Name("pre").Priority(5).Cpu("3").Info(),
       PluginCode::kSuccess,
       {},
       // big (more important) is tried first and does not fit back; small does.
       {"uid-big"}},
      {"no lower-priority pod",
       {Low("same", 5, "4")},
       MakePod().Name("pre").Priority(5).Cpu("1").Info(),
       PluginCode::kUnschedulableAndUnresolvable,
       {"No preemption victims found for incoming pod"},
       {}},
      {"does not fit even with every lower-priority pod gone",
       {Low("p1", 1, "1"), Low("high", 9, "2")},
       MakePod().Name("pre").Priority(5).Cpu("3").Info(),
       PluginCode::kUnschedulable,
       {"Insufficient cpu"},
       {}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Snapshot snap = Nodes({"n"});
      for (const PodInfo& p : c.on_node) Bind(snap, p, "n");
      const NodeInfo& node = *snap.FindNode("n");
      std::vector<const PodInfo*> victims;
      // The state as the cycle leaves it: the profile's PreFilter ran.
      CycleState state;
      for (const PluginInstance* p : WithPreemption().pre_filter_plugins()) {
        PluginStatus pre = p->pre_filter(p->self.get(), state, c.preemptor, snap).status;
        REQUIRE((pre.IsSuccess() || pre.code() == PluginCode::kSkip));
      }
      PluginStatus s = DefaultPreemption::SelectVictims(state, DefaultFilters(), c.preemptor, node, victims);
      INFO(s.ToString());
      CHECK(s.code() == c.code);
      if (c.code == PluginCode::kSuccess) {
        CHECK(Uids(victims) == c.victims);
      } else {
        CHECK(s.reasons() == c.reasons);
        CHECK(victims.empty());
      }
    }
  }
}

TEST_CASE("DefaultPreemption: MoreImportant orders by priority, then start", "[preemption]") {
  PodInfo high = Low("h", 5, "1", "2026-01-01T12:00:00Z");
  PodInfo early = Low("e", 1, "1", "2026-01-01T10:00:00Z");
  PodInfo late = Low("l", 1, "1", "2026-01-01T11:00:00Z");
  PodInfo unstarted = Low("u", 1, "1");
  CHECK(DefaultPreemption::MoreImportant(high, early));
  CHECK_FALSE(DefaultPreemption::MoreImportant(early, high));
  CHECK(DefaultPreemption::MoreImportant(early, late));
  CHECK(DefaultPreemption::MoreImportant(late, unstarted));
  CHECK_FALSE(DefaultPreemption::MoreImportant(unstarted, unstarted));
}

// --- Choosing the node ----------------------------------------------------

struct V {
  int32_t priority;
  std::string start;  // "" = not started
};

struct PickCase {
  const char* name;
  std::vector<std::vector<V>> nodes;  // victims per candidate, most important first
  size_t want;
};

TEST_CASE("DefaultPreemption: picking the node", "[preemption]") {
  const std::string t9 = "2026-01-01T09:00:00Z", t10 = "2026-01-01T10:00:00Z",
                    t11 = "2026-01-01T11:00:00Z", t12 = "2026-01-01T12:00:00Z";
  const std::vector<PickCase> cases = {
      {"the lowest highest-victim priority", {{{10, t10}}, {{5, t10}, {5, t10}, {5, t10}}}, 1},
      {"then the smallest sum of priorities", {{{5, t10}, {3, t10}}, {{5, t10}, {1, t10}}}, 1},
      // Shifted by 2^31 each, {5, -10} sums higher than {5}: more victims of
      // a negative priority do not look cheaper (an unshifted sum would pick 0).
      {"sums count negative priorities shifted", {{{5, t10}, {-10, t10}}, {{5, t10}}}, 1},
      // {0} and {0, INT32_MIN} have equal shifted sums (2^31): fewest victims decides.
      {"then the fewest victims", {{{0, t10}, {INT32_MIN, t10}}, {{0, t10}}}, 1},
      {"then the latest start of the highest-priority victims", {{{5, t10}}, {{5, t11}}}, 1},
      {"the earliest start among a node's highest-priority victims counts",
       {{{5, t9}, {5, t12}}, {{5, t10}, {5, t11}}},
       1},
      {"lower-priority victims' starts do not count",
       {{{5, t11}, {4, t9}}, {{5, t10}, {4, t12}}},
       0},
      {"a victim not started yet counts as started last", {{{5, ""}}, {{5, t12}}}, 0},
      {"then the first", {{{5, t10}, {1, t10}}, {{5, t10}, {1, t10}}, {{5, t10}, {1, t10}}}, 0},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<std::vector<PodInfo>> pods(c.nodes.size());
      std::vector<DefaultPreemption::Candidate> candidates;
      for (size_t i = 0; i < c.nodes.size(); ++i) {
        for (size_t j = 0; j < c.nodes[i].size(); ++j) {
          pods[i].push_back(Low("v" + std::to_string(i) + std::to_string(j), c.nodes[i][j].priority, "1",
                                c.nodes[i][j].start));
        }
      }
      for (size_t i = 0; i < c.nodes.size(); ++i) {
        DefaultPreemption::Candidate cand{"n" + std::to_string(i), {}};
        for (const PodInfo& p : pods[i]) cand.victims.push_back(&p);
        candidates.push_back(std::move(cand));
      }
      CHECK(DefaultPreemption::PickNode(candidates) == c.want);
    }
  }
}

TEST_CASE("DefaultPreemption: how many candidates are dry-run", "[preemption]") {
  DefaultPreemption p;
  CHECK(p.NumCandidates(0) == 0);
  CHECK(p.NumCandidates(50) == 50);      // fewer than 100: all
  CHECK(p.NumCandidates(1000) == 100);   // 10% = 100
  CHECK(p.NumCandidates(5000) == 500);   // 10%
  auto custom = DefaultPreemption::FromArgs(
      YAML::Load("{minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 3}"));
  REQUIRE(custom.ok());
  CHECK(custom->NumCandidates(4) == 3);
  CHECK(custom->NumCandidates(10) == 5);
}

TEST_CASE("DefaultPreemption: args are checked", "[preemption]") {
  auto bad = [](const char* yaml) {
    auto r = DefaultPreemption::FromArgs(YAML::Load(yaml));
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  CHECK_THAT(bad("{minCandidateNodesPercentage: 101}"),
             Catch::Contains("minCandidateNodesPercentage: not in valid range [0, 100]"));
  CHECK_THAT(bad("{minCandidateNodesAbsolute: -1}"), Catch::Contains("minCandidateNodesAbsolute"));
  CHECK_THAT(bad("{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}"),
             Catch::Contains("cannot both be zero"));
  CHECK_THAT(bad("{minCandidates: 1}"), Catch::Contains("args.minCandidates: unknown field"));
  CHECK(DefaultPreemption::FromArgs(YAML::Node()).ok());
}

// --- Whole cycles with the default profile --------------------------------

TEST_CASE("DefaultPreemption: a high-priority pod is nominated where the victims matter least",
          "[preemption]") {
  Snapshot snap = Nodes({"a", "b", "c"});
  Bind(snap, Low("low-a", 1, "3"), "a");
  Bind(snap, Low("low-b", 2, "3"), "b");
  Bind(snap, Low("high-c", 100, "3"), "c");
  auto d = Schedule(WithPreemption(), MakePod().Name("pre").Priority(50).Cpu("2").Info(), snap);
  REQUIRE(d.ok());
  INFO(d->Explain());
  CHECK_FALSE(d->scheduled());
  CHECK(d->nominated_node == "a");
  CHECK(d->victims == std::vector<std::string>{"uid-low-a"});
  CHECK_FALSE(d->clear_nomination);
  // A nominated pod's event has no preemption part, as kube-scheduler's.
  CHECK(d->message == "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST_CASE("DefaultPreemption: preemptionPolicy Never is not eligible", "[preemption]") {
  Snapshot snap = Nodes({"a"});
  Bind(snap, Low("low", 1, "4"), "a");
  auto d = Schedule(WithPreemption(), MakePod().Name("pre").Priority(50).Cpu("1").PreemptNever().Info(),
                    snap);
  REQUIRE(d.ok());
  CHECK(d->nominated_node.empty());
  CHECK(d->victims.empty());
  CHECK_FALSE(d->clear_nomination);  // not eligible: an earlier nomination stays, as in kube-scheduler
  CHECK(d->message ==
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never..");
}

TEST_CASE("DefaultPreemption: when preemption cannot help", "[preemption]") {
  SECTION("kube-scheduler's example: one unresolvable node, two without victims") {
    Snapshot snap = Nodes({"a", "b"});
    REQUIRE(snap.UpsertNode(MakeNode().Name("cordoned").Cpu("4").Memory("8Gi").Unschedulable().Info()).ok());
    Bind(snap, Low("same-a", 50, "4"), "a");
    Bind(snap, Low("same-b", 60, "4"), "b");
    auto d = Schedule(WithPreemption(), MakePod().Name("pre").Priority(50).Cpu("1").Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->nominated_node.empty());
    CHECK(d->clear_nomination);  // no node can be made to fit: a nomination ends
    CHECK(d->message ==
          "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. "
          "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
          "2 No preemption victims found for incoming pod..");
  }
  SECTION("a node where even evicting every lower-priority pod is not enough") {
    Snapshot snap = Nodes({"a"});
    Bind(snap, Low("low", 1, "1"), "a");
    Bind(snap, Low("high", 90, "2"), "a");
    auto d = Schedule(WithPreemption(), MakePod().Name("pre").Priority(50).Cpu("3").Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->nominated_node.empty());
    CHECK(d->message ==
          "0/1 nodes are available: 1 Insufficient cpu. "
          "preemption: 0/1 nodes are available: 1 Insufficient cpu..");
  }
  SECTION("a profile without PostFilter says nothing about preemption") {
    Snapshot snap = Nodes({"a"});
    Bind(snap, Low("low", 1, "4"), "a");
    auto d = Schedule(WithoutPreemption(), MakePod().Name("pre").Priority(50).Cpu("1").Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->nominated_node.empty());
    CHECK(d->message == "0/1 nodes are available: 1 Insufficient cpu.");
  }
}

TEST_CASE("DefaultPreemption: nominated pods keep their room", "[preemption]") {
  Snapshot snap = Nodes({"a"});
  Bind(snap, Low("used", 1, "2"), "a");
  PodInfo nominated = MakePod().Name("nom").Priority(50).Cpu("2").NominatedNode("a").Info();
  snap.AddNominatedPod(nominated);
  REQUIRE(snap.NominatedPods("a").size() == 1);

  SECTION("a lower- or equal-priority pod cannot take it") {
    for (int32_t priority : {10, 50}) {
      auto d = Schedule(WithoutPreemption(), MakePod().Name("other").Priority(priority).Cpu("1").Info(), snap);
      REQUIRE(d.ok());
      CHECK_FALSE(d->scheduled());
      CHECK(d->message == "0/1 nodes are available: 1 Insufficient cpu.");
    }
  }
  SECTION("a higher-priority pod can") {
    auto d = Schedule(WithoutPreemption(), MakePod().Name("other").Priority(60).Cpu("1").Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->node == "a");
  }
  SECTION("the nominated pod itself schedules on its node, unscored") {
    REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("8").Memory("8Gi").Info()).ok());
    auto d = Schedule(WithPreemption(), nominated, snap);
    REQUIRE(d.ok());
    CHECK(d->node == "a");  // b is emptier, but the nominated node comes first
    CHECK(d->scores.empty());
  }
  SECTION("binding the nominated pod ends its nomination") {
    Bind(snap, nominated, "a");
    CHECK(snap.NominatedPods("a").empty());
  }
  SECTION("a second preemptor does not count the first one's victims twice") {
    // The room on a is held for "nom"; a pod of lower priority than "nom"
    // finds nothing to preempt there that would help.
    auto d = Schedule(WithPreemption(), MakePod().Name("second").Priority(40).Cpu("3").Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->nominated_node.empty());
    CHECK(d->message ==
          "0/1 nodes are available: 1 Insufficient cpu. "
          "preemption: 0/1 nodes are available: 1 Insufficient cpu..");
  }
}

TEST_CASE("PodInfo: start time and nominated node from status", "[preemption]") {
  PodInfo p = MakePod().StartTime("2026-01-01T10:00:00Z").NominatedNode("a").Info();
  CHECK(p.start_time == "2026-01-01T10:00:00Z");
  CHECK(p.nominated_node_name == "a");
}

}  // namespace
}  // namespace podflow::scheduler
