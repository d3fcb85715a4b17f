// InterPodAffinity: label selectors, filter verdicts and normalized scores,
// from Kubernetes' documented inter-pod affinity semantics.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace podflow::scheduler {
namespace {

using plugins::InterPodAffinity;
using testing::MakeNode;
using testing::MakePod;
using testing::PodBuilder;
using Op = api::LabelSelectorOperator;

// ---- building terms ------------------------------------------------------

struct Expr {
  std::string key;
  Op op;
  std::vector<std::string> values;
};

// A label selector: nullopt is a null selector.
struct Sel {
  std::map<std::string, std::string> match_labels;
  std::vector<Expr> exprs;
};

std::unique_ptr<api::LabelSelectorT> ToApi(const Sel& s) {
  auto out = std::make_unique<api::LabelSelectorT>();
  for (const auto& [k, v] : s.match_labels) testing::PutString(out->match_labels, k, v);
  for (const Expr& e : s.exprs) {
    auto r = std::make_unique<api::LabelSelectorRequirementT>();
    r->key = e.key;
    r->operator_ = e.op;
    r->values = e.values;
    out->match_expressions.push_back(std::move(r));
  }
  return out;
}

struct Term {
  std::optional<Sel> selector;
  std::string topology_key;
  std::vector<std::string> namespaces = {};
  std::optional<Sel> namespace_selector = std::nullopt;
  std::vector<std::string> match_label_keys = {};
};

std::unique_ptr<api::PodAffinityTermT> ToApi(const Term& t) {
  auto out = std::make_unique<api::PodAffinityTermT>();
  if (t.selector) out->label_selector = ToApi(*t.selector);
  out->topology_key = t.topology_key;
  out->namespaces = t.namespaces;
  if (t.namespace_selector) out->namespace_selector = ToApi(*t.namespace_selector);
  out->match_label_keys = t.match_label_keys;
  return out;
}

std::unique_ptr<api::WeightedPodAffinityTermT> Weighted(int32_t weight, const Term& t) {
  auto out = std::make_unique<api::WeightedPodAffinityTermT>();
  out->weight = weight;
  out->pod_affinity_term = ToApi(t);
  return out;
}

api::PodAffinityT& Aff(api::AffinityT& a) {
  if (!a.pod_affinity) a.pod_affinity = std::make_unique<api::PodAffinityT>();
  return *a.pod_affinity;
}
api::PodAntiAffinityT& Anti(api::AffinityT& a) {
  if (!a.pod_anti_affinity) a.pod_anti_affinity = std::make_unique<api::PodAntiAffinityT>();
  return *a.pod_anti_affinity;
}

PodBuilder& RequiredAffinity(PodBuilder& b, const Term& t) {
  return b.EditAffinity([&](api::AffinityT& a) {
    Aff(a).required_during_scheduling_ignored_during_execution.push_back(ToApi(t));
  });
}
PodBuilder& RequiredAnti(PodBuilder& b, const Term& t) {
  return b.EditAffinity([&](api::AffinityT& a) {
    Anti(a).required_during_scheduling_ignored_during_execution.push_back(ToApi(t));
  });
}
PodBuilder& PreferredAffinity(PodBuilder& b, int32_t w, const Term& t) {
  return b.EditAffinity([&](api::AffinityT& a) {
    Aff(a).preferred_during_scheduling_ignored_during_execution.push_back(Weighted(w, t));
  });
}
PodBuilder& PreferredAnti(PodBuilder& b, int32_t w, const Term& t) {
  return b.EditAffinity([&](api::AffinityT& a) {
    Anti(a).preferred_during_scheduling_ignored_during_execution.push_back(Weighted(w, t));
  });
}

Sel App(const std::string& app) { return Sel{{{"app", app}}, {}}; }

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kHost = "kubernetes.io/hostname";

// ---- a small cluster -----------------------------------------------------

// Nodes n1, n2 in zone a; n3 in zone b; n4 without a zone label. Each has
// its hostname label.
Snapshot Cluster() {
  Snapshot snap;
  auto node = [&](const std::string& name, const std::string& zone) {
    auto b = MakeNode().Name(name).Label(kHost, name).Cpu("4").Memory("8Gi").Pods("110");
    if (!zone.empty()) b.Label(kZone, zone);
    REQUIRE(snap.UpsertNode(b.Info()).ok());
  };
  node("n1", "a");
  node("n2", "a");
  node("n3", "b");
  node("n4", "");
  return snap;
}

void Bind(Snapshot& snap, PodBuilder b, const std::string& node) {
  PodInfo pod = b.Node(node).Info();
  REQUIRE(snap.AddPod(std::move(pod)).ok());
}

// Filter verdict per node: "" when it passes, else "<code>: <reason>".
std::map<std::string, std::string> Verdicts(const Snapshot& snap, const PodInfo& pod,
                                            const InterPodAffinity& plugin = {}) {
  CycleState state;
  PreFilterResult pre = plugin.PreFilter(state, pod, snap);
  const bool skip = pre.status.code() == PluginCode::kSkip;
  REQUIRE((pre.status.IsSuccess() || skip));
  std::map<std::string, std::string> out;
  for (const NodeInfo& node : snap.nodes()) {
    PluginStatus s = plugin.Filter(state, pod, node);
    if (skip) CHECK(s.IsSuccess());  // Skip promises that every node passes
    out[node.name] = s.IsSuccess() ? "" : std::string(PluginCodeName(s.code())) + ": " + s.reasons()[0];
    // A copy of the node (as the runner makes to add nominated pods) is
    // judged by its labels instead of its position: the same verdict.
    NodeInfo copy = node;
    PluginStatus c = plugin.Filter(state, pod, copy);
    CHECK(c.code() == s.code());
    CHECK(c.reasons() == s.reasons());
  }
  return out;
}

std::string Code(PluginCode c, std::string_view reason) {
  return std::string(PluginCodeName(c)) + ": " + std::string(reason);
}
const std::string kAffinityFail = Code(PluginCode::kUnschedulableAndUnresolvable,
                                       InterPodAffinity::kErrReasonAffinityRulesNotMatch);
const std::string kAntiFail =
    Code(PluginCode::kUnschedulable, InterPodAffinity::kErrReasonAntiAffinityRulesNotMatch);
const std::string kExistingFail = Code(PluginCode::kUnschedulable,
                                       InterPodAffinity::kErrReasonExistingAntiAffinityRulesNotMatch);

// ---- LabelSelector -------------------------------------------------------

TEST_CASE("LabelSelector matches as metav1.LabelSelectorAsSelector", "[inter-pod-affinity]") {
  const Labels web = {{"app", "web"}, {"tier", "front"}};
  struct Case {
    const char* name;
    std::optional<Sel> selector;
    bool want;
  };
  const std::vector<Case> cases = {
      {"null selector matches nothing", std::nullopt, false},
      {"empty selector matches everything", Sel{}, true},
      {"matchLabels equal", App("web"), true},
      {"matchLabels differ", App("db"), false},
      {"In listed", Sel{{}, {{"tier", Op::In, {"back", "front"}}}}, true},
      {"In absent label", Sel{{}, {{"zone", Op::In, {"a"}}}}, false},
      {"NotIn listed", Sel{{}, {{"tier", Op::NotIn, {"front"}}}}, false},
      {"NotIn absent label", Sel{{}, {{"zone", Op::NotIn, {"a"}}}}, true},
      {"Exists", Sel{{}, {{"tier", Op::Exists, {}}}}, true},
      {"DoesNotExist", Sel{{}, {{"tier", Op::DoesNotExist, {}}}}, false},
      {"requirements ANDed", Sel{{{"app", "web"}}, {{"tier", Op::In, {"back"}}}}, false},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::unique_ptr<api::LabelSelectorT> obj = c.selector ? ToApi(*c.selector) : nullptr;
      flatbuffers::FlatBufferBuilder fbb;
      const api::LabelSelector* fb = nullptr;
      if (obj) {
        fbb.Finish(api::LabelSelector::Pack(fbb, obj.get()));
        fb = flatbuffers::GetRoot<api::LabelSelector>(fbb.GetBufferPointer());
      }
      auto s = LabelSelector::FromApi(fb);
      REQUIRE(s.ok());
      CHECK(s->Matches(web) == c.want);
    }
  }
}

