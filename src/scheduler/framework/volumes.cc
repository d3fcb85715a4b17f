#include "scheduler/framework/volumes.h"

namespace podflow::scheduler {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

std::string ClaimKey(std::string_view namespace_, std::string_view name) {
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key.append(namespace_).append("/").append(name);
  return key;
}

}  // namespace

PersistentVolumeInfo PersistentVolumeInfoFromPv(const api::PersistentVolume& pv) {
  PersistentVolumeInfo info;
  if (const api::ObjectMeta* m = pv.metadata(); m != nullptr) {
    info.name = Str(m->name());
    info.labels = LabelsFromEntries(m->labels());
  }
  const api::PersistentVolumeSpec* spec = pv.spec();
  if (spec == nullptr) return info;
  if (const auto* gce = spec->gce_persistent_disk(); gce != nullptr) {
    info.kind = VolumeSourceKind::kGcePersistentDisk;
    info.id = Str(gce->pd_name());
  } else if (const auto* ebs = spec->aws_elastic_block_store(); ebs != nullptr) {
    info.kind = VolumeSourceKind::kAwsElasticBlockStore;
    info.id = Str(ebs->volume_id());
  } else if (const auto* azure = spec->azure_disk(); azure != nullptr) {
    info.kind = VolumeSourceKind::kAzureDisk;
    info.id = Str(azure->disk_name());
  } else if (const auto* cinder = spec->cinder(); cinder != nullptr) {
    info.kind = VolumeSourceKind::kCinder;
    info.id = Str(cinder->volume_id());
  } else if (const auto* csi = spec->csi(); csi != nullptr) {
    info.kind = VolumeSourceKind::kCsi;
    info.csi_driver = Str(csi->driver());
    info.id = Str(csi->volume_handle());
  } else if (spec->rbd() != nullptr) {
    info.kind = VolumeSourceKind::kRbd;
  } else if (spec->iscsi() != nullptr) {
    info.kind = VolumeSourceKind::kIscsi;
  }
  if (spec->node_affinity() != nullptr && spec->node_affinity()->required() != nullptr) {
    info.node_affinity = NodeSelectorFromApi(*spec->node_affinity()->required());
  }
  if (const api::ObjectReference* ref = spec->claim_ref(); ref != nullptr) {
    info.claim_namespace = Str(ref->namespace_());
    info.claim_name = Str(ref->name());
    info.claim_uid = Str(ref->uid());
  }
  return info;
}

PersistentVolumeClaimInfo ClaimInfoFromPvc(const api::PersistentVolumeClaim& pvc) {
  PersistentVolumeClaimInfo info;
  bool beta_class = false;
  if (const api::ObjectMeta* m = pvc.metadata(); m != nullptr) {
    info.namespace_ = Str(m->namespace_());
    info.name = Str(m->name());
    info.uid = Str(m->uid());
    info.deleting = m->deletion_timestamp() != nullptr && m->deletion_timestamp()->size() > 0;
    if (m->annotations() != nullptr) {
      for (const api::StringEntry* a : *m->annotations()) {
        const std::string_view key = a->key() != nullptr ? a->key()->string_view() : "";
        if (key == kAnnBindCompleted) info.bind_completed = true;
        if (key == kAnnBetaStorageClass) {
          info.storage_class = Str(a->value());
          beta_class = true;
        }
      }
    }
    if (m->owner_references() != nullptr) {
      for (const api::OwnerReference* o : *m->owner_references()) {
        if (o->controller().value_or(false)) info.controller_uid = Str(o->uid());
      }
    }
  }
  if (const api::PersistentVolumeClaimSpec* spec = pvc.spec(); spec != nullptr) {
    info.volume_name = Str(spec->volume_name());
    if (!beta_class) info.storage_class = Str(spec->storage_class_name());
    if (spec->access_modes() != nullptr) {
      for (auto mode : *spec->access_modes()) {
        if (mode == api::PersistentVolumeAccessMode::ReadWriteOncePod) info.read_write_once_pod = true;
      }
    }
  }
  if (const api::PersistentVolumeClaimStatus* status = pvc.status(); status != nullptr) {
    if (status->phase() == api::PersistentVolumeClaimPhase::Bound) info.bind_completed = true;
    info.lost = status->phase() == api::PersistentVolumeClaimPhase::Lost;
  }
  return info;
}

