// VolumeBinding and VolumeZone, and the volume plugins in the default profile.
#include <catch2/catch.hpp>

#include "scheduler/plugins/volume_binding/volume_binding.h"
#include "scheduler/plugins/volume_zone/volume_zone.h"
#include "volume_builders.h"

namespace podflow::scheduler {
namespace {

using namespace testing;
using Op = api::NodeSelectorOperator;

const std::vector<std::string> kNoAvailableZone = {"node(s) had no available volume zone"};

TEST_CASE("VolumeZone: zone labels as sets", "[volumes]") {
  using plugins::LabelZonesToSet;
  CHECK(LabelZonesToSet("us-east-1a") == std::set<std::string>{"us-east-1a"});
  CHECK(LabelZonesToSet("us-east-1a__us-east-1b") == std::set<std::string>{"us-east-1a", "us-east-1b"});
  CHECK(LabelZonesToSet(" a __ b ") == std::set<std::string>{"a", "b"});
  CHECK(LabelZonesToSet("a___b") == std::set<std::string>{"a", "_b"});
  CHECK(LabelZonesToSet("a____b") == std::nullopt);
  CHECK(LabelZonesToSet("") == std::nullopt);
  CHECK(LabelZonesToSet("a__") == std::nullopt);
}

TEST_CASE("VolumeZone: the bound volume's zone and region against the node's", "[volumes]") {
  constexpr const char* kZone = "topology.kubernetes.io/zone";
  constexpr const char* kRegion = "topology.kubernetes.io/region";
  constexpr const char* kBetaZone = "failure-domain.beta.kubernetes.io/zone";
  struct Case {
    const char* name;
    PersistentVolumeInfo pv;
    NodeInfo node;
    bool fits;
  };
  std::vector<Case> cases;
  cases.push_back({"same zone", PvBuilder("pv").Label(kZone, "us-east-1a").Info(),
                   MakeNode().Label(kZone, "us-east-1a").Info(), true});
  cases.push_back({"other zone", PvBuilder("pv").Label(kZone, "us-east-1a").Info(),
                   MakeNode().Label(kZone, "us-east-1b").Info(), false});
  cases.push_back({"multi-zone volume, node in one of them", PvBuilder("pv").Label(kZone, "us-east-1a__us-east-1b").Info(),
                   MakeNode().Label(kZone, "us-east-1b").Info(), true});
  cases.push_back({"multi-zone volume, node in none", PvBuilder("pv").Label(kZone, "us-east-1a__us-east-1b").Info(),
                   MakeNode().Label(kZone, "us-east-1c").Info(), false});
  cases.push_back({"node value is not split", PvBuilder("pv").Label(kZone, "a").Info(),
                   MakeNode().Label(kZone, "a__b").Info(), false});
  cases.push_back({"beta volume label matches the node's GA label", PvBuilder("pv").Label(kBetaZone, "a").Info(),
                   MakeNode().Label(kZone, "a").Info(), true});
  cases.push_back({"beta volume label against another GA value", PvBuilder("pv").Label(kBetaZone, "a").Info(),
                   MakeNode().Label(kZone, "b").Info(), false});
  cases.push_back({"GA volume label, node with the beta label only", PvBuilder("pv").Label(kZone, "a").Info(),
                   MakeNode().Label(kBetaZone, "a").Info(), false});
  cases.push_back({"node without topology labels takes anything", PvBuilder("pv").Label(kZone, "a").Info(),
                   MakeNode().Label("rack", "1").Info(), true});
  cases.push_back({"node lacks the region the volume names", PvBuilder("pv").Label(kZone, "a").Label(kRegion, "r1").Info(),
                   MakeNode().Label(kZone, "a").Info(), false});
  cases.push_back({"zone and region both match", PvBuilder("pv").Label(kZone, "a").Label(kRegion, "r1").Info(),
                   MakeNode().Label(kZone, "a").Label(kRegion, "r1").Info(), true});
  cases.push_back({"region mismatch", PvBuilder("pv").Label(kZone, "a").Label(kRegion, "r1").Info(),
                   MakeNode().Label(kZone, "a").Label(kRegion, "r2").Info(), false});
  cases.push_back({"a malformed zone label is ignored", PvBuilder("pv").Label(kZone, "a____b").Info(),
                   MakeNode().Label(kZone, "c").Info(), true});
  cases.push_back({"a volume without zone labels", PvBuilder("pv").Info(), MakeNode().Label(kZone, "c").Info(), true});
  for (auto& c : cases) {
    INFO(c.name);
    Snapshot snap;
    snap.UpsertPersistentVolume(c.pv);
    snap.UpsertPersistentVolumeClaim(PvcBuilder("data").BoundTo("pv").Info());
    PluginStatus s = PreFilterThenFilter(plugins::VolumeZone(), MakePod().Volume(ClaimVolume("data")).Info(), snap, c.node);
    if (c.fits) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
      CHECK(s.reasons() == kNoAvailableZone);
    }
  }
}

TEST_CASE("VolumeZone: claims it cannot resolve", "[volumes]") {
  Snapshot snap;
  snap.UpsertPersistentVolumeClaim(PvcBuilder("no-class").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("fast").StorageClass("fast").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("lost-pv").BoundTo("gone").Info());
  struct Case {
    const char* claim;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"nope", "persistentvolumeclaim \"nope\" not found"},
      {"no-class", "PersistentVolumeClaim had no pv name and storageClass name"},
      {"fast", "storageclass.storage.k8s.io \"fast\" not found"},
      {"lost-pv", "persistentvolume \"gone\" not found"},
  };
  for (const auto& c : cases) {
    INFO(c.claim);
    CycleState state;
    PreFilterResult r = plugins::VolumeZone().PreFilter(state, MakePod().Volume(ClaimVolume(c.claim)).Info(), snap);
    CHECK(r.status.code() == PluginCode::kUnschedulableAndUnresolvable);
    CHECK(r.status.reasons() == std::vector<std::string>{c.reason});
  }
  CHECK(PreFilterThenFilter(plugins::VolumeZone(), MakePod().Volume(EmptyDirVolume("tmp")).Info(), snap,
                            MakeNode().Label("topology.kubernetes.io/zone", "a").Info())
            .IsSuccess());
}