TEST_CASE("LabelSelector rejects malformed requirements", "[inter-pod-affinity]") {
  for (const Sel& bad : {Sel{{}, {{"a", Op::In, {}}}}, Sel{{}, {{"a", Op::Exists, {"x"}}}},
                         Sel{{}, {{"a", Op::Unset, {"x"}}}}}) {
    auto obj = ToApi(bad);
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(api::LabelSelector::Pack(fbb, obj.get()));
    auto s = LabelSelector::FromApi(flatbuffers::GetRoot<api::LabelSelector>(fbb.GetBufferPointer()));
    CHECK_FALSE(s.ok());
  }
}

// ---- Filter --------------------------------------------------------------

TEST_CASE("InterPodAffinity required affinity needs a matching pod in the domain",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("s1").Label("security", "S1"), "n1");
  Bind(snap, MakePod().Name("other").Label("security", "S2"), "n3");

  auto pod = MakePod().Name("p");
  RequiredAffinity(pod, Term{Sel{{}, {{"security", Op::In, {"S1"}}}}, kZone});
  // Zone a holds S1: n1 and n2 pass; zone b does not; n4 has no zone label.
  CHECK(Verdicts(snap, pod.Info()) == std::map<std::string, std::string>{
                                          {"n1", ""}, {"n2", ""}, {"n3", kAffinityFail},
                                          {"n4", kAffinityFail}});

  // On hostname topology only n1 qualifies.
  auto host = MakePod().Name("h");
  RequiredAffinity(host, Term{App("x"), kHost});
  Bind(snap, MakePod().Name("x").Label("app", "x"), "n2");
  CHECK(Verdicts(snap, host.Info()) == std::map<std::string, std::string>{
                                           {"n1", kAffinityFail}, {"n2", ""},
                                           {"n3", kAffinityFail}, {"n4", kAffinityFail}});
}

