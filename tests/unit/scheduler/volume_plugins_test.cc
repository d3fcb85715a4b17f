// Pod volumes in PodInfo, VolumeRestrictions and NodeVolumeLimits.
#include <catch2/catch.hpp>

#include "model/codec.h"
#include "scheduler/plugins/node_volume_limits/node_volume_limits.h"
#include "scheduler/plugins/volume_restrictions/volume_restrictions.h"
#include "volume_builders.h"

namespace podflow::scheduler {
namespace {

using namespace testing;
using Kind = VolumeSourceKind;

TEST_CASE("PodInfo keeps each volume's source, identity, read-only flag and claim", "[volumes]") {
  PodInfo pod = MakePod()
                    .Name("web")
                    .Volume(GceVolume("pd-1", true))
                    .Volume(EbsVolume("vol-1"))
                    .Volume(RbdVolume({"m1", "m2"}, "rbd", "img"))
                    .Volume(IscsiVolume("iqn.2001-04.com.example:disk", true))
                    .Volume(AzureVolume("disk-1"))
                    .Volume(ClaimVolume("data", true))
                    .Volume(EphemeralVolume("scratch"))
                    .Volume(EmptyDirVolume("tmp"))
                    .Info();
  REQUIRE(pod.volumes.size() == 8);
  CHECK(pod.volumes[0].kind == Kind::kGcePersistentDisk);
  CHECK(pod.volumes[0].id == "pd-1");
  CHECK(pod.volumes[0].read_only);
  CHECK(pod.volumes[1].kind == Kind::kAwsElasticBlockStore);
  CHECK(pod.volumes[1].id == "vol-1");
  CHECK_FALSE(pod.volumes[1].read_only);
  CHECK(pod.volumes[2].kind == Kind::kRbd);
  CHECK(pod.volumes[2].id == "img");
  CHECK(pod.volumes[2].rbd_pool == "rbd");
  CHECK(pod.volumes[2].rbd_monitors == std::vector<std::string>{"m1", "m2"});
  CHECK(pod.volumes[3].kind == Kind::kIscsi);
  CHECK(pod.volumes[3].id == "iqn.2001-04.com.example:disk");
  CHECK(pod.volumes[4].kind == Kind::kAzureDisk);
  CHECK(pod.volumes[4].id == "disk-1");
  CHECK(pod.volumes[5].kind == Kind::kPersistentVolumeClaim);
  CHECK(pod.volumes[5].claim_name == "data");
  CHECK(pod.volumes[5].read_only);
  CHECK(pod.volumes[6].kind == Kind::kEphemeral);
  CHECK(pod.volumes[6].claim_name == "web-scratch");
  CHECK(pod.volumes[7].kind == Kind::kOther);
}

// The pod `existing` on node "n1", and the verdict for `incoming` there.
PluginStatus RestrictionsVerdict(PodInfo existing, const PodInfo& incoming) {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("n1").Info()).ok());
  existing.uid = "uid-old";
  existing.node_name = "n1";
  REQUIRE(snap.AddPod(std::move(existing)).ok());
  return PreFilterThenFilter(plugins::VolumeRestrictions(), incoming, snap, *snap.FindNode("n1"));
}

