// PodTopologySpread: filter verdicts from the Kubernetes docs' examples,
// minDomains, node inclusion policies, exact scores, default spreading by
// Services, args; and a whole-profile cycle.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"

namespace podflow::scheduler {
namespace {

using plugins::PodTopologySpread;
using testing::MakeNode;
using testing::MakePod;
using Action = api::UnsatisfiableConstraintAction;
using Policy = api::NodeInclusionPolicy;

constexpr Action kHard = Action::DoNotSchedule;
constexpr Action kSoft = Action::ScheduleAnyway;

// One spec.topologySpreadConstraints entry.
struct Spread {
  int32_t max_skew = 1;
  std::string key = "zone";
  Action when = kHard;
  // matchLabels of the labelSelector; nullopt: no labelSelector at all.
  std::optional<std::vector<std::pair<std::string, std::string>>> match_labels =
      std::vector<std::pair<std::string, std::string>>{{"foo", "bar"}};
  std::optional<int32_t> min_domains;
  Policy affinity = Policy::Unset;
  Policy taints = Policy::Unset;
  std::vector<std::string> match_label_keys;

  std::unique_ptr<api::TopologySpreadConstraintT> Obj() const {
    auto c = std::make_unique<api::TopologySpreadConstraintT>();
    c->max_skew = max_skew;
    c->topology_key = key;
    c->when_unsatisfiable = when;
    if (match_labels) {
      c->label_selector = std::make_unique<api::LabelSelectorT>();
      for (const auto& [k, v] : *match_labels) testing::PutString(c->label_selector->match_labels, k, v);
    }
    c->min_domains = min_domains;
    c->node_affinity_policy = affinity;
    c->node_taints_policy = taints;
    c->match_label_keys = match_label_keys;
    return c;
  }
};

testing::PodBuilder FooBar(const std::string& name) { return MakePod().Name(name).Label("foo", "bar"); }

void Bind(Snapshot& snap, PodInfo pod, const std::string& node) {
  pod.node_name = node;
  REQUIRE(snap.AddPod(std::move(pod)).ok());
}

// node name -> (zone, matching pods on it); a zone "" means no zone label.
Snapshot Cluster(const std::vector<std::tuple<std::string, std::string, int>>& nodes) {
  Snapshot snap;
  for (const auto& [name, zone, pods] : nodes) {
    auto b = MakeNode().Name(name).Label("node", name).Label("kubernetes.io/hostname", name);
    if (!zone.empty()) b.Label("zone", zone);
    REQUIRE(snap.UpsertNode(b.Info()).ok());
    for (int i = 0; i < pods; ++i) Bind(snap, FooBar(name + "-p" + std::to_string(i)).Info(), name);
  }
  return snap;
}

// PreFilter, then Filter on every node: node -> verdict.
std::map<std::string, PluginStatus> FilterAll(const PodTopologySpread& p, const PodInfo& pod,
                                              const Snapshot& snap) {
  CycleState state;
  PreFilterResult pre = p.PreFilter(state, pod, snap);
  const bool skip = pre.status.code() == PluginCode::kSkip;
  REQUIRE((pre.status.IsSuccess() || skip));
  REQUIRE_FALSE(pre.node_names.has_value());
  std::map<std::string, PluginStatus> out;
  for (const NodeInfo& node : snap.nodes()) {
    out[node.name] = p.Filter(state, pod, node);
    // Skip promises that Filter passes every node.
    if (skip) CHECK(out[node.name].IsSuccess());
  }
  return out;
}

std::vector<std::string> Passing(const std::map<std::string, PluginStatus>& verdicts) {
  std::vector<std::string> out;
  for (const auto& [node, s] : verdicts) {
    if (s.IsSuccess()) out.push_back(node);
  }
  return out;
}

using Names = std::vector<std::string>;

// The docs' 4-node cluster: node1, node2 in zoneA, node3, node4 in zoneB,
// one foo=bar pod on each of node1..node3.
Snapshot DocsCluster() {
  return Cluster({{"node1", "zoneA", 1}, {"node2", "zoneA", 1}, {"node3", "zoneB", 1}, {"node4", "zoneB", 0}});
}

TEST_CASE("PodTopologySpread filter: the docs' examples", "[pod_topology_spread]") {
  PodTopologySpread p;
  struct Case {
    const char* name;
    Snapshot snap;
    std::vector<Spread> spreads;
    bool pod_matches = true;
    Names passing;
  };
  Spread node_key;
  node_key.key = "node";
  Spread skew2;
  skew2.max_skew = 2;
  Spread soft;
  soft.when = kSoft;
  std::vector<Case> cases;
  cases.push_back({"one constraint: only zoneB keeps skew <= 1", DocsCluster(), {Spread{}}, true, {"node3", "node4"}});
  cases.push_back({"maxSkew 2 admits zoneA too", DocsCluster(), {skew2}, true, {"node1", "node2", "node3", "node4"}});
  cases.push_back({"topologyKey node: only node4", DocsCluster(), {node_key}, true, {"node4"}});
  cases.push_back({"two constraints: only node4", DocsCluster(), {Spread{}, node_key}, true, {"node4"}});
  cases.push_back({"ScheduleAnyway does not filter", DocsCluster(), {soft}, true,
                   {"node1", "node2", "node3", "node4"}});
  cases.push_back({"a pod its selector does not match adds no skew", DocsCluster(), {Spread{}}, false,
                   {"node1", "node2", "node3", "node4"}});
  cases.push_back({"conflicting constraints: no node",
                   Cluster({{"node1", "zoneA", 2}, {"node2", "zoneA", 1}, {"node3", "zoneB", 2}}),
                   {Spread{}, node_key}, true, {}});
  cases.push_back({"node1 without a zone label: its pods do not count, zone A takes the pod",
                   Cluster({{"node1", "", 2}, {"node2", "zoneA", 1}, {"node3", "zoneB", 2}}),
                   {Spread{}, node_key}, true, {"node2"}});
  for (auto& c : cases) {
    SECTION(c.name) {
      auto b = MakePod().Name("mypod");
      if (c.pod_matches) b.Label("foo", "bar");
      for (const Spread& s : c.spreads) b.SpreadConstraint(s.Obj());
      auto verdicts = FilterAll(p, b.Info(), c.snap);
      CHECK(Passing(verdicts) == c.passing);
      for (const auto& [node, s] : verdicts) {
        if (s.IsSuccess()) continue;
        if (node == "node1" && c.snap.FindNode("node1")->labels.size() == 2) {
          CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
          CHECK(s.reasons() == Names{std::string(PodTopologySpread::kErrReasonNodeLabelNotMatch)});
        } else {
          CHECK(s.code() == PluginCode::kUnschedulable);
          CHECK(s.reasons() == Names{"node(s) didn't match pod topology spread constraints"});
        }
      }
    }
  }
}

TEST_CASE("PodTopologySpread filter: a node holding other pods than the snapshot's (preemption, nominated pods)",
          "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap = DocsCluster();  // zoneA 2, zoneB 1
  PodInfo pod = FooBar("mypod").SpreadConstraint(Spread{}.Obj()).Info();
  CycleState state;
  REQUIRE(p.PreFilter(state, pod, snap).status.IsSuccess());
  CHECK_FALSE(p.Filter(state, pod, *snap.FindNode("node1")).IsSuccess());
  // node1 with its pod evicted: zoneA 1, skew 1.
  NodeInfo without = *snap.FindNode("node1");
  REQUIRE(without.RemovePod("uid-node1-p0").ok());
  CHECK(p.Filter(state, pod, without).IsSuccess());
  // node4 with one more matching pod: zoneB 2 and the minimum becomes zoneA's 2.
  NodeInfo plus_one = *snap.FindNode("node4");
  plus_one.AddPod(std::make_shared<const PodInfo>(FooBar("nominated1").Node("node4").Info()));
  CHECK(p.Filter(state, pod, plus_one).IsSuccess());
  // Two more: zoneB 3, skew 3 + 1 - 2.
  NodeInfo plus_two = plus_one;
  plus_two.AddPod(std::make_shared<const PodInfo>(FooBar("nominated2").Node("node4").Info()));
  CHECK(p.Filter(state, pod, plus_two).code() == PluginCode::kUnschedulable);
  // A pod of another namespace changes nothing.
  NodeInfo other = *snap.FindNode("node1");
  REQUIRE(other.RemovePod("uid-node1-p0").ok());
  other.AddPod(std::make_shared<const PodInfo>(FooBar("x").Namespace("other").Node("node1").Info()));
  CHECK(p.Filter(state, pod, other).IsSuccess());
}

TEST_CASE("PodTopologySpread filter: missing label is unresolvable", "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap = Cluster({{"node1", "zoneA", 0}, {"node2", "", 0}});
  auto verdicts = FilterAll(p, FooBar("mypod").SpreadConstraint(Spread{}.Obj()).Info(), snap);
  CHECK(verdicts["node1"].IsSuccess());
  CHECK(verdicts["node2"].code() == PluginCode::kUnschedulableAndUnresolvable);
  CHECK(verdicts["node2"].reasons() ==
        Names{"node(s) didn't match pod topology spread constraints (missing required label)"});
}

TEST_CASE("PodTopologySpread filter: node affinity example and nodeAffinityPolicy",
          "[pod_topology_spread]") {
  PodTopologySpread p;
  // zoneA: node1, node2 (a pod each); zoneB: node3 (a pod), node4; zoneC: node5.
  Snapshot snap = Cluster({{"node1", "zoneA", 1},
                           {"node2", "zoneA", 1},
                           {"node3", "zoneB", 1},
                           {"node4", "zoneB", 0},
                           {"node5", "zoneC", 0}});
  auto pod = [](Policy policy) {
    Spread s;
    s.affinity = policy;
    return FooBar("mypod")
        .AffinityTerm({{"zone", api::NodeSelectorOperator::NotIn, {"zoneC"}}})
        .SpreadConstraint(s.Obj())
        .Info();
  };
  // Honor (the default): zoneC is not a domain, the minimum is zoneB's 1.
  // (NodeAffinity, not this plugin, keeps the pod off node5.)
  CHECK(Passing(FilterAll(p, pod(Policy::Unset), snap)) == Names{"node3", "node4", "node5"});
  CHECK(Passing(FilterAll(p, pod(Policy::Honor), snap)) == Names{"node3", "node4", "node5"});
  // Ignore: empty zoneC makes the minimum 0.
  CHECK(Passing(FilterAll(p, pod(Policy::Ignore), snap)) == Names{"node5"});
  // nodeSelector counts as node affinity too.
  Spread s;
  auto by_selector = FooBar("mypod").NodeSelector("zone", "zoneA").SpreadConstraint(s.Obj()).Info();
  CHECK(Passing(FilterAll(p, by_selector, snap)) == Names{"node1", "node2", "node3", "node4", "node5"});
}

TEST_CASE("PodTopologySpread filter: minDomains", "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap = Cluster({{"node1", "zoneA", 1}, {"node2", "zoneB", 1}});
  struct Case {
    std::optional<int32_t> min_domains;
    Names passing;
  };
  for (const Case& c : std::vector<Case>{{std::nullopt, {"node1", "node2"}},
                                         {1, {"node1", "node2"}},
                                         {2, {"node1", "node2"}},
                                         // Fewer domains than minDomains: global minimum 0, skew 2.
                                         {3, {}}}) {
    Spread s;
    s.min_domains = c.min_domains;
    INFO("minDomains " << (c.min_domains ? std::to_string(*c.min_domains) : "unset"));
    CHECK(Passing(FilterAll(p, FooBar("mypod").SpreadConstraint(s.Obj()).Info(), snap)) == c.passing);
  }
  // maxSkew 2 absorbs the zero minimum.
  Spread s;
  s.min_domains = 3;
  s.max_skew = 2;
  CHECK(Passing(FilterAll(p, FooBar("mypod").SpreadConstraint(s.Obj()).Info(), snap)) ==
        Names{"node1", "node2"});
}

TEST_CASE("PodTopologySpread filter: nodeTaintsPolicy", "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("node1").Label("zone", "zoneA").Info()).ok());
  REQUIRE(snap.UpsertNode(
      MakeNode().Name("node2").Label("zone", "zoneB").Taint("dedicated", "gpu", api::TaintEffect::NoSchedule).Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode()
                              .Name("node3")
                              .Label("zone", "zoneC")
                              .Taint("soft", "x", api::TaintEffect::PreferNoSchedule)
                              .Info()).ok());
  Bind(snap, FooBar("a").Info(), "node1");
  Bind(snap, FooBar("c").Info(), "node3");
  auto pod = [](Policy taints, bool tolerate) {
    Spread s;
    s.taints = taints;
    auto b = FooBar("mypod").SpreadConstraint(s.Obj());
    if (tolerate) b.Toleration("dedicated", api::TolerationOperator::Equal, "gpu", api::TaintEffect::NoSchedule);
    return b.Info();
  };
  // Ignore (the default): empty zoneB sets the minimum to 0.
  CHECK(Passing(FilterAll(p, pod(Policy::Unset, false), snap)) == Names{"node2"});
  CHECK(Passing(FilterAll(p, pod(Policy::Ignore, false), snap)) == Names{"node2"});
  // Honor: the untolerated NoSchedule node is no domain; PreferNoSchedule does not exclude.
  CHECK(Passing(FilterAll(p, pod(Policy::Honor, false), snap)) == Names{"node1", "node2", "node3"});
  // Honor with a toleration: zoneB counts again.
  CHECK(Passing(FilterAll(p, pod(Policy::Honor, true), snap)) == Names{"node2"});
}

TEST_CASE("PodTopologySpread filter: only the pod's namespace, no pods being deleted",
          "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap = Cluster({{"node1", "zoneA", 0}, {"node2", "zoneB", 1}});
  Bind(snap, FooBar("other-ns").Namespace("other").Info(), "node1");
  Bind(snap, FooBar("leaving").Deleting().Info(), "node1");
  Bind(snap, MakePod().Name("unlabelled").Info(), "node1");
  // zoneA counts 0: node2 (count 1, skew 2) is the one rejected.
  CHECK(Passing(FilterAll(p, FooBar("mypod").SpreadConstraint(Spread{}.Obj()).Info(), snap)) ==
        Names{"node1"});
  // From namespace "other", zoneA has 1 and zoneB 0.
  CHECK(Passing(FilterAll(p, FooBar("mypod").Namespace("other").SpreadConstraint(Spread{}.Obj()).Info(),
                          snap)) == Names{"node2"});
}

TEST_CASE("PodTopologySpread filter: matchLabelKeys", "[pod_topology_spread]") {
  PodTopologySpread p;
  Snapshot snap = Cluster({{"node1", "zoneA", 0}, {"node2", "zoneA", 0}, {"node3", "zoneB", 0}, {"node4", "zoneB", 0}});
  Bind(snap, FooBar("old1").Label("rev", "1").Info(), "node1");
  Bind(snap, FooBar("old2").Label("rev", "1").Info(), "node2");
  Bind(snap, FooBar("new1").Label("rev", "2").Info(), "node3");
  Spread plain;
  Spread keyed;
  keyed.match_label_keys = {"rev", "absent-key"};
  auto pod = [](const Spread& s) { return FooBar("mypod").Label("rev", "2").SpreadConstraint(s.Obj()).Info(); };
  CHECK(Passing(FilterAll(p, pod(plain), snap)) == Names{"node3", "node4"});
  // Only rev=2 pods count: zoneA 0, zoneB 1.
  CHECK(Passing(FilterAll(p, pod(keyed), snap)) == Names{"node1", "node2"});
}

TEST_CASE("PodInfo keeps topology spread constraints with defaults", "[pod_topology_spread]") {
  Spread bare;
  bare.when = Action::Unset;
  bare.match_labels = std::nullopt;
  bare.match_label_keys = {"rev"};
  Spread full;
  full.max_skew = 4;
  full.when = kSoft;
  full.min_domains = 3;
  full.affinity = Policy::Ignore;
  full.taints = Policy::Honor;
  PodInfo pod = MakePod().Label("rev", "7").SpreadConstraint(bare.Obj()).SpreadConstraint(full.Obj()).Info();
  REQUIRE(pod.topology_spread_constraints.size() == 2);
  const TopologySpreadConstraint& a = pod.topology_spread_constraints[0];
  CHECK(a.when_unsatisfiable == kHard);
  CHECK(a.min_domains == 1);
  CHECK(a.node_affinity_policy == Policy::Honor);
  CHECK(a.node_taints_policy == Policy::Ignore);
  // No labelSelector, but matchLabelKeys: the pod's rev value alone.
  CHECK(a.selector.String() == "rev=7");
  const TopologySpreadConstraint& b = pod.topology_spread_constraints[1];
  CHECK(b.max_skew == 4);
  CHECK(b.topology_key == "zone");
  CHECK(b.when_unsatisfiable == kSoft);
  CHECK(b.min_domains == 3);
  CHECK(b.node_affinity_policy == Policy::Ignore);
  CHECK(b.node_taints_policy == Policy::Honor);
  CHECK(b.selector.String() == "foo=bar");
  CHECK_FALSE(pod.deleting);
  CHECK(MakePod().Deleting().Info().deleting);
  // Without matchLabelKeys a null selector matches nothing.
  Spread none;
  none.match_labels = std::nullopt;
  CHECK(MakePod().SpreadConstraint(none.Obj()).Info().topology_spread_constraints[0].selector.MatchesNothing());
}

// PreScore over `feasible` (all nodes when empty), Score, NormalizeScore:
// node -> (raw, normalized).
std::map<std::string, std::pair<int64_t, int64_t>> ScoreAll(const PodTopologySpread& p, const PodInfo& pod,
                                                            const Snapshot& snap) {
  std::vector<const NodeInfo*> feasible;
  for (const NodeInfo& n : snap.nodes()) feasible.push_back(&n);
  CycleState state;
  const PluginStatus pre = p.PreScore(state, pod, snap, feasible);
  const bool skip = pre.code() == PluginCode::kSkip;
  REQUIRE((pre.IsSuccess() || skip));
  std::vector<int64_t> scores;
  for (const NodeInfo* n : feasible) scores.push_back(p.Score(state, pod, *n));
  std::vector<int64_t> raw = scores;
  p.NormalizeScore(pod, scores);
  // Skip promises what the runner then gives: 0 on every node.
  if (skip) CHECK(std::all_of(scores.begin(), scores.end(), [](int64_t s) { return s == 0; }));
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < feasible.size(); ++i) out[feasible[i]->name] = {raw[i], scores[i]};
  return out;
}

using Scores = std::map<std::string, std::pair<int64_t, int64_t>>;

TEST_CASE("PodTopologySpread score: exact normalized scores", "[pod_topology_spread]") {
  PodTopologySpread p;
  // zone1: node-a (2 pods), node-b (1); zone2: node-x (1), node-y (0).
  Snapshot snap = Cluster({{"node-a", "zone1", 2}, {"node-b", "zone1", 1}, {"node-x", "zone2", 1}, {"node-y", "zone2", 0}});
  Spread zone;
  zone.when = kSoft;
  Spread host;
  host.when = kSoft;
  host.key = "kubernetes.io/hostname";

  SECTION("zone: count * ln(2 domains + 2), inverted") {
    // zone1: 3 * ln 4 = 4.16 -> 4; zone2: 1.39 -> 1; 100 * (4 + 1 - s) / 4.
    CHECK(ScoreAll(p, FooBar("mypod").SpreadConstraint(zone.Obj()).Info(), snap) ==
          Scores{{"node-a", {4, 25}}, {"node-b", {4, 25}}, {"node-x", {1, 100}}, {"node-y", {1, 100}}});
  }
  SECTION("zone and hostname: per-node counts weigh ln(4 nodes + 2)") {
    // a: 3 ln4 + 2 ln6 = 7.74 -> 8; b: 3 ln4 + ln6 = 5.95 -> 6; x: ln4 + ln6 = 3.18 -> 3; y: ln4 -> 1.
    CHECK(ScoreAll(p, FooBar("mypod").SpreadConstraint(zone.Obj()).SpreadConstraint(host.Obj()).Info(), snap) ==
          Scores{{"node-a", {8, 12}}, {"node-b", {6, 37}}, {"node-x", {3, 75}}, {"node-y", {1, 100}}});
  }
  SECTION("maxSkew - 1 is added per constraint") {
    Spread zone2 = zone;
    zone2.max_skew = 2;
    // Each raw score grows by 1: 9, 7, 4, 2; 100 * (11 - s) / 9.
    CHECK(ScoreAll(p, FooBar("mypod").SpreadConstraint(zone2.Obj()).SpreadConstraint(host.Obj()).Info(), snap) ==
          Scores{{"node-a", {9, 22}}, {"node-b", {7, 44}}, {"node-x", {4, 77}}, {"node-y", {2, 100}}});
  }
  SECTION("a feasible node without the zone label is not scored and not a domain") {
    REQUIRE(snap.UpsertNode(MakeNode().Name("node-z").Label("kubernetes.io/hostname", "node-z").Info()).ok());
    Bind(snap, FooBar("z1").Info(), "node-z");
    CHECK(ScoreAll(p, FooBar("mypod").SpreadConstraint(zone.Obj()).SpreadConstraint(host.Obj()).Info(), snap) ==
          Scores{{"node-a", {8, 12}},
                 {"node-b", {6, 37}},
                 {"node-x", {3, 75}},
                 {"node-y", {1, 100}},
                 {"node-z", {PodTopologySpread::kInvalidScore, 0}}});
  }
  SECTION("no matching pods anywhere: every node 100") {
    Spread other = zone;
    other.match_labels = std::vector<std::pair<std::string, std::string>>{{"app", "none"}};
    auto scores = ScoreAll(p, FooBar("mypod").SpreadConstraint(other.Obj()).Info(), snap);
    for (const auto& [node, s] : scores) CHECK(s.second == 100);
  }
  SECTION("only DoNotSchedule constraints: the plugin does not score (all 0)") {
    auto scores = ScoreAll(p, FooBar("mypod").SpreadConstraint(Spread{}.Obj()).Info(), snap);
    for (const auto& [node, s] : scores) CHECK(s == std::pair<int64_t, int64_t>{PodTopologySpread::kInvalidScore, 0});
  }
}

ServiceInfo Service(const std::string& ns, const std::string& name, Labels selector) {
  return ServiceInfo{ns, name, std::move(selector)};
}

TEST_CASE("PodTopologySpread: system default spreading by Service", "[pod_topology_spread]") {
  PodTopologySpread p;
  REQUIRE(p.system_defaulted());
  // n1, n2 in z1; n3 in z2; n4 has no zone label.
  Snapshot snap;
  for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
           {"n1", "z1"}, {"n2", "z1"}, {"n3", "z2"}, {"n4", ""}}) {
    auto b = MakeNode().Name(name).Label("kubernetes.io/hostname", name);
    if (!zone.empty()) b.Label("topology.kubernetes.io/zone", zone);
    REQUIRE(snap.UpsertNode(b.Info()).ok());
  }
  auto web = [](const std::string& name) { return MakePod().Name(name).Label("app", "web").Label("tier", "fe"); };
  Bind(snap, web("w1").Info(), "n1");
  Bind(snap, web("w2").Info(), "n1");
  Bind(snap, web("w3").Info(), "n3");
  Bind(snap, web("w4").Info(), "n4");
  Bind(snap, web("elsewhere").Namespace("other").Info(), "n2");
  Bind(snap, MakePod().Name("unrelated").Label("app", "db").Info(), "n2");
  PodInfo pod = web("incoming").Info();

  SECTION("no Service selects the pod: not scored") {
    REQUIRE(snap.UpsertService(Service("default", "db", {{"app", "db"}})).ok());
    REQUIRE(snap.UpsertService(Service("other", "web", {{"app", "web"}})).ok());
    auto scores = ScoreAll(p, pod, snap);
    for (const auto& [node, s] : scores) CHECK(s == std::pair<int64_t, int64_t>{PodTopologySpread::kInvalidScore, 0});
    CHECK(Passing(FilterAll(p, pod, snap)) == Names{"n1", "n2", "n3", "n4"});
  }
  SECTION("hostname maxSkew 3 and zone maxSkew 5; n4 scored by hostname only") {
    REQUIRE(snap.UpsertService(Service("default", "web", {{"app", "web"}})).ok());
    REQUIRE(snap.UpsertService(Service("default", "empty", {})).ok());
    // Hostname weight ln 6, zone weight ln 5 (domains z1, z2 and n4's "").
    // n1: 2 ln6 + 2 + 2 ln5 + 4 = 12.80 -> 13; n2: 2 + 2 ln5 + 4 = 9.22 -> 9;
    // n3: ln6 + 2 + ln5 + 4 = 9.40 -> 9; n4: ln6 + 2 = 3.79 -> 4.
    CHECK(ScoreAll(p, pod, snap) == Scores{{"n1", {13, 30}}, {"n2", {9, 61}}, {"n3", {9, 61}}, {"n4", {4, 100}}});
    // Both defaults are ScheduleAnyway: nothing filtered.
    CHECK(Passing(FilterAll(p, pod, snap)) == Names{"n1", "n2", "n3", "n4"});
  }
  SECTION("selectors of several Services are merged") {
    REQUIRE(snap.UpsertService(Service("default", "web", {{"app", "web"}})).ok());
    REQUIRE(snap.UpsertService(Service("default", "fe", {{"tier", "fe"}})).ok());
    Bind(snap, MakePod().Name("web-only").Label("app", "web").Info(), "n2");  // lacks tier=fe
    CHECK(ScoreAll(p, pod, snap) == Scores{{"n1", {13, 30}}, {"n2", {9, 61}}, {"n3", {9, 61}}, {"n4", {4, 100}}});
    REQUIRE(snap.RemoveService("default", "fe").ok());
    // Now web-only counts on n2: 1 ln6 + 2 + 3 ln5 + 4 = 12.62 -> 13.
    CHECK(ScoreAll(p, pod, snap)["n2"].first == 13);
    CHECK(snap.RemoveService("default", "fe").code() == Code::kNotFound);
  }
  SECTION("a pod with constraints of its own gets no defaults") {
    REQUIRE(snap.UpsertService(Service("default", "web", {{"app", "web"}})).ok());
    Spread s;
    s.key = "topology.kubernetes.io/zone";
    s.when = kHard;
    PodInfo own = web("incoming").SpreadConstraint(s.Obj()).Info();
    auto scores = ScoreAll(p, own, snap);
    for (const auto& [node, sc] : scores) CHECK(sc.second == 0);
  }
}