TEST_CASE("InterPodAffinity affinity terms are ANDed over one pod", "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  // app=web on n1 and tier=cache on n2: no single pod matches both terms.
  Bind(snap, MakePod().Name("w").Label("app", "web"), "n1");
  Bind(snap, MakePod().Name("c").Label("tier", "cache"), "n2");
  auto pod = MakePod().Name("p");
  RequiredAffinity(pod, Term{App("web"), kZone});
  RequiredAffinity(pod, Term{Sel{{{"tier", "cache"}}, {}}, kZone});
  std::map<std::string, std::string> all_fail = {
      {"n1", kAffinityFail}, {"n2", kAffinityFail}, {"n3", kAffinityFail}, {"n4", kAffinityFail}};
  CHECK(Verdicts(snap, pod.Info()) == all_fail);

  // A pod matching both, in zone b, opens zone b.
  Bind(snap, MakePod().Name("both").Label("app", "web").Label("tier", "cache"), "n3");
  CHECK(Verdicts(snap, pod.Info()) == std::map<std::string, std::string>{
                                          {"n1", kAffinityFail}, {"n2", kAffinityFail},
                                          {"n3", ""}, {"n4", kAffinityFail}});
}

TEST_CASE("InterPodAffinity lets the first pod of a self-affine group schedule",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("unrelated").Label("app", "db"), "n1");
  auto self = MakePod().Name("p").Label("app", "web");
  RequiredAffinity(self, Term{App("web"), kZone});

  // No pod matches anywhere and the pod matches its own term: every node
  // with the topology label passes, n4 (no zone) still fails.
  CHECK(Verdicts(snap, self.Info()) == std::map<std::string, std::string>{
                                           {"n1", ""}, {"n2", ""}, {"n3", ""},
                                           {"n4", kAffinityFail}});

  // A pod not matching its own term gets no such pass.
  auto stranger = MakePod().Name("q").Label("app", "api");
  RequiredAffinity(stranger, Term{App("web"), kZone});
  CHECK(Verdicts(snap, stranger.Info())["n1"] == kAffinityFail);

  // Once a web pod runs in zone b, the group's later pods must join it.
  Bind(snap, MakePod().Name("web-0").Label("app", "web"), "n3");
  CHECK(Verdicts(snap, self.Info()) == std::map<std::string, std::string>{
                                           {"n1", kAffinityFail}, {"n2", kAffinityFail},
                                           {"n3", ""}, {"n4", kAffinityFail}});
}

TEST_CASE("InterPodAffinity required anti-affinity keeps the pod out of matching domains",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("s2").Label("security", "S2"), "n1");
  auto pod = MakePod().Name("p");
  RequiredAnti(pod, Term{Sel{{}, {{"security", Op::In, {"S2"}}}}, kZone});
  // Zone a is taken; zone b is free; a node without the label passes.
  CHECK(Verdicts(snap, pod.Info()) == std::map<std::string, std::string>{
                                          {"n1", kAntiFail}, {"n2", kAntiFail}, {"n3", ""},
                                          {"n4", ""}});

  // The docs' one-replica-per-node store: hostname anti-affinity to itself.
  auto store = MakePod().Name("store-1").Label("app", "store");
  RequiredAnti(store, Term{App("store"), kHost});
  Bind(snap, MakePod().Name("store-0").Label("app", "store"), "n2");
  CHECK(Verdicts(snap, store.Info()) == std::map<std::string, std::string>{
                                            {"n1", ""}, {"n2", kAntiFail}, {"n3", ""},
                                            {"n4", ""}});
}