TEST_CASE("VolumeRestrictions: each source kind's conflict rule", "[volumes]") {
  struct Case {
    const char* name;
    PodInfo existing;
    PodInfo incoming;
    bool conflict;
  };
  std::vector<Case> cases;
  cases.push_back({"GCE PD same disk, both read-write", MakePod().Volume(GceVolume("pd")).Info(), MakePod().Volume(GceVolume("pd")).Info(), true});
  cases.push_back({"GCE PD same disk, one read-only", MakePod().Volume(GceVolume("pd", true)).Info(), MakePod().Volume(GceVolume("pd")).Info(), true});
  cases.push_back({"GCE PD same disk, both read-only", MakePod().Volume(GceVolume("pd", true)).Info(), MakePod().Volume(GceVolume("pd", true)).Info(), false});
  cases.push_back({"GCE PD other disk", MakePod().Volume(GceVolume("pd")).Info(), MakePod().Volume(GceVolume("pd2")).Info(), false});
  cases.push_back({"EBS same volume", MakePod().Volume(EbsVolume("vol")).Info(), MakePod().Volume(EbsVolume("vol")).Info(), true});
  cases.push_back({"EBS same volume, both read-only", MakePod().Volume(EbsVolume("vol", true)).Info(), MakePod().Volume(EbsVolume("vol", true)).Info(), true});
  cases.push_back({"EBS other volume", MakePod().Volume(EbsVolume("vol")).Info(), MakePod().Volume(EbsVolume("vol2")).Info(), false});
  cases.push_back({"RBD shared monitor, same pool and image", MakePod().Volume(RbdVolume({"a", "b"}, "p", "i")).Info(),
                   MakePod().Volume(RbdVolume({"b", "c"}, "p", "i")).Info(), true});
  cases.push_back({"RBD same image, both read-only", MakePod().Volume(RbdVolume({"a"}, "p", "i", true)).Info(),
                   MakePod().Volume(RbdVolume({"a"}, "p", "i", true)).Info(), false});
  cases.push_back({"RBD no shared monitor", MakePod().Volume(RbdVolume({"a"}, "p", "i")).Info(),
                   MakePod().Volume(RbdVolume({"b"}, "p", "i")).Info(), false});
  cases.push_back({"RBD other pool", MakePod().Volume(RbdVolume({"a"}, "p", "i")).Info(), MakePod().Volume(RbdVolume({"a"}, "q", "i")).Info(), false});
  cases.push_back({"RBD other image", MakePod().Volume(RbdVolume({"a"}, "p", "i")).Info(), MakePod().Volume(RbdVolume({"a"}, "p", "j")).Info(), false});
  cases.push_back({"iSCSI same IQN", MakePod().Volume(IscsiVolume("iqn.x")).Info(), MakePod().Volume(IscsiVolume("iqn.x")).Info(), true});
  cases.push_back({"iSCSI same IQN, other lun and portal (IQN alone decides)",
                   MakePod().Volume(IscsiVolume("iqn.x", false, 0, "10.0.0.1:3260")).Info(),
                   MakePod().Volume(IscsiVolume("iqn.x", false, 1, "10.0.0.2:3260")).Info(), true});
  cases.push_back({"iSCSI same IQN, both read-only", MakePod().Volume(IscsiVolume("iqn.x", true)).Info(),
                   MakePod().Volume(IscsiVolume("iqn.x", true)).Info(), false});
  cases.push_back({"iSCSI same IQN, one read-only", MakePod().Volume(IscsiVolume("iqn.x", true)).Info(),
                   MakePod().Volume(IscsiVolume("iqn.x")).Info(), true});
  cases.push_back({"iSCSI other IQN", MakePod().Volume(IscsiVolume("iqn.x")).Info(), MakePod().Volume(IscsiVolume("iqn.y")).Info(), false});
  cases.push_back({"same name, different kinds", MakePod().Volume(GceVolume("x")).Info(), MakePod().Volume(EbsVolume("x")).Info(), false});
  cases.push_back({"Azure disks are not compared", MakePod().Volume(AzureVolume("d")).Info(), MakePod().Volume(AzureVolume("d")).Info(), false});
  cases.push_back({"no volumes on the node", MakePod().Info(), MakePod().Volume(EbsVolume("vol")).Info(), false});
  for (auto& c : cases) {
    INFO(c.name);
    PluginStatus s = RestrictionsVerdict(c.existing, c.incoming);
    if (c.conflict) {
      CHECK(s.code() == PluginCode::kUnschedulable);
      CHECK(s.reasons() == std::vector<std::string>{"node(s) had no available disk"});
    } else {
      CHECK(s.IsSuccess());
    }
  }
}

