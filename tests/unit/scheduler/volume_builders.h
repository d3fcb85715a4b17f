// Builders for the volume plugins' tests: pod volume sources, persistent
// volumes and claims as stored bytes, read back through the scheduler's own
// parsers (PodInfoFromPod, PersistentVolumeInfoFromPv, ClaimInfoFromPvc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "builders.h"
#include "storage_generated.h"

namespace podflow::scheduler::testing {

inline std::unique_ptr<api::VolumeT> NamedVolume(const std::string& name) {
  auto v = std::make_unique<api::VolumeT>();
  v->name = name;
  return v;
}

inline std::unique_ptr<api::VolumeT> GceVolume(const std::string& pd, bool read_only = false) {
  auto v = NamedVolume("gce-" + pd);
  v->gce_persistent_disk = std::make_unique<api::GCEPersistentDiskVolumeSourceT>();
  v->gce_persistent_disk->pd_name = pd;
  v->gce_persistent_disk->read_only = read_only;
  return v;
}

inline std::unique_ptr<api::VolumeT> EbsVolume(const std::string& id, bool read_only = false) {
  auto v = NamedVolume("ebs-" + id);
  v->aws_elastic_block_store = std::make_unique<api::AWSElasticBlockStoreVolumeSourceT>();
  v->aws_elastic_block_store->volume_id = id;
  v->aws_elastic_block_store->read_only = read_only;
  return v;
}

inline std::unique_ptr<api::VolumeT> AzureVolume(const std::string& disk) {
  auto v = NamedVolume("azure-" + disk);
  v->azure_disk = std::make_unique<api::AzureDiskVolumeSourceT>();
  v->azure_disk->disk_name = disk;
  return v;
}

inline std::unique_ptr<api::VolumeT> RbdVolume(std::vector<std::string> monitors, const std::string& pool,
                                               const std::string& image, bool read_only = false) {
  auto v = NamedVolume("rbd-" + image);
  v->rbd = std::make_unique<api::RBDVolumeSourceT>();
  v->rbd->monitors = std::move(monitors);
  v->rbd->pool = pool;
  v->rbd->image = image;
  v->rbd->read_only = read_only;
  return v;
}

inline std::unique_ptr<api::VolumeT> IscsiVolume(const std::string& iqn, bool read_only = false, int32_t lun = 0,
                                                 const std::string& portal = "10.0.0.1:3260") {
  auto v = NamedVolume("iscsi");
  v->iscsi = std::make_unique<api::ISCSIVolumeSourceT>();
  v->iscsi->iqn = iqn;
  v->iscsi->lun = lun;
  v->iscsi->target_portal = portal;
  v->iscsi->read_only = read_only;
  return v;
}

inline std::unique_ptr<api::VolumeT> ClaimVolume(const std::string& claim, bool read_only = false) {
  auto v = NamedVolume("pvc-" + claim);
  v->persistent_volume_claim = std::make_unique<api::PersistentVolumeClaimVolumeSourceT>();
  v->persistent_volume_claim->claim_name = claim;
  v->persistent_volume_claim->read_only = read_only;
  return v;
}

inline std::unique_ptr<api::VolumeT> EphemeralVolume(const std::string& name) {
  auto v = NamedVolume(name);
  v->ephemeral = std::make_unique<api::EphemeralVolumeSourceT>();
  return v;
}

inline std::unique_ptr<api::VolumeT> EmptyDirVolume(const std::string& name) {
  auto v = NamedVolume(name);
  v->empty_dir = std::make_unique<api::EmptyDirVolumeSourceT>();
  return v;
}

class PvBuilder {
 public:
  explicit PvBuilder(const std::string& name) {
    pv_.api_version = "v1";
    pv_.kind = "PersistentVolume";
    pv_.metadata = std::make_unique<api::ObjectMetaT>();
    pv_.metadata->name = name;
    pv_.spec = std::make_unique<api::PersistentVolumeSpecT>();
  }
  PvBuilder& Label(const std::string& k, const std::string& v) {
    PutString(pv_.metadata->labels, k, v);
    return *this;
  }
  PvBuilder& Ebs(const std::string& id) {
    pv_.spec->aws_elastic_block_store = std::make_unique<api::AWSElasticBlockStoreVolumeSourceT>();
    pv_.spec->aws_elastic_block_store->volume_id = id;
    return *this;
  }
  PvBuilder& Gce(const std::string& pd) {
    pv_.spec->gce_persistent_disk = std::make_unique<api::GCEPersistentDiskVolumeSourceT>();
    pv_.spec->gce_persistent_disk->pd_name = pd;
    return *this;
  }
  PvBuilder& Csi(const std::string& driver, const std::string& handle) {
    pv_.spec->csi = std::make_unique<api::CSIPersistentVolumeSourceT>();
    pv_.spec->csi->driver = driver;
    pv_.spec->csi->volume_handle = handle;
    return *this;
  }
  PvBuilder& ClaimRef(const std::string& ns, const std::string& name) {
    pv_.spec->claim_ref = std::make_unique<api::ObjectReferenceT>();
    pv_.spec->claim_ref->namespace_ = ns;
    pv_.spec->claim_ref->name = name;
    return *this;
  }
  // Adds a term (ORed with the others) to spec.nodeAffinity.required.
  PvBuilder& AffinityTerm(std::vector<Req> expressions, std::vector<Req> fields = {}) {
    if (!pv_.spec->node_affinity) {
      pv_.spec->node_affinity = std::make_unique<api::VolumeNodeAffinityT>();
      pv_.spec->node_affinity->required = std::make_unique<api::NodeSelectorT>();
    }
    auto term = std::make_unique<api::NodeSelectorTermT>();
    for (auto& r : expressions) term->match_expressions.push_back(::podflow::testing::NodeRequirement(r));
    for (auto& r : fields) term->match_fields.push_back(::podflow::testing::NodeRequirement(r));
    pv_.spec->node_affinity->required->node_selector_terms.push_back(std::move(term));
    return *this;
  }
  PersistentVolumeInfo Info() const {
    std::string bytes = model::Pack(pv_);
    return PersistentVolumeInfoFromPv(*flatbuffers::GetRoot<api::PersistentVolume>(bytes.data()));
  }