TEST_CASE("InterPodAffinity honours running pods' anti-affinity symmetrically",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  auto guard = MakePod().Name("guard").Label("app", "guard");
  RequiredAnti(guard, Term{App("web"), kZone});
  Bind(snap, guard, "n3");

  // A web pod with no affinity of its own may not join zone b.
  CHECK(Verdicts(snap, MakePod().Name("web").Label("app", "web").Info()) ==
        std::map<std::string, std::string>{
            {"n1", ""}, {"n2", ""}, {"n3", kExistingFail}, {"n4", ""}});
  // Other pods are not affected.
  CHECK(Verdicts(snap, MakePod().Name("db").Label("app", "db").Info())["n3"] == "");

  // The guard gone, zone b is open again.
  REQUIRE(snap.RemovePod("uid-guard").ok());
  CHECK(Verdicts(snap, MakePod().Name("web").Label("app", "web").Info())["n3"] == "");
}

TEST_CASE("InterPodAffinity terms select namespaces", "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  REQUIRE(snap.UpsertNamespace("prod", {{"env", "prod"}}).ok());
  REQUIRE(snap.UpsertNamespace("dev", {{"env", "dev"}}).ok());
  REQUIRE(snap.UpsertNamespace("default", {}).ok());
  Bind(snap, MakePod().Name("db-prod").Namespace("prod").Label("app", "db"), "n1");
  Bind(snap, MakePod().Name("db-dev").Namespace("dev").Label("app", "db"), "n3");

  struct Case {
    const char* name;
    Term term;
    std::map<std::string, std::string> want;
  };
  const std::map<std::string, std::string> nowhere = {
      {"n1", kAffinityFail}, {"n2", kAffinityFail}, {"n3", kAffinityFail}, {"n4", kAffinityFail}};
  const std::vector<Case> cases = {
      {"no namespaces: the pod's own (default) has no db", Term{App("db"), kZone}, nowhere},
      {"listed namespace", Term{App("db"), kZone, {"dev"}},
       {{"n1", kAffinityFail}, {"n2", kAffinityFail}, {"n3", ""}, {"n4", kAffinityFail}}},
      {"namespaceSelector by label", Term{App("db"), kZone, {}, Sel{{{"env", "prod"}}, {}}},
       {{"n1", ""}, {"n2", ""}, {"n3", kAffinityFail}, {"n4", kAffinityFail}}},
      {"empty namespaceSelector: all namespaces", Term{App("db"), kZone, {}, Sel{}},
       {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kAffinityFail}}},
      {"namespaces and namespaceSelector are ORed",
       Term{App("db"), kZone, {"dev"}, Sel{{{"env", "prod"}}, {}}},
       {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kAffinityFail}}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      // The pod is app=api so the first-pod rule never applies here.
      auto pod = MakePod().Name("p").Label("app", "api");
      RequiredAffinity(pod, c.term);
      CHECK(Verdicts(snap, pod.Info()) == c.want);
      // With the same term on a running pod, the index tracks it; the
      // verdicts stay the same.
      auto twin = MakePod().Name("twin").Label("app", "api");
      RequiredAffinity(twin, c.term);
      Bind(snap, twin, "n4");
      CHECK(Verdicts(snap, pod.Info()) == c.want);
    }
  }

  SECTION("relabelling a namespace moves its pods in or out of a selector") {
    auto pod = MakePod().Name("p").Label("app", "api");
    RequiredAffinity(pod, Term{App("db"), kZone, {}, Sel{{{"env", "prod"}}, {}}});
    Bind(snap, pod, "n4");  // tracked from now on
    REQUIRE(snap.UpsertNamespace("dev", {{"env", "prod"}}).ok());
    auto next = MakePod().Name("q").Label("app", "api");
    RequiredAffinity(next, Term{App("db"), kZone, {}, Sel{{{"env", "prod"}}, {}}});
    CHECK(Verdicts(snap, next.Info())["n3"] == "");
  }
}

TEST_CASE("InterPodAffinity matchLabelKeys narrows the selector by the pod's labels",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("v1").Label("app", "web").Label("rev", "1"), "n1");
  auto pod = MakePod().Name("p").Label("app", "web").Label("rev", "2");
  RequiredAnti(pod, Term{App("web"), kHost, {}, std::nullopt, {"rev"}});
  // Only rev=2 pods repel it: n1's rev=1 pod does not.
  CHECK(Verdicts(snap, pod.Info())["n1"] == "");
  Bind(snap, MakePod().Name("v2").Label("app", "web").Label("rev", "2"), "n2");
  CHECK(Verdicts(snap, pod.Info())["n2"] == kAntiFail);
}