TEST_CASE("VolumeRestrictions: ReadWriteOncePod claims", "[volumes]") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("n1").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("n2").Info()).ok());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("once").AccessMode(api::PersistentVolumeAccessMode::ReadWriteOncePod).Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("once", "other").AccessMode(api::PersistentVolumeAccessMode::ReadWriteOncePod).Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("shared").AccessMode(api::PersistentVolumeAccessMode::ReadWriteOnce).Info());
  REQUIRE(snap.AddPod(MakePod().Name("holder").Node("n1").Volume(ClaimVolume("once")).Volume(ClaimVolume("shared")).Info()).ok());
  plugins::VolumeRestrictions p;

  SECTION("a claim in use by a pod anywhere rejects every node, resolvable by preemption") {
    PodInfo pod = MakePod().Name("new").Volume(ClaimVolume("once")).Info();
    for (const char* node : {"n1", "n2"}) {
      PluginStatus s = PreFilterThenFilter(p, pod, snap, *snap.FindNode(node));
      CHECK(s.code() == PluginCode::kUnschedulable);
      CHECK(s.reasons() == std::vector<std::string>{
                               "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"});
    }
  }
  SECTION("a ReadWriteOnce claim may be shared") {
    CHECK(PreFilterThenFilter(p, MakePod().Name("new").Volume(ClaimVolume("shared")).Info(), snap, *snap.FindNode("n1")).IsSuccess());
  }
  SECTION("the same claim name in another namespace is another claim") {
    PodInfo pod = MakePod().Name("new").Namespace("other").Volume(ClaimVolume("once")).Info();
    CHECK(PreFilterThenFilter(p, pod, snap, *snap.FindNode("n2")).IsSuccess());
  }
  SECTION("once the holder is gone the claim is free") {
    REQUIRE(snap.RemovePod("uid-holder").ok());
    CHECK(PreFilterThenFilter(p, MakePod().Name("new").Volume(ClaimVolume("once")).Info(), snap, *snap.FindNode("n1")).IsSuccess());
  }
  SECTION("preemption's trial: without the holder its node passes, the others do not") {
    PodInfo pod = MakePod().Name("new").Volume(ClaimVolume("once")).Info();
    CycleState state;
    REQUIRE(p.PreFilter(state, pod, snap).status.IsSuccess());
    NodeInfo trial = *snap.FindNode("n1");
    REQUIRE(trial.RemovePod("uid-holder").ok());
    CHECK(p.Filter(state, pod, trial).IsSuccess());
    CHECK(p.Filter(state, pod, *snap.FindNode("n2")).code() == PluginCode::kUnschedulable);
  }
  SECTION("a pod nominated to the node with the claim takes it") {
    REQUIRE(snap.RemovePod("uid-holder").ok());
    PodInfo pod = MakePod().Name("new").Volume(ClaimVolume("once")).Info();
    CycleState state;
    REQUIRE(p.PreFilter(state, pod, snap).status.IsSuccess());
    CHECK(p.Filter(state, pod, *snap.FindNode("n2")).IsSuccess());
    NodeInfo with_nominated = *snap.FindNode("n2");
    with_nominated.AddPod(std::make_shared<const PodInfo>(MakePod().Name("nominated").Volume(ClaimVolume("once")).Info()));
    CHECK(p.Filter(state, pod, with_nominated).code() == PluginCode::kUnschedulable);
  }
  SECTION("a claim that does not exist") {
    CycleState state;
    PreFilterResult r = p.PreFilter(state, MakePod().Name("new").Volume(ClaimVolume("nope")).Info(), snap);
    CHECK(r.status.code() == PluginCode::kUnschedulableAndUnresolvable);
    CHECK(r.status.reasons() == std::vector<std::string>{"persistentvolumeclaim \"nope\" not found"});
  }
  SECTION("Filter without PreFilter is an error") {
    CycleState state;
    CHECK(p.Filter(state, MakePod().Info(), *snap.FindNode("n1")).code() == PluginCode::kError);
  }
}

