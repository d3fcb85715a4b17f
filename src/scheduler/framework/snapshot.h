// Snapshot: the nodes a scheduling cycle sees, in a fixed order, each with
// the pods counted on it. The stage keeps one as its cache: it adds nodes and
// bound pods as it learns of them, and assumes a pod (AddPod) as soon as a
// decision is made, before binding confirms it.
//
// Thread safety: none; one owner. A cycle reads it through const methods.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/affinity_index.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/service_info.h"
#include "scheduler/framework/volumes.h"

namespace podflow::scheduler {

// A value never returned before in this process (thread-safe).
uint64_t NextGeneration();

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

  // Nominated pods (kube-scheduler's nominator): pods that preemption
  // nominated to pod.nominated_node_name and that wait for their victims to
  // go. They are not counted on the node; the runner adds those of equal or
  // higher priority when it filters another pod there, so that pod cannot
  // take the room preemption made. A new nomination of a uid replaces the
  // old one; AddPod of the uid (assumed or bound) ends it. No-op when
  // nominated_node_name is empty.
  void AddNominatedPod(PodInfo pod);
  void RemoveNominatedPod(std::string_view uid);
  // The pods nominated to `node`, in nomination order.
  std::span<const std::shared_ptr<const PodInfo>> NominatedPods(std::string_view node) const;
  // The node the pod of that uid is nominated to; "" when none.
  std::string_view NominatedNodeOf(std::string_view uid) const;

  // PersistentVolumes, claims and CSINodes the volume plugins read
  // (volumes.h).
  void UpsertPersistentVolume(PersistentVolumeInfo pv) {
    objects_generation_ = NextGeneration();
    volumes_.UpsertPersistentVolume(std::move(pv));
  }
  Status RemovePersistentVolume(std::string_view name) {
    objects_generation_ = NextGeneration();
    return volumes_.RemovePersistentVolume(name);
  }
  void UpsertPersistentVolumeClaim(PersistentVolumeClaimInfo pvc) {
    objects_generation_ = NextGeneration();
    volumes_.UpsertPersistentVolumeClaim(std::move(pvc));
  }
  Status RemovePersistentVolumeClaim(std::string_view namespace_, std::string_view name) {
    objects_generation_ = NextGeneration();
    return volumes_.RemovePersistentVolumeClaim(namespace_, name);
  }
  void UpsertCsiNode(CsiNodeInfo csi_node) {
    objects_generation_ = NextGeneration();
    volumes_.UpsertCsiNode(std::move(csi_node));
  }
  Status RemoveCsiNode(std::string_view node) {
    objects_generation_ = NextGeneration();
    return volumes_.RemoveCsiNode(node);
  }
  const VolumeCatalog& volumes() const { return volumes_; }

  // Services (namespace, name, selector), for default topology spreading.
  // Upsert adds or replaces by namespace/name (Invalid when the name is
  // empty); Remove is NotFound when absent.
  Status UpsertService(ServiceInfo service);
  Status RemoveService(std::string_view namespace_, std::string_view name);
  // The services of a namespace, in insertion order (a replaced service
  // keeps its place).
  std::span<const ServiceInfo> Services(std::string_view namespace_) const;

  // Namespaces and their labels, for namespaceSelector of pod affinity
  // terms. Upsert adds or replaces (Invalid when the name is empty); Remove
  // is NotFound when absent. Pods may name namespaces not (yet) here.
  Status UpsertNamespace(std::string name, Labels labels);
  Status RemoveNamespace(std::string_view name);
  // The labels of that namespace, nullptr when unknown.
  const Labels* NamespaceLabels(std::string_view name) const;

  // Inter-pod affinity counts over the counted pods (affinity_index.h).
  const AffinityIndex& affinity() const { return affinity_; }
  // The names of the nodes counting a pod that declares inter-pod affinity
  // or anti-affinity (kube-scheduler's HavePodsWithAffinityList), in no
  // particular order: the only nodes whose pods' terms can score a pod.
  const std::unordered_set<std::string>& NodesWithAffinityPods() const { return affinity_nodes_; }

  // Nodes in insertion order: the order filters visit them in.
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  size_t NumNodes() const { return nodes_.size(); }
  // How many nodes hold the image of that normalized name (ImageLocality's
  // spread); kept up to date by UpsertNode / RemoveNode.
  int64_t ImageNumNodes(std::string_view image) const;
  const NodeInfo* FindNode(std::string_view name) const;
  // The pod of that uid, if counted on some node.
  const PodInfo* FindPod(std::string_view uid) const;
  // Whether any pod is nominated anywhere (NominatedPods is then empty for
  // every node).
  bool HasNominatedPods() const { return !nominated_.empty(); }

  // Change counters for the equivalence cache (equivalence_cache.h), as
  // kube-scheduler's NodeInfo.Generation: every change to a node or to the
  // pods counted on it gives nodes()[i] a new NodeGeneration(i), drawn from
  // one process-wide counter (NextGeneration) so that no two node states,
  // in this snapshot or a copy of it, ever share a value.
  // ObjectsGeneration() changes with every change to what is not a pod:
  // a node added, replaced or removed, a PersistentVolume, claim, Service or
  // Namespace. Nominations change neither (the runner reads them directly).
  uint64_t NodeGeneration(size_t index) const { return node_generations_[index]; }
  uint64_t ObjectsGeneration() const { return objects_generation_; }

 private:
  std::vector<NodeInfo> nodes_;
  std::vector<uint64_t> node_generations_;  // parallel to nodes_
  uint64_t objects_generation_ = NextGeneration();
  void Touch(size_t index) { node_generations_[index] = NextGeneration(); }
  std::unordered_map<std::string, size_t> node_index_;  // name -> index in nodes_
  std::unordered_map<std::string, size_t> pod_node_;    // uid -> index in nodes_
  std::unordered_map<std::string, int64_t> image_nodes_;  // image name -> nodes holding it
  void CountImages(const NodeInfo& node, int64_t delta);
  VolumeCatalog volumes_;
  std::unordered_map<std::string, std::vector<ServiceInfo>> services_;  // namespace -> services
  // node name -> pods nominated there; uid -> node name.
  std::unordered_map<std::string, std::vector<std::shared_ptr<const PodInfo>>> nominated_;
  std::unordered_map<std::string, std::string> nominated_node_;
  std::unordered_map<std::string, Labels, StringHash, std::equal_to<>> namespaces_;
  AffinityIndex affinity_;
  std::unordered_set<std::string> affinity_nodes_;
};

}  // namespace podflow::scheduler