TEST_CASE("InterPodAffinity follows node relabelling and removal", "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  auto guard = MakePod().Name("guard").Label("app", "web");
  RequiredAnti(guard, Term{App("web"), kZone});
  Bind(snap, guard, "n3");
  auto web = MakePod().Name("web").Label("app", "web");
  RequiredAnti(web, Term{App("web"), kZone});
  CHECK(Verdicts(snap, web.Info())["n1"] == "");

  // n3 moves to zone a: zone a is now taken, by both directions.
  REQUIRE(snap.UpsertNode(MakeNode().Name("n3").Label(kHost, "n3").Label(kZone, "a").Info()).ok());
  CHECK(Verdicts(snap, web.Info()) == std::map<std::string, std::string>{
                                          {"n1", kAntiFail}, {"n2", kAntiFail}, {"n3", kAntiFail},
                                          {"n4", ""}});
  REQUIRE(snap.RemoveNode("n3").ok());
  CHECK(Verdicts(snap, web.Info()) ==
        std::map<std::string, std::string>{{"n1", ""}, {"n2", ""}, {"n4", ""}});
}

TEST_CASE("InterPodAffinity keeps per-node counts right as nodes come and go",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  auto member = [](const std::string& name) {
    auto b = MakePod().Name(name).Label("app", "store");
    RequiredAnti(b, Term{App("store"), kHost});
    return b;
  };
  Bind(snap, member("s3"), "n3");
  Bind(snap, member("s4"), "n4");
  const PodInfo next = member("next").Info();
  // Removing n1 moves every later node one position down.
  REQUIRE(snap.RemoveNode("n1").ok());
  CHECK(Verdicts(snap, next) ==
        std::map<std::string, std::string>{{"n2", ""}, {"n3", kAntiFail}, {"n4", kAntiFail}});
  // A new node starts empty; a pod leaving frees its node.
  REQUIRE(snap.UpsertNode(MakeNode().Name("n5").Label(kHost, "n5").Info()).ok());
  REQUIRE(snap.RemovePod("uid-s3").ok());
  CHECK(Verdicts(snap, next) ==
        std::map<std::string, std::string>{{"n2", ""}, {"n3", ""}, {"n4", kAntiFail}, {"n5", ""}});
}

TEST_CASE("InterPodAffinity mismatchLabelKeys excludes pods sharing the pod's value",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("t1").Label("app", "web").Label("tenant", "a"), "n1");
  Bind(snap, MakePod().Name("t2").Label("app", "web").Label("tenant", "b"), "n2");
  auto pod = MakePod().Name("p").Label("app", "web").Label("tenant", "a");
  pod.EditAffinity([](api::AffinityT& a) {
    auto t = ToApi(Term{App("web"), kHost});
    t->mismatch_label_keys = {"tenant"};
    Anti(a).required_during_scheduling_ignored_during_execution.push_back(std::move(t));
  });
  // Only web pods of another tenant repel it.
  CHECK(Verdicts(snap, pod.Info()) == std::map<std::string, std::string>{
                                          {"n1", ""}, {"n2", kAntiFail}, {"n3", ""}, {"n4", ""}});
}

// ---- copies of a node (preemption, nominated pods) ----------------------

// The verdict on a copy of `node` edited by `edit` (PreFilter on `snap`).
std::string CopyVerdict(const Snapshot& snap, const PodInfo& pod, const std::string& node,
                        const std::function<void(NodeInfo&)>& edit) {
  InterPodAffinity plugin;
  CycleState state;
  PreFilterResult pre = plugin.PreFilter(state, pod, snap);
  REQUIRE(pre.status.IsSuccess());
  NodeInfo copy = *snap.FindNode(node);
  edit(copy);
  PluginStatus s = plugin.Filter(state, pod, copy);
  return s.IsSuccess() ? "" : std::string(PluginCodeName(s.code())) + ": " + s.reasons()[0];
}