// Node "n1" (built by `node`) holding one pod with `existing` EBS volumes
// vol-0 .. vol-(existing-1).
Snapshot NodeWithEbs(NodeInfo node, int existing) {
  Snapshot snap;
  node.name = "n1";
  REQUIRE(snap.UpsertNode(std::move(node)).ok());
  PodBuilder holder;
  holder.Name("holder").Node("n1");
  for (int i = 0; i < existing; ++i) holder.Volume(EbsVolume("vol-" + std::to_string(i)));
  REQUIRE(snap.AddPod(holder.Info()).ok());
  return snap;
}

PluginStatus LimitsVerdict(const Snapshot& snap, const PodInfo& incoming) {
  return PreFilterThenFilter(plugins::NodeVolumeLimits(), incoming, snap, *snap.FindNode("n1"));
}

void CheckExceeded(const PluginStatus& s) {
  CHECK(s.code() == PluginCode::kUnschedulable);
  CHECK(s.reasons() == std::vector<std::string>{"node(s) exceed max volume count"});
}

TEST_CASE("NodeVolumeLimits: in-tree defaults and allocatable overrides", "[volumes]") {
  struct Case {
    const char* name;
    NodeInfo node;
    int existing;       // EBS volumes already attached
    bool reuse;         // the new pod mounts vol-0 instead of a new volume
    bool exceeded;
  };
  std::vector<Case> cases;
  cases.push_back({"EBS default 39: 38 + 1", MakeNode().Info(), 38, false, false});
  cases.push_back({"EBS default 39: 39 + 1", MakeNode().Info(), 39, false, true});
  cases.push_back({"EBS: a volume already attached adds nothing", MakeNode().Info(), 39, true, false});
  cases.push_back({"Nitro (m5) 25: 24 + 1", MakeNode().Label("node.kubernetes.io/instance-type", "m5.large").Info(), 24, false, false});
  cases.push_back({"Nitro (m5) 25: 25 + 1", MakeNode().Label("node.kubernetes.io/instance-type", "m5.large").Info(), 25, false, true});
  cases.push_back({"Nitro by the beta label (c5)", MakeNode().Label("beta.kubernetes.io/instance-type", "c5.xlarge").Info(), 25, false, true});
  cases.push_back({"not Nitro (m4) keeps 39", MakeNode().Label("node.kubernetes.io/instance-type", "m4.large").Info(), 25, false, false});
  cases.push_back({"allocatable override 2: 1 + 1", MakeNode().Allocatable("attachable-volumes-aws-ebs", "2").Info(), 1, false, false});
  cases.push_back({"allocatable override 2: 2 + 1", MakeNode().Allocatable("attachable-volumes-aws-ebs", "2").Info(), 2, false, true});
  cases.push_back({"allocatable override beats Nitro",
                   MakeNode().Label("node.kubernetes.io/instance-type", "m5.large").Allocatable("attachable-volumes-aws-ebs", "50").Info(),
                   39, false, false});
  cases.push_back({"in-tree counts compare totals: 3 attached over a limit of 2, nothing new",
                   MakeNode().Allocatable("attachable-volumes-aws-ebs", "2").Info(), 3, true, true});
  for (auto& c : cases) {
    INFO(c.name);
    Snapshot snap = NodeWithEbs(c.node, c.existing);
    PluginStatus s = LimitsVerdict(snap, MakePod().Name("new").Volume(EbsVolume(c.reuse ? "vol-0" : "vol-new")).Info());
    if (c.exceeded) {
      CheckExceeded(s);
    } else {
      CHECK(s.IsSuccess());
    }
  }
}