CsiNodeInfo CsiNodeInfoFromCsiNode(const api::CSINode& csi_node) {
  CsiNodeInfo info;
  if (csi_node.metadata() != nullptr) info.node = Str(csi_node.metadata()->name());
  if (csi_node.spec() == nullptr || csi_node.spec()->drivers() == nullptr) return info;
  for (const api::CSINodeDriver* d : *csi_node.spec()->drivers()) {
    if (d->allocatable() == nullptr || !d->allocatable()->count().has_value()) continue;
    info.attach_limits.insert_or_assign(Str(d->name()), *d->allocatable()->count());
  }
  return info;
}

std::string ClaimNotFoundMessage(std::string_view name) {
  return "persistentvolumeclaim \"" + std::string(name) + "\" not found";
}

void VolumeCatalog::UpsertPersistentVolume(PersistentVolumeInfo pv) {
  std::string name = pv.name;
  pvs_.insert_or_assign(std::move(name), std::move(pv));
}

void VolumeCatalog::UpsertPersistentVolumeClaim(PersistentVolumeClaimInfo pvc) {
  pvcs_.insert_or_assign(ClaimKey(pvc.namespace_, pvc.name), std::move(pvc));
}

void VolumeCatalog::UpsertCsiNode(CsiNodeInfo csi_node) {
  std::string name = csi_node.node;
  csi_nodes_.insert_or_assign(std::move(name), std::move(csi_node));
}

Status VolumeCatalog::RemoveCsiNode(std::string_view node) {
  auto it = csi_nodes_.find(node);
  if (it == csi_nodes_.end()) return Status::NotFound("csinode \"" + std::string(node) + "\" not found");
  csi_nodes_.erase(it);
  return Status::Ok();
}

std::optional<int64_t> VolumeCatalog::CsiAttachLimit(std::string_view node, std::string_view driver) const {
  auto it = csi_nodes_.find(node);
  if (it == csi_nodes_.end()) return std::nullopt;
  auto limit = it->second.attach_limits.find(driver);
  if (limit == it->second.attach_limits.end()) return std::nullopt;
  return limit->second;
}

Status VolumeCatalog::RemovePersistentVolume(std::string_view name) {
  if (pvs_.erase(std::string(name)) == 0) {
    return Status::NotFound("persistentvolume \"" + std::string(name) + "\" not found");
  }
  return Status::Ok();
}

Status VolumeCatalog::RemovePersistentVolumeClaim(std::string_view namespace_, std::string_view name) {
  if (pvcs_.erase(ClaimKey(namespace_, name)) == 0) return Status::NotFound(ClaimNotFoundMessage(name));
  return Status::Ok();
}

const PersistentVolumeInfo* VolumeCatalog::FindPersistentVolume(std::string_view name) const {
  auto it = pvs_.find(std::string(name));
  return it == pvs_.end() ? nullptr : &it->second;
}

const PersistentVolumeClaimInfo* VolumeCatalog::FindPersistentVolumeClaim(std::string_view namespace_,
                                                                         std::string_view name) const {
  auto it = pvcs_.find(ClaimKey(namespace_, name));
  return it == pvcs_.end() ? nullptr : &it->second;
}

bool VolumeCatalog::IsBound(const PersistentVolumeClaimInfo& pvc) const {
  if (pvc.volume_name.empty()) return false;
  if (pvc.bind_completed) return true;
  const PersistentVolumeInfo* pv = FindPersistentVolume(pvc.volume_name);
  if (pv == nullptr) return false;
  return pv->claim_namespace == pvc.namespace_ && pv->claim_name == pvc.name &&
         (pv->claim_uid.empty() || pvc.uid.empty() || pv->claim_uid == pvc.uid);
}

}  // namespace podflow::scheduler