TEST_CASE("InterPodAffinity counts the pods a copy of a node gained or lost", "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("db-1").Label("app", "db"), "n1");
  auto anti_db = MakePod().Name("web").Label("app", "web");
  RequiredAnti(anti_db, Term{App("db"), kHost});
  const PodInfo web = anti_db.Info();

  SECTION("a victim removed frees its node") {
    CHECK(Verdicts(snap, web)["n1"] == kAntiFail);
    CHECK(CopyVerdict(snap, web, "n1", [](NodeInfo& n) { REQUIRE(n.RemovePod("uid-db-1").ok()); }) == "");
  }
  SECTION("a pod added (nominated there) counts") {
    CHECK(Verdicts(snap, web)["n2"] == "");
    auto db2 = std::make_shared<const PodInfo>(MakePod().Name("db-2").Label("app", "db").Node("n2").Info());
    CHECK(CopyVerdict(snap, web, "n2", [&](NodeInfo& n) { n.AddPod(db2); }) == kAntiFail);
  }
  SECTION("a running pod's anti-affinity goes with it") {
    auto guard = MakePod().Name("guard").Label("app", "guard");
    RequiredAnti(guard, Term{App("web"), kHost});
    Bind(snap, guard, "n3");
    const PodInfo plain_web = MakePod().Name("w").Label("app", "web").Info();
    CHECK(Verdicts(snap, plain_web)["n3"] == kExistingFail);
    CHECK(CopyVerdict(snap, plain_web, "n3", [](NodeInfo& n) { REQUIRE(n.RemovePod("uid-guard").ok()); }) == "");
    // ... and comes with a pod added elsewhere, even of a term no running
    // pod has.
    auto other = MakePod().Name("other").Label("app", "other");
    RequiredAnti(other, Term{App("web"), kZone});
    auto added = std::make_shared<const PodInfo>(other.Node("n1").Info());
    CHECK(CopyVerdict(snap, plain_web, "n1", [&](NodeInfo& n) { n.AddPod(added); }) == kExistingFail);
  }
  SECTION("required affinity loses the only pod it could follow") {
    Bind(snap, MakePod().Name("cache").Label("app", "cache"), "n3");
    auto follower = MakePod().Name("f").Label("app", "web");
    RequiredAffinity(follower, Term{App("cache"), kZone});
    CHECK(Verdicts(snap, follower.Info())["n3"] == "");
    auto without_cache = [](NodeInfo& n) { REQUIRE(n.RemovePod("uid-cache").ok()); };
    CHECK(CopyVerdict(snap, follower.Info(), "n3", without_cache) == kAffinityFail);
    // A pod of the group it selects may then start the group anywhere.
    auto first = MakePod().Name("c2").Label("app", "cache");
    RequiredAffinity(first, Term{App("cache"), kZone});
    CHECK(CopyVerdict(snap, first.Info(), "n3", without_cache) == "");
    // The same with two terms (each counts the cache pod once).
    auto two = MakePod().Name("c3").Label("app", "cache");
    RequiredAffinity(two, Term{App("cache"), kZone});
    RequiredAffinity(two, Term{App("cache"), kHost});
    CHECK(Verdicts(snap, two.Info())["n3"] == "");
    CHECK(CopyVerdict(snap, two.Info(), "n3", without_cache) == "");
  }
  SECTION("terms no counted pod matches still see a pod nominated there") {
    auto anti_cache = MakePod().Name("w2").Label("app", "web");
    RequiredAnti(anti_cache, Term{App("cache"), kHost});
    auto cache = std::make_shared<const PodInfo>(MakePod().Name("cache").Label("app", "cache").Node("n2").Info());
    CHECK(CopyVerdict(snap, anti_cache.Info(), "n2", [&](NodeInfo& n) { n.AddPod(cache); }) == kAntiFail);
  }
}

TEST_CASE("preemption evicts a lower-priority pod that a required anti-affinity keeps out",
          "[inter-pod-affinity][preemption]") {
  static auto registry = plugins::NewInTreeRegistry();
  static auto profile = Profile::Build(*registry, DefaultProfileConfig());
  REQUIRE(profile.ok());
  Snapshot snap;
  for (const char* name : {"a", "b"}) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Label(kHost, name).Cpu("4").Memory("8Gi").Info()).ok());
  }
  Bind(snap, MakePod().Name("db-a").Label("app", "db").Priority(0).Cpu("1"), "a");
  Bind(snap, MakePod().Name("db-b").Label("app", "db").Priority(0).Cpu("2"), "b");
  Bind(snap, MakePod().Name("keep-b").Label("app", "other").Priority(0).Cpu("1"), "b");

  auto web = MakePod().Name("web").Label("app", "web").Priority(100).Cpu("1");
  RequiredAnti(web, Term{App("db"), kHost});
  auto d = Schedule(*profile, web.Info(), snap);
  REQUIRE(d.ok());
  INFO(d->Explain());
  CHECK_FALSE(d->scheduled());
  CHECK(d->message == "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.");
  // Each node needs one priority-0 victim (keep-b matches no term and is
  // reprieved), so kube-scheduler's tie rules leave them equal and the
  // first candidate in node order wins.
  CHECK(d->nominated_node == "a");
  CHECK(d->victims == std::vector<std::string>{"uid-db-a"});

  // A higher-priority db pod is not evicted for it.
  Snapshot high;
  REQUIRE(high.UpsertNode(MakeNode().Name("a").Label(kHost, "a").Cpu("4").Memory("8Gi").Info()).ok());
  Bind(high, MakePod().Name("db-a").Label("app", "db").Priority(1000), "a");
  auto none = Schedule(*profile, web.Info(), high);
  REQUIRE(none.ok());
  CHECK(none->nominated_node.empty());
  CHECK(none->message.find("No preemption victims found for incoming pod") != std::string::npos);
}