TEST_CASE("NodeVolumeLimits: GCE PD 16 and Azure Disk 16, each kind counted apart", "[volumes]") {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("n1").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("n2").Allocatable("attachable-volumes-gce-pd", "20").Info()).ok());
  for (const char* node : {"n1", "n2"}) {
    PodBuilder holder;
    holder.Name(std::string("holder-") + node).Node(node);
    for (int i = 0; i < 16; ++i) {
      holder.Volume(GceVolume("pd-" + std::to_string(i))).Volume(AzureVolume("disk-" + std::to_string(i)));
    }
    for (int i = 0; i < 39; ++i) holder.Volume(EbsVolume("vol-" + std::to_string(i)));
    REQUIRE(snap.AddPod(holder.Info()).ok());
  }
  plugins::NodeVolumeLimits p;
  CheckExceeded(PreFilterThenFilter(p, MakePod().Volume(GceVolume("pd-new")).Info(), snap, *snap.FindNode("n1")));
  CheckExceeded(PreFilterThenFilter(p, MakePod().Volume(AzureVolume("disk-new")).Info(), snap, *snap.FindNode("n1")));
  CHECK(PreFilterThenFilter(p, MakePod().Volume(GceVolume("pd-new")).Info(), snap, *snap.FindNode("n2")).IsSuccess());
  CHECK(PreFilterThenFilter(p, MakePod().Volume(GceVolume("pd-3")).Info(), snap, *snap.FindNode("n1")).IsSuccess());
  CHECK(PreFilterThenFilter(p, MakePod().Volume(EmptyDirVolume("tmp")).Info(), snap, *snap.FindNode("n1")).IsSuccess());
}

TEST_CASE("NodeVolumeLimits: claims count by the source of their bound volume", "[volumes]") {
  Snapshot snap = NodeWithEbs(MakeNode()
                                  .Allocatable("attachable-volumes-aws-ebs", "2")
                                  .Allocatable("attachable-volumes-csi-ebs.csi.aws.com", "1")
                                  .Info(),
                              1);  // vol-0 attached
  snap.UpsertPersistentVolume(PvBuilder("pv-ebs-new").Ebs("vol-new").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-ebs-0").Ebs("vol-0").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-csi-1").Csi("ebs.csi.aws.com", "h1").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-csi-2").Csi("ebs.csi.aws.com", "h2").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-other").Csi("other.csi", "h9").Info());
  snap.UpsertPersistentVolume(PvBuilder("pv-csi-3").Csi("ebs.csi.aws.com", "h3").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("csi-3").BoundTo("pv-csi-3").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("ebs-new").BoundTo("pv-ebs-new").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("ebs-0").BoundTo("pv-ebs-0").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("csi-1").BoundTo("pv-csi-1").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("csi-2").BoundTo("pv-csi-2").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("other").BoundTo("pv-other").Info());
  snap.UpsertPersistentVolumeClaim(PvcBuilder("unbound").Info());
  REQUIRE(snap.AddPod(MakePod().Name("csi-holder").Node("n1").Volume(ClaimVolume("csi-1")).Info()).ok());

  struct Case {
    const char* name;
    PodInfo pod;
    bool exceeded;
  };
  std::vector<Case> cases;
  cases.push_back({"EBS limit 2: vol-0 + a claim on vol-new", MakePod().Volume(ClaimVolume("ebs-new")).Info(), false});
  cases.push_back({"EBS limit 2: vol-0 + vol-new + vol-x",
                   MakePod().Volume(ClaimVolume("ebs-new")).Volume(EbsVolume("vol-x")).Info(), true});
  cases.push_back({"a claim on an attached disk is the same volume",
                   MakePod().Volume(ClaimVolume("ebs-0")).Volume(EbsVolume("vol-x")).Info(), false});
  cases.push_back({"CSI limit 1: h1 attached, h2 more", MakePod().Volume(ClaimVolume("csi-2")).Info(), true});
  cases.push_back({"CSI: the attached handle again", MakePod().Volume(ClaimVolume("csi-1")).Info(), false});
  cases.push_back({"CSI driver without a limit", MakePod().Volume(ClaimVolume("other")).Info(), false});
  cases.push_back({"an unbound claim counts for nothing",
                   MakePod().Volume(ClaimVolume("unbound")).Volume(ClaimVolume("ebs-new")).Info(), false});
  for (auto& c : cases) {
    INFO(c.name);
    PluginStatus s = LimitsVerdict(snap, c.pod);
    if (c.exceeded) {
      CheckExceeded(s);
    } else {
      CHECK(s.IsSuccess());
    }
  }

  SECTION("a CSI limit binds new volumes only: at the limit, the attached handle passes") {
    REQUIRE(snap.AddPod(MakePod().Name("csi-holder-2").Node("n1").Volume(ClaimVolume("csi-2")).Info()).ok());
    CHECK(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("csi-1")).Info()).IsSuccess());
  }
  SECTION("the node's CSINode count comes before its allocatable entry, as kube-scheduler reads it") {
    CsiNodeInfo csi;
    csi.node = "n1";
    csi.attach_limits["ebs.csi.aws.com"] = 2;
    csi.attach_limits["other.csi"] = 0;
    snap.UpsertCsiNode(csi);
    CHECK(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("csi-2")).Info()).IsSuccess());
    CheckExceeded(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("other")).Info()));
    CheckExceeded(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("csi-2")).Volume(ClaimVolume("csi-3")).Info()));
    // Another node's CSINode says nothing about n1.
    csi.node = "n2";
    csi.attach_limits["ebs.csi.aws.com"] = 5;
    snap.UpsertCsiNode(csi);
    CheckExceeded(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("csi-2")).Volume(ClaimVolume("csi-3")).Info()));
    // Without its CSINode, n1 falls back to allocatable (1).
    REQUIRE(snap.RemoveCsiNode("n1").ok());
    CheckExceeded(LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("csi-2")).Info()));
    CHECK(snap.RemoveCsiNode("n1").code() == Code::kNotFound);
  }
  SECTION("a claim of the new pod that does not exist") {
    PluginStatus s = LimitsVerdict(snap, MakePod().Name("new").Volume(ClaimVolume("nope")).Info());
    CHECK(s.code() == PluginCode::kUnschedulableAndUnresolvable);
    CHECK(s.reasons() == std::vector<std::string>{"looking up PVC default/nope: persistentvolumeclaim \"nope\" not found"});
  }
}