TEST_CASE("VolumeBinding: bound volumes' node affinity", "[volumes]") {
  NodeInfo node_a = MakeNode().Name("node-a").Label("kubernetes.io/hostname", "node-a").Label("disk", "ssd").Info();
  struct Case {
    const char* name;
    PersistentVolumeInfo pv;
    bool fits;
  };
  std::vector<Case> cases;
  cases.push_back({"no node affinity", PvBuilder("pv").Info(), true});
  cases.push_back({"hostname In this node", PvBuilder("pv").AffinityTerm({{"kubernetes.io/hostname", Op::In, {"node-a"}}}).Info(), true});
  cases.push_back({"hostname In another node", PvBuilder("pv").AffinityTerm({{"kubernetes.io/hostname", Op::In, {"node-b"}}}).Info(), false});
  cases.push_back({"requirements ANDed", PvBuilder("pv").AffinityTerm({{"kubernetes.io/hostname", Op::In, {"node-a"}}, {"disk", Op::In, {"hdd"}}}).Info(), false});
  cases.push_back({"terms ORed",
                   PvBuilder("pv")
                                 .AffinityTerm({{"kubernetes.io/hostname", Op::In, {"node-b"}}})
                                 .AffinityTerm({{"disk", Op::Exists, {}}}).Info(),
                   true});
  cases.push_back({"matchFields see no node name", PvBuilder("pv").AffinityTerm({}, {{"metadata.name", Op::In, {"node-a"}}}).Info(), false});
  cases.push_back({"an empty term matches nothing", PvBuilder("pv").AffinityTerm({}).Info(), false});
  for (auto& c : cases) {
    INFO(c.name);
    Snapshot snap;
    snap.UpsertPersistentVolume(c.pv);
    snap.UpsertPersistentVolumeClaim(PvcBuilder("data").BoundTo("pv").Info());
    PluginStatus s = PreFilterThenFilter(plugins::VolumeBinding(), MakePod().Volume(ClaimVolume("data")).Info(), snap, node_a);
    if (c.fits) {
      CHECK(s.IsSuccess());
    } else {
      CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
      CHECK(s.reasons() == std::vector<std::string>{"node(s) had volume node affinity conflict"});
    }
  }
}