// ---- Score ---------------------------------------------------------------

// Raw and normalized scores of every node of `snap`.
std::pair<std::vector<int64_t>, std::vector<int64_t>> Scores(const Snapshot& snap,
                                                             const PodInfo& pod,
                                                             const InterPodAffinity& plugin = {}) {
  CycleState state;
  std::vector<const NodeInfo*> feasible;
  for (const NodeInfo& n : snap.nodes()) feasible.push_back(&n);
  const PluginStatus pre = plugin.PreScore(state, pod, snap, feasible);
  const bool skip = pre.code() == PluginCode::kSkip;
  REQUIRE((pre.IsSuccess() || skip));
  std::vector<int64_t> raw;
  for (const NodeInfo* n : feasible) raw.push_back(plugin.Score(state, pod, *n));
  std::vector<int64_t> normalized = raw;
  plugin.NormalizeScore(pod, normalized);
  // Skip promises what the runner then gives: 0 on every node.
  if (skip) CHECK(std::all_of(normalized.begin(), normalized.end(), [](int64_t s) { return s == 0; }));
  return {raw, normalized};
}

TEST_CASE("InterPodAffinity scores preferred terms per domain, min-max normalized",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("db").Label("app", "db"), "n1");
  Bind(snap, MakePod().Name("cache").Label("app", "cache"), "n3");
  auto pod = MakePod().Name("p");
  PreferredAffinity(pod, 10, Term{App("db"), kZone});
  PreferredAnti(pod, 5, Term{App("cache"), kZone});
  auto [raw, normalized] = Scores(snap, pod.Info());
  // Zone a +10, zone b -5, n4 (no zone) 0. Normalized over -5..10:
  // 100*15/15, 100*15/15, 0, 100*5/15 = 33.3 -> 33.
  CHECK(raw == std::vector<int64_t>{10, 10, -5, 0});
  CHECK(normalized == std::vector<int64_t>{100, 100, 0, 33});
}

// n1 gets a pod preferring web pods in its zone (+20), n3 one preferring
// no web pod on its host (-7).
void BindLikesAndDislikesWeb(Snapshot& snap) {
  auto likes = MakePod().Name("likes").Label("app", "x");
  PreferredAffinity(likes, 20, Term{App("web"), kZone});
  Bind(snap, likes, "n1");
  auto dislikes = MakePod().Name("dislikes").Label("app", "y");
  PreferredAnti(dislikes, 7, Term{App("web"), kHost});
  Bind(snap, dislikes, "n3");
}