TEST_CASE("NodeVolumeLimits: Nitro instance types", "[volumes]") {
  CHECK(plugins::IsNitroInstanceType("m5.large"));
  CHECK(plugins::IsNitroInstanceType("c5d.2xlarge"));
  CHECK(plugins::IsNitroInstanceType("r5.metal"));
  CHECK(plugins::IsNitroInstanceType("t3.micro"));
  CHECK(plugins::IsNitroInstanceType("z1d.large"));
  CHECK_FALSE(plugins::IsNitroInstanceType("m4.large"));
  CHECK_FALSE(plugins::IsNitroInstanceType("t2.micro"));
  CHECK_FALSE(plugins::IsNitroInstanceType("x5.large"));
  VolumeCatalog catalog;
  CHECK(plugins::VolumeLimit(MakeNode().Info(), "attachable-volumes-csi-x", catalog) == std::nullopt);
  CHECK(plugins::VolumeLimit(MakeNode().Info(), "attachable-volumes-cinder", catalog) == 256);
}

TEST_CASE("A CSINode manifest gives each driver's allocatable count; drivers without one give none", "[volumes]") {
  auto docs = model::DecodeManifests(R"(apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-1}
spec:
  drivers:
  - name: ebs.csi.aws.com
    nodeID: i-0abc
    allocatable: {count: 25}
    topologyKeys: [topology.ebs.csi.aws.com/zone]
  - name: hostpath.csi.k8s.io
    nodeID: node-1
)");
  REQUIRE(docs.ok());
  REQUIRE((*docs)[0].status.ok());
  const std::string& bytes = (*docs)[0].object.bytes;
  CsiNodeInfo info = CsiNodeInfoFromCsiNode(*flatbuffers::GetRoot<api::CSINode>(bytes.data()));
  CHECK(info.node == "node-1");
  CHECK(info.attach_limits == std::map<std::string, int64_t, std::less<>>{{"ebs.csi.aws.com", 25}});
}

}  // namespace
}  // namespace podflow::scheduler
