// Persistent volumes and claims as the volume plugins read them, and the
// catalog the scheduler's Snapshot keeps of them (kube-scheduler reads the
// same objects through its PV and PVC listers).
//
// podflow has no StorageClass, CSINode or PV controller. What follows from
// that is decided here, once:
// - A claim is bound when spec.volumeName is set and the binding is
//   complete: the pv.kubernetes.io/bind-completed annotation, or
//   status.phase Bound, or the named volume's claimRef naming the claim
//   back (the two-way binding a PV controller would complete at once).
// - Every storage class is unknown, so an unbound claim binds immediately
//   (kube-scheduler treats a class it cannot find the same way).
//
// Thread safety: none; the Snapshot's owner writes, a cycle reads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"
#include "scheduler/framework/labels.h"
#include "scheduler/framework/pod_info.h"
#include "storage_generated.h"

namespace podflow::scheduler {

inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";

struct PersistentVolumeInfo {
  std::string name;
  Labels labels;
  // The volume's source; id is the disk (GCE pdName, EBS volumeID, Azure
  // diskName, Cinder volumeID) or, for kCsi, the volume handle.
  VolumeSourceKind kind = VolumeSourceKind::kOther;
  std::string id;
  std::string csi_driver;
  // spec.nodeAffinity.required; nullopt when the volume names none.
  std::optional<NodeSelector> node_affinity;
  // spec.claimRef.
  std::string claim_namespace;
  std::string claim_name;
  std::string claim_uid;
};

struct PersistentVolumeClaimInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string volume_name;    // spec.volumeName
  std::string storage_class;  // the beta annotation, else spec.storageClassName
  bool read_write_once_pod = false;  // spec.accessModes holds ReadWriteOncePod
  bool bind_completed = false;       // the annotation, or status.phase Bound
  bool lost = false;                 // status.phase Lost
  bool deleting = false;             // metadata.deletionTimestamp set
  std::string controller_uid;        // the owner reference with controller: true
};

// Builds the plain values of verified stored objects.
PersistentVolumeInfo PersistentVolumeInfoFromPv(const api::PersistentVolume& pv);
PersistentVolumeClaimInfo ClaimInfoFromPvc(const api::PersistentVolumeClaim& pvc);

// The message of a claim lookup that failed, as the API words NotFound:
// persistentvolumeclaim "data" not found
std::string ClaimNotFoundMessage(std::string_view name);

class VolumeCatalog {
 public:
  // Adds or replaces by name (claims: by namespace and name).
  void UpsertPersistentVolume(PersistentVolumeInfo pv);
  void UpsertPersistentVolumeClaim(PersistentVolumeClaimInfo pvc);
  // NotFound when absent.
  Status RemovePersistentVolume(std::string_view name);
  Status RemovePersistentVolumeClaim(std::string_view namespace_, std::string_view name);

  // nullptr when absent. Pointers stay valid until the entry changes.
  const PersistentVolumeInfo* FindPersistentVolume(std::string_view name) const;
  const PersistentVolumeClaimInfo* FindPersistentVolumeClaim(std::string_view namespace_,
                                                            std::string_view name) const;

  // The claim is bound (see above) to a volume named by spec.volumeName;
  // false for a claim with no volumeName.
  bool IsBound(const PersistentVolumeClaimInfo& pvc) const;

  size_t NumPersistentVolumes() const { return pvs_.size(); }
  size_t NumPersistentVolumeClaims() const { return pvcs_.size(); }

 private:
  std::unordered_map<std::string, PersistentVolumeInfo> pvs_;        // name ->
  std::unordered_map<std::string, PersistentVolumeClaimInfo> pvcs_;  // "ns/name" ->
};

}  // namespace podflow::scheduler