TEST_CASE("InterPodAffinity scores running pods' terms that match the pod",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  // n1's pod prefers web pods in its zone (+20); n3's pod wants no web pod
  // on its host (-7); n2's pod requires web pods on its host (hard weight).
  BindLikesAndDislikesWeb(snap);
  auto needs = MakePod().Name("needs").Label("app", "z");
  RequiredAffinity(needs, Term{App("web"), kHost});
  Bind(snap, needs, "n2");

  const PodInfo web = MakePod().Name("web").Label("app", "web").Info();
  struct Case {
    const char* name;
    InterPodAffinity plugin;
    std::vector<int64_t> raw;
    std::vector<int64_t> normalized;
  };
  const std::vector<Case> cases = {
      // n1: 20; n2: 20 + 1; n3: -7; n4: 0. Over -7..21 (28): 96, 100, 0, 25.
      {"default hard weight 1", InterPodAffinity(), {20, 21, -7, 0}, {96, 100, 0, 25}},
      // n2: 20 + 10 = 30. Over -7..30 (37): 27/37 -> 72, 100, 0, 7/37 -> 18.
      {"hard weight 10", InterPodAffinity(10, false), {20, 30, -7, 0}, {72, 100, 0, 18}},
      {"hard weight 0", InterPodAffinity(0, false), {20, 20, -7, 0}, {100, 100, 0, 25}},
      {"ignorePreferredTermsOfExistingPods", InterPodAffinity(1, true), {0, 0, 0, 0},
       {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto [raw, normalized] = Scores(snap, web, c.plugin);
      CHECK(raw == c.raw);
      CHECK(normalized == c.normalized);
    }
  }
}

TEST_CASE("InterPodAffinity scores from the nodes holding pods with affinity, as they change",
          "[inter-pod-affinity]") {
  Snapshot snap = Cluster();
  using Names = std::set<std::string>;
  auto names = [&snap] {
    return Names(snap.NodesWithAffinityPods().begin(), snap.NodesWithAffinityPods().end());
  };
  Bind(snap, MakePod().Name("plain").Label("app", "web"), "n2");
  CHECK(names().empty());
  BindLikesAndDislikesWeb(snap);
  auto dislikes_too = MakePod().Name("dislikes-too").Label("app", "y");
  PreferredAnti(dislikes_too, 3, Term{App("web"), kHost});
  Bind(snap, dislikes_too, "n3");
  CHECK(names() == Names{"n1", "n3"});

  // The pod has no terms of its own: only n1's and n3's pods score it.
  const PodInfo web = MakePod().Name("web").Label("app", "web").Info();
  CHECK(Scores(snap, web).first == std::vector<int64_t>{20, 20, -10, 0});

  // One of n3's two pods goes: n3 still holds one.
  REQUIRE(snap.RemovePod(MakePod().Name("dislikes").Info().uid).ok());
  CHECK(names() == Names{"n1", "n3"});
  CHECK(Scores(snap, web).first == std::vector<int64_t>{20, 20, -3, 0});
  // A node replaced (relabelled) keeps its pods and its place in the list.
  REQUIRE(snap.UpsertNode(MakeNode().Name("n3").Label(kHost, "n3").Label(kZone, "a").Cpu("4")
                              .Memory("8Gi").Pods("110").Info())
              .ok());
  CHECK(names() == Names{"n1", "n3"});
  // n3 is in zone a now: n1's pod's zone term reaches it too.
  CHECK(Scores(snap, web).first == std::vector<int64_t>{20, 20, 17, 0});
  // The last one goes: n3 is no longer visited.
  REQUIRE(snap.RemovePod(MakePod().Name("dislikes-too").Info().uid).ok());
  CHECK(names() == Names{"n1"});
  CHECK(Scores(snap, web).first == std::vector<int64_t>{20, 20, 20, 0});
  // A node removed with its pods leaves the list.
  REQUIRE(snap.RemoveNode("n1").ok());
  CHECK(names().empty());
}

TEST_CASE("InterPodAffinity args", "[inter-pod-affinity]") {
  auto ok = InterPodAffinity::FromArgs(
      YAML::Load("{hardPodAffinityWeight: 5, ignorePreferredTermsOfExistingPods: true}"));
  REQUIRE(ok.ok());
  CHECK(ok->hard_pod_affinity_weight() == 5);
  CHECK(ok->ignore_preferred_terms_of_existing_pods());
  auto defaults = InterPodAffinity::FromArgs(YAML::Node());
  REQUIRE(defaults.ok());
  CHECK(defaults->hard_pod_affinity_weight() == 1);
  CHECK_FALSE(defaults->ignore_preferred_terms_of_existing_pods());
  auto high = InterPodAffinity::FromArgs(YAML::Load("{hardPodAffinityWeight: 101}"));
  REQUIRE_FALSE(high.ok());
  CHECK(high.status().message().find("hardPodAffinityWeight") != std::string::npos);
  CHECK_FALSE(InterPodAffinity::FromArgs(YAML::Load("{hardPodAffinityWeight: -1}")).ok());
  CHECK_FALSE(InterPodAffinity::FromArgs(YAML::Load("{unknown: 1}")).ok());
}

// ---- whole profile -------------------------------------------------------

TEST_CASE("InterPodAffinity in the default profile picks the zone with the db",
          "[inter-pod-affinity]") {
  static auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  auto profile = Profile::Build(*registry, DefaultProfileConfig());
  REQUIRE(profile.ok());

  Snapshot snap = Cluster();
  Bind(snap, MakePod().Name("db").Label("app", "db").Cpu("100m").Memory("200Mi"), "n1");
  // n2 (zone a, empty) beats n3 (zone b, empty) on InterPodAffinity alone
  // and n1 on resources; n4 has no zone.
  auto pod = MakePod().Name("p").Cpu("100m").Memory("200Mi");
  PreferredAffinity(pod, 100, Term{App("db"), kZone});
  auto d = Schedule(*profile, pod.Info(), snap);
  REQUIRE(d.ok());
  CHECK(d->node == "n2");
  CHECK(d->tied_nodes == 1);

  // Required anti-affinity to the db host: n1 is filtered with the reason.
  auto anti = MakePod().Name("q").Cpu("100m").Memory("200Mi");
  RequiredAnti(anti, Term{App("db"), kHost});
  auto d2 = Schedule(*profile, anti.Info(), snap);
  REQUIRE(d2.ok());
  CHECK(d2->node != "n1");
  bool seen = false;
  for (const NodeVerdict& v : d2->verdicts) {
    if (v.node != "n1") continue;
    seen = true;
    CHECK(v.status.plugin() == "InterPodAffinity");
    CHECK(v.status.reasons()[0] == InterPodAffinity::kErrReasonAntiAffinityRulesNotMatch);
  }
  CHECK(seen);
}

}  // namespace
}  // namespace podflow::scheduler