TEST_CASE("VolumeBinding: hostname affinity narrows the nodes to visit", "[volumes]") {
  using plugins::VolumeHostnames;
  constexpr const char* kHost = "kubernetes.io/hostname";
  CHECK(VolumeHostnames(PvBuilder("pv").Info()).empty());
  CHECK(VolumeHostnames(PvBuilder("pv").AffinityTerm({{kHost, Op::In, {"a", "b"}}}).Info()) ==
        std::set<std::string>{"a", "b"});
  CHECK(VolumeHostnames(PvBuilder("pv").AffinityTerm({{kHost, Op::In, {"a", "b"}}, {kHost, Op::In, {"b", "c"}}}).Info()) ==
        std::set<std::string>{"b"});
  CHECK(VolumeHostnames(PvBuilder("pv").AffinityTerm({{kHost, Op::In, {"a"}}}).AffinityTerm({{kHost, Op::In, {"c"}}}).Info()) ==
        std::set<std::string>{"a", "c"});
  CHECK(VolumeHostnames(PvBuilder("pv").AffinityTerm({{kHost, Op::NotIn, {"a"}}}).Info()).empty());
  CHECK(VolumeHostnames(PvBuilder("pv").AffinityTerm({{"rack", Op::In, {"1"}}}).Info()).empty());

  Snapshot snap;
  snap.UpsertPersistentVolume(PvBuilder("on-ab").AffinityTerm({{kHost, Op::In, {"a", "b"}}}).Info());
  snap.UpsertPersistentVolume(PvBuilder("on-bc").AffinityTerm({{kHost, Op::In, {"b", "c"}}}).Info());
  snap.UpsertPersistentVolume(PvBuilder("on-c").AffinityTerm({{kHost, Op::In, {"c"}}}).Info());
  snap.UpsertPersistentVolume(PvBuilder("anywhere").Info());
  for (const char* claim : {"on-ab", "on-bc", "on-c", "anywhere"}) {
    snap.UpsertPersistentVolumeClaim(PvcBuilder(claim).BoundTo(claim).Info());
  }
  snap.UpsertPersistentVolumeClaim(PvcBuilder("dangling").BoundTo("gone").Info());
  auto prefilter = [&](PodInfo pod) {
    CycleState state;
    return plugins::VolumeBinding().PreFilter(state, pod, snap);
  };
  CHECK_FALSE(prefilter(MakePod().Volume(ClaimVolume("anywhere")).Info()).node_names.has_value());
  CHECK(prefilter(MakePod().Volume(ClaimVolume("on-ab")).Volume(ClaimVolume("anywhere")).Info()).node_names ==
        std::vector<std::string>{"a", "b"});
  CHECK(prefilter(MakePod().Volume(ClaimVolume("on-ab")).Volume(ClaimVolume("on-bc")).Info()).node_names ==
        std::vector<std::string>{"b"});
  CHECK_FALSE(prefilter(MakePod().Volume(ClaimVolume("on-ab")).Volume(ClaimVolume("dangling")).Info()).node_names.has_value());
  PreFilterResult none = prefilter(MakePod().Volume(ClaimVolume("on-ab")).Volume(ClaimVolume("on-c")).Info());
  CHECK(none.status.code() == PluginCode::kUnschedulableAndUnresolvable);
  CHECK(none.status.reasons() == std::vector<std::string>{"node(s) didn't satisfy plugin VolumeBinding"});
}

