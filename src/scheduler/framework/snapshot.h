// Snapshot: the nodes a scheduling cycle sees, in a fixed order, each with
// the pods counted on it. The stage keeps one as its cache: it adds nodes and
// bound pods as it learns of them, and assumes a pod (AddPod) as soon as a
// decision is made, before binding confirms it.
//
// Thread safety: none; one owner. A cycle reads it through const methods.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/volumes.h"

namespace podflow::scheduler {

class Snapshot {
 public:
  // Adds a node, or replaces the node of that name keeping its pods and its
  // place in the order. Invalid when the name is empty.
  Status UpsertNode(NodeInfo node);
  // Removes a node and the pods counted on it; NotFound when absent.
  Status RemoveNode(std::string_view name);

  // Counts `pod` on the node pod.node_name (assume / bound). NotFound when
  // that node is not here; AlreadyExists when a pod of that uid is counted.
  Status AddPod(PodInfo pod);
  // Uncounts the pod of that uid (forget / delete). NotFound when absent.
  Status RemovePod(std::string_view uid);

  // PersistentVolumes and claims the volume plugins read (volumes.h).
  void UpsertPersistentVolume(PersistentVolumeInfo pv) { volumes_.UpsertPersistentVolume(std::move(pv)); }
  Status RemovePersistentVolume(std::string_view name) { return volumes_.RemovePersistentVolume(name); }
  void UpsertPersistentVolumeClaim(PersistentVolumeClaimInfo pvc) {
    volumes_.UpsertPersistentVolumeClaim(std::move(pvc));
  }
  Status RemovePersistentVolumeClaim(std::string_view namespace_, std::string_view name) {
    return volumes_.RemovePersistentVolumeClaim(namespace_, name);
  }
  const VolumeCatalog& volumes() const { return volumes_; }

  // Nodes in insertion order: the order filters visit them in.
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  size_t NumNodes() const { return nodes_.size(); }
  const NodeInfo* FindNode(std::string_view name) const;
  // The pod of that uid, if counted on some node.
  const PodInfo* FindPod(std::string_view uid) const;

 private:
  std::vector<NodeInfo> nodes_;
  std::unordered_map<std::string, size_t> node_index_;  // name -> index in nodes_
  std::unordered_map<std::string, size_t> pod_node_;    // uid -> index in nodes_
  VolumeCatalog volumes_;
};

}  // namespace podflow::scheduler
