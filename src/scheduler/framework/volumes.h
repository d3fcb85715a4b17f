// Persistent volumes and claims as the volume plugins read them, the CSI
// attach limits of each node's CSINode, and the catalog the scheduler's
// Snapshot keeps of them (kube-scheduler reads the same objects through its
// PV, PVC and CSINode listers).
//
// podflow has no PV controller, and the scheduler does not read
// StorageClasses. What follows from that is decided here, once:
// - A claim is bound when spec.volumeName is set and the binding is
//   complete: the pv.kubernetes.io/bind-completed annotation, or
//   status.phase Bound, or the named volume's claimRef naming the claim
//   back (the two-way binding a PV controller would complete at once).
// - Every storage class is unknown, so an unbound claim binds immediately
//   (kube-scheduler treats a class it cannot find the same way).
//
// Thread safety: none; the Snapshot's owner writes, a cycle reads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"
#include "scheduler/framework/labels.h"
#include "scheduler/framework/pod_info.h"
#include "cluster_generated.h"
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

// A node's CSINode as NodeVolumeLimits reads it: for each driver that
// states spec.drivers[].allocatable.count, the most volumes of that driver
// the node may attach.
struct CsiNodeInfo {
  std::string node;                               // the CSINode's name: its node's
  std::map<std::string, int64_t, std::less<>> attach_limits;  // driver -> count
};

// Builds the plain values of verified stored objects.
PersistentVolumeInfo PersistentVolumeInfoFromPv(const api::PersistentVolume& pv);
PersistentVolumeClaimInfo ClaimInfoFromPvc(const api::PersistentVolumeClaim& pvc);
CsiNodeInfo CsiNodeInfoFromCsiNode(const api::CSINode& csi_node);

// The message of a claim lookup that failed, as the API words NotFound:
// persistentvolumeclaim "data" not found
std::string ClaimNotFoundMessage(std::string_view name);

class VolumeCatalog {
 public:
  // Adds or replaces by name (claims: by namespace and name).
  void UpsertPersistentVolume(PersistentVolumeInfo pv);
  void UpsertPersistentVolumeClaim(PersistentVolumeClaimInfo pvc);
  void UpsertCsiNode(CsiNodeInfo csi_node);
  // NotFound when absent.
  Status RemovePersistentVolume(std::string_view name);
  Status RemovePersistentVolumeClaim(std::string_view namespace_, std::string_view name);
  Status RemoveCsiNode(std::string_view node);

  // nullptr when absent. Pointers stay valid until the entry changes.
  const PersistentVolumeInfo* FindPersistentVolume(std::string_view name) const;
  const PersistentVolumeClaimInfo* FindPersistentVolumeClaim(std::string_view namespace_,
                                                            std::string_view name) const;

  // The claim is bound (see above) to a volume named by spec.volumeName;
  // false for a claim with no volumeName.
  bool IsBound(const PersistentVolumeClaimInfo& pvc) const;

  // The CSINode of `node` says it may attach at most this many volumes of
  // `driver`; nullopt when it says nothing of it (or there is no CSINode).
  std::optional<int64_t> CsiAttachLimit(std::string_view node, std::string_view driver) const;

  size_t NumPersistentVolumes() const { return pvs_.size(); }
  size_t NumPersistentVolumeClaims() const { return pvcs_.size(); }

 private:
  std::unordered_map<std::string, PersistentVolumeInfo> pvs_;        // name ->
  std::unordered_map<std::string, PersistentVolumeClaimInfo> pvcs_;  // "ns/name" ->
  std::map<std::string, CsiNodeInfo, std::less<>> csi_nodes_;         // node name ->
};

}  // namespace podflow::scheduler