TEST_CASE("VolumeBinding: which claims are bound, and claims it rejects", "[volumes]") {
  Snapshot snap;
  snap.UpsertPersistentVolume(PvBuilder("pv-mutual").ClaimRef("default", "mutual").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-elsewhere").ClaimRef("default", "someone-else").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-phase").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("mutual").VolumeName("pv-mutual").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("phase").VolumeName("pv-phase").Phase(api::PersistentVolumeClaimPhase::Bound).Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("prebound").VolumeName("pv-elsewhere").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("pending").StorageClass("standard").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("dangling").BoundTo("gone").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("lost").VolumeName("gone").Phase(api::PersistentVolumeClaimPhase::Lost).Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("deleting").BoundTo("pv-phase").Deleting().Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("pod-mine").BoundTo("pv-phase").ControlledBy("uid-pod").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("pod-theirs").BoundTo("pv-phase").ControlledBy("uid-other").Info());
  NodeInfo node = MakeNode().Name("n1").Info();
  plugins::VolumeBinding p;

  struct Case {
    const char* name;
    PodInfo pod;
    PluginCode code;
    std::string reason;
  };
  std::vector<Case> cases;
  cases.push_back({"claimRef names the claim back", MakePod().Volume(ClaimVolume("mutual")).Info(), PluginCode::kSuccess, ""});
  cases.push_back({"status.phase Bound", MakePod().Volume(ClaimVolume("phase")).Info(), PluginCode::kSuccess, ""});
  cases.push_back({"volumeName whose volume is claimed by another", MakePod().Volume(ClaimVolume("prebound")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims"});
  cases.push_back({"unbound, with a storage class podflow does not know", MakePod().Volume(ClaimVolume("pending")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims"});
  cases.push_back({"bound to a volume that does not exist", MakePod().Volume(ClaimVolume("dangling")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable,
                   "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"});
  cases.push_back({"missing claim", MakePod().Volume(ClaimVolume("nope")).Info(), PluginCode::kUnschedulableAndUnresolvable,
                   "persistentvolumeclaim \"nope\" not found"});
  cases.push_back({"lost claim", MakePod().Volume(ClaimVolume("lost")).Info(), PluginCode::kUnschedulableAndUnresolvable,
                   "persistentvolumeclaim \"lost\" bound to non-existent persistentvolume \"gone\""});
  cases.push_back({"claim being deleted", MakePod().Volume(ClaimVolume("deleting")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"deleting\" is being deleted"});
  cases.push_back({"ephemeral claim not created yet", MakePod().Volume(EphemeralVolume("scratch")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable,
                   "waiting for ephemeral volume controller to create the persistentvolumeclaim \"pod-scratch\""});
  cases.push_back({"ephemeral claim the pod controls", MakePod().Volume(EphemeralVolume("mine")).Info(), PluginCode::kSuccess, ""});
  cases.push_back({"ephemeral claim of another pod", MakePod().Volume(EphemeralVolume("theirs")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable,
                   "PVC default/pod-theirs was not created for pod default/pod (pod is not owner)"});
  cases.push_back({"the first failing claim in volume order speaks",
                   MakePod().Volume(ClaimVolume("pending")).Volume(ClaimVolume("nope")).Info(),
                   PluginCode::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"nope\" not found"});
  cases.push_back({"no claims", MakePod().Volume(EmptyDirVolume("tmp")).Info(), PluginCode::kSuccess, ""});
  for (const auto& c : cases) {
    INFO(c.name);
    PluginStatus s = PreFilterThenFilter(p, c.pod, snap, node);
    CHECK(s.code() == c.code);
    if (c.code != PluginCode::kSuccess) CHECK(s.reasons() == std::vector<std::string>{c.reason});
  }
}

TEST_CASE("Volume plugins in the default profile", "[volumes]") {
  auto registry = plugins::NewInTreeRegistry();
  REQUIRE(registry.ok());
  ProfileConfig config = DefaultProfileConfig();
  const std::vector<std::string> volume_plugins = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"};
  auto fit = std::find(config.filter.begin(), config.filter.end(), "NodeResourcesFit");
  REQUIRE(fit != config.filter.end());
  REQUIRE(config.filter.end() - fit > 4);
  CHECK(std::vector<std::string>(fit + 1, fit + 5) == volume_plugins);
  auto profile = Profile::Build(*registry, config);
  REQUIRE(profile.ok());

  Snapshot snap;
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(snap.UpsertNode(MakeNode().Name(name).Cpu("4").Memory("8Gi").Label("kubernetes.io/hostname", name).Info()).ok());
  }
  snap.UpsertPersistentVolume(PvBuilder("local-b").AffinityTerm({{"kubernetes.io/hostname", Op::In, {"b"}}}).Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("data").BoundTo("local-b").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("pending").Info());

  SECTION("a local volume pins the pod to its node") {
    auto d = Schedule(*profile, MakePod().Name("p").Volume(ClaimVolume("data")).Info(), snap);
    REQUIRE(d.ok());
    CHECK(d->node == "b");
  }
  SECTION("an unbound claim rejects every node at PreFilter") {
    auto d = Schedule(*profile, MakePod().Name("p").Volume(ClaimVolume("pending")).Info(), snap);
    REQUIRE(d.ok());
    CHECK_FALSE(d->scheduled());
    CHECK(d->message.rfind("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.", 0) == 0);
  }
  SECTION("a disk held by a pod on b keeps the pod off b") {
    PodInfo holder = MakePod().Name("holder").Volume(EbsVolume("vol-1")).Info();
    holder.node_name = "b";
    REQUIRE(snap.AddPod(std::move(holder)).ok());
    auto d = Schedule(*profile, MakePod().Name("p").Volume(ClaimVolume("data")).Volume(EbsVolume("vol-1")).Info(), snap);
    REQUIRE(d.ok());
    CHECK_FALSE(d->scheduled());
    CHECK(d->message.find("1 node(s) had no available disk") != std::string::npos);
  }
  SECTION("a volume whose affinity is not by hostname: every node is filtered") {
    snap.UpsertPersistentVolume(PvBuilder("rack-1").AffinityTerm({{"rack", Op::In, {"1"}}}).Info());
    snap.UpsertPersistentVolumeClaim(PvcBuilder("racked").BoundTo("rack-1").Info());
    auto d = Schedule(*profile, MakePod().Name("p").Volume(ClaimVolume("racked")).Info(), snap);
    REQUIRE(d.ok());
    CHECK_FALSE(d->scheduled());
    CHECK(d->verdicts.size() == 3);
    CHECK(d->message.rfind("0/3 nodes are available: 3 node(s) had volume node affinity conflict.", 0) == 0);
  }
}

}  // namespace
}  // namespace podflow::scheduler