TEST_CASE("PodTopologySpread: List default constraints", "[pod_topology_spread]") {
  auto made = PodTopologySpread::FromArgs(YAML::Load(R"(
defaultingType: List
defaultConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
)"));
  REQUIRE(made.ok());
  const PodTopologySpread& p = *made;
  CHECK_FALSE(p.system_defaulted());
  Snapshot snap = DocsCluster();
  PodInfo pod = FooBar("mypod").Info();
  // Without a Service there is no group: nothing is filtered.
  CHECK(Passing(FilterAll(p, pod, snap)) == Names{"node1", "node2", "node3", "node4"});
  REQUIRE(snap.UpsertService(Service("default", "foo", {{"foo", "bar"}})).ok());
  CHECK(Passing(FilterAll(p, pod, snap)) == Names{"node3", "node4"});
  // No ScheduleAnyway default: not scored.
  for (const auto& [node, s] : ScoreAll(p, pod, snap)) CHECK(s.second == 0);

  auto none = PodTopologySpread::FromArgs(YAML::Load("{defaultingType: List, defaultConstraints: []}"));
  REQUIRE(none.ok());
  CHECK(none->default_constraints().empty());
}

TEST_CASE("PodTopologySpread args", "[pod_topology_spread]") {
  auto system = PodTopologySpread::FromArgs(YAML::Node());
  REQUIRE(system.ok());
  CHECK(system->system_defaulted());
  REQUIRE(system->default_constraints().size() == 2);
  CHECK(system->default_constraints()[0].topology_key == "kubernetes.io/hostname");
  CHECK(system->default_constraints()[0].max_skew == 3);
  CHECK(system->default_constraints()[1].topology_key == "topology.kubernetes.io/zone");
  CHECK(system->default_constraints()[1].max_skew == 5);
  CHECK(system->default_constraints()[1].when_unsatisfiable == kSoft);

  auto list = PodTopologySpread::FromArgs(YAML::Load(R"(
defaultingType: List
defaultConstraints:
  - {maxSkew: 2, topologyKey: example.com/rack, whenUnsatisfiable: ScheduleAnyway, minDomains: 2,
     nodeAffinityPolicy: Ignore, nodeTaintsPolicy: Honor}
)"));
  REQUIRE(list.ok());
  REQUIRE(list->default_constraints().size() == 1);
  const TopologySpreadConstraint& c = list->default_constraints()[0];
  CHECK(c.max_skew == 2);
  CHECK(c.topology_key == "example.com/rack");
  CHECK(c.when_unsatisfiable == kSoft);
  CHECK(c.min_domains == 2);
  CHECK(c.node_affinity_policy == Policy::Ignore);
  CHECK(c.node_taints_policy == Policy::Honor);

  struct Bad {
    const char* yaml;
    const char* error;
  };
  for (const Bad& b : std::vector<Bad>{
           {"{defaultingType: Sometimes}",
            "defaultingType: Unsupported value: \"Sometimes\": supported values: \"System\", \"List\""},
           {"{defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}",
            "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
            "ScheduleAnyway}]}",
            "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}]}",
            "defaultConstraints[0].topologyKey: Required value: can not be empty"},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: 'a b', whenUnsatisfiable: "
            "ScheduleAnyway}]}",
            "defaultConstraints[0].topologyKey: Invalid value: \"a b\""},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone}]}",
            "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}]}",
            "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: "
            "\"DoNotSchedule\", \"ScheduleAnyway\""},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
            "ScheduleAnyway, labelSelector: {matchLabels: {a: b}}}]}",
            "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
            "deduced for each pod"},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
            "ScheduleAnyway}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}",
            "defaultConstraints[1]: Duplicate value: \"{zone, ScheduleAnyway}\""},
           {"{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
            "ScheduleAnyway, nodeTaintsPolicy: Sometimes}]}",
            "defaultConstraints[0].nodeTaintsPolicy: Unsupported value: \"Sometimes\""},
           {"{defaultingTyp: List}", "defaultingTyp: unknown field"},
       }) {
    INFO(b.yaml);
    auto r = PodTopologySpread::FromArgs(YAML::Load(b.yaml));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalid);
    CHECK_THAT(r.status().message(), Catch::Contains(b.error));
  }
  // The registry hands pluginConfig args to FromArgs.
  auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  ProfileConfig config = DefaultProfileConfig();
  config.plugin_args["PodTopologySpread"] = YAML::Load("{defaultingType: Often}");
  auto profile = Profile::Build(*registry, config);
  REQUIRE_FALSE(profile.ok());
  CHECK_THAT(profile.status().message(), Catch::Contains("PodTopologySpread"));
  CHECK_THAT(profile.status().message(), Catch::Contains("defaultingType: Unsupported value"));
}