 private:
  api::PersistentVolumeT pv_;
};

class PvcBuilder {
 public:
  explicit PvcBuilder(const std::string& name, const std::string& ns = "default") {
    pvc_.api_version = "v1";
    pvc_.kind = "PersistentVolumeClaim";
    pvc_.metadata = std::make_unique<api::ObjectMetaT>();
    pvc_.metadata->name = name;
    pvc_.metadata->namespace_ = ns;
    pvc_.metadata->uid = "uid-pvc-" + name;
    pvc_.spec = std::make_unique<api::PersistentVolumeClaimSpecT>();
  }
  // spec.volumeName with the bind-completed annotation (a fully bound claim).
  PvcBuilder& BoundTo(const std::string& pv) {
    pvc_.spec->volume_name = pv;
    return Annotation(std::string(kAnnBindCompleted), "yes");
  }
  PvcBuilder& VolumeName(const std::string& pv) { pvc_.spec->volume_name = pv; return *this; }
  PvcBuilder& StorageClass(const std::string& c) { pvc_.spec->storage_class_name = c; return *this; }
  PvcBuilder& Annotation(const std::string& k, const std::string& v) {
    PutString(pvc_.metadata->annotations, k, v);
    return *this;
  }
  PvcBuilder& AccessMode(api::PersistentVolumeAccessMode m) {
    pvc_.spec->access_modes.push_back(m);
    return *this;
  }
  PvcBuilder& Phase(api::PersistentVolumeClaimPhase p) {
    if (!pvc_.status) pvc_.status = std::make_unique<api::PersistentVolumeClaimStatusT>();
    pvc_.status->phase = p;
    return *this;
  }
  PvcBuilder& Deleting() { pvc_.metadata->deletion_timestamp = "2026-01-01T00:00:00Z"; return *this; }
  PvcBuilder& ControlledBy(const std::string& uid) {
    auto o = std::make_unique<api::OwnerReferenceT>();
    o->api_version = "v1";
    o->kind = "Pod";
    o->name = "owner";
    o->uid = uid;
    o->controller = true;
    pvc_.metadata->owner_references.push_back(std::move(o));
    return *this;
  }
  PersistentVolumeClaimInfo Info() const {
    std::string bytes = model::Pack(pvc_);
    return ClaimInfoFromPvc(*flatbuffers::GetRoot<api::PersistentVolumeClaim>(bytes.data()));
  }

 private:
  api::PersistentVolumeClaimT pvc_;
};

// A cycle of one plugin against one node: PreFilter, then (if it passed or
// skipped) Filter. Skip promises that Filter passes: that is checked.
template <typename P>
PluginStatus PreFilterThenFilter(const P& plugin, const PodInfo& pod, const Snapshot& snap, const NodeInfo& node) {
  CycleState state;
  PreFilterResult r = plugin.PreFilter(state, pod, snap);
  const bool skip = r.status.code() == PluginCode::kSkip;
  if (!r.status.IsSuccess() && !skip) return r.status;
  PluginStatus s = plugin.Filter(state, pod, node);
  if (skip) CHECK(s.IsSuccess());
  return s;
}

}  // namespace podflow::scheduler::testing