TEST_CASE("PodTopologySpread in the default profile: a unique winner", "[pod_topology_spread]") {
  auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  ProfileConfig config = DefaultProfileConfig();
  CHECK(std::count(config.filter.begin(), config.filter.end(), "PodTopologySpread") == 1);
  auto entry = std::find_if(config.score.begin(), config.score.end(),
                            [](const ScorePluginConfig& s) { return s.name == "PodTopologySpread"; });
  REQUIRE(entry != config.score.end());
  CHECK(entry->weight == 2);
  auto profile = Profile::Build(*registry, config);
  REQUIRE(profile.ok());

  Snapshot snap;
  for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
           {"node1", "zoneA"}, {"node2", "zoneA"}, {"node3", "zoneB"}, {"node4", "zoneB"}, {"node5", "zoneC"}}) {
    REQUIRE(snap.UpsertNode(MakeNode()
                                .Name(name)
                                .Label("kubernetes.io/hostname", name)
                                .Label("zone", zone)
                                .Cpu("4")
                                .Memory("32Gi")
                                .Info()).ok());
  }
  // One foo=bar pod on each of node1..node3; zoneC's node5 runs a busy
  // unlabelled pod, so that resource scores alone would not pick it.
  for (const char* n : {"node1", "node2", "node3"}) Bind(snap, FooBar(std::string("p-") + n).Cpu("100m").Info(), n);
  Bind(snap, MakePod().Name("busy").Cpu("2").Memory("8Gi").Info(), "node5");

  SECTION("DoNotSchedule by zone and by node: only node5 fits") {
    Spread host;
    host.key = "kubernetes.io/hostname";
    auto d = Schedule(
        *profile, FooBar("mypod").Cpu("100m").SpreadConstraint(Spread{}.Obj()).SpreadConstraint(host.Obj()).Info(),
        snap);
    REQUIRE(d.ok());
    CHECK(d->node == "node5");
    CHECK(d->feasible_nodes == 1);
  }
  SECTION("ScheduleAnyway by zone: the empty zone wins over resources") {
    Spread zone;
    zone.when = kSoft;
    auto d = Schedule(*profile, FooBar("mypod").Cpu("100m").SpreadConstraint(zone.Obj()).Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->feasible_nodes == 5);
    // Weight ln 5: zoneA 2 pods -> 3.2 -> 3, zoneB 1 -> 1.6 -> 2, zoneC 0;
    // 100 * (3 + 0 - s) / 3 -> zoneA 0, zoneB 33, zoneC 100.
    std::map<std::string, int64_t> spread;
    for (const NodeScores& ns : d->scores) {
      for (const PluginScore& ps : ns.plugins) {
        if (ps.plugin != "PodTopologySpread") continue;
        spread[ns.node] = ps.normalized;
        CHECK(ps.weighted == 2 * ps.normalized);
      }
    }
    CHECK(spread == std::map<std::string, int64_t>{
                        {"node1", 0}, {"node2", 0}, {"node3", 33}, {"node4", 33}, {"node5", 100}});
    CHECK(d->node == "node5");
    CHECK(d->tied_nodes == 1);
  }
}

}  // namespace
}  // namespace podflow::scheduler
