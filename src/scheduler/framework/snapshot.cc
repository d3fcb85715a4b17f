#include "scheduler/framework/snapshot.h"

#include <algorithm>

namespace podflow::scheduler {

Status Snapshot::UpsertNode(NodeInfo node) {
  if (node.name.empty()) return Status::Invalid("node has no name");
  auto it = node_index_.find(node.name);
  if (it == node_index_.end()) {
    node_index_.emplace(node.name, nodes_.size());
    nodes_.push_back(std::move(node));
    return Status::Ok();
  }
  NodeInfo& old = nodes_[it->second];
  for (const auto& pod : old.pods()) node.AddPod(pod);
  old = std::move(node);
  return Status::Ok();
}

Status Snapshot::RemoveNode(std::string_view name) {
  auto it = node_index_.find(std::string(name));
  if (it == node_index_.end()) return Status::NotFound("node " + std::string(name) + " not found");
  const size_t index = it->second;
  for (const auto& pod : nodes_[index].pods()) pod_node_.erase(pod->uid);
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(index));
  node_index_.erase(it);
  // Indices after the removed node shift down by one.
  for (auto& [_, i] : node_index_) {
    if (i > index) --i;
  }
  for (auto& [_, i] : pod_node_) {
    if (i > index) --i;
  }
  return Status::Ok();
}

Status Snapshot::AddPod(PodInfo pod) {
  auto node = node_index_.find(pod.node_name);
  if (node == node_index_.end()) {
    return Status::NotFound("pod " + pod.FullName() + ": node \"" + pod.node_name + "\" not found");
  }
  if (pod_node_.contains(pod.uid)) {
    return Status::AlreadyExists("pod " + pod.FullName() + " (uid " + pod.uid + ") already counted");
  }
  pod_node_.emplace(pod.uid, node->second);
  nodes_[node->second].AddPod(std::make_shared<const PodInfo>(std::move(pod)));
  return Status::Ok();
}

Status Snapshot::RemovePod(std::string_view uid) {
  auto it = pod_node_.find(std::string(uid));
  if (it == pod_node_.end()) return Status::NotFound("pod uid " + std::string(uid) + " not counted");
  PODFLOW_RETURN_IF_ERROR(nodes_[it->second].RemovePod(uid));
  pod_node_.erase(it);
  return Status::Ok();
}

const NodeInfo* Snapshot::FindNode(std::string_view name) const {
  auto it = node_index_.find(std::string(name));
  return it == node_index_.end() ? nullptr : &nodes_[it->second];
}

const PodInfo* Snapshot::FindPod(std::string_view uid) const {
  auto it = pod_node_.find(std::string(uid));
  if (it == pod_node_.end()) return nullptr;
  for (const auto& pod : nodes_[it->second].pods()) {
    if (pod->uid == uid) return pod.get();
  }
  return nullptr;
}

}  // namespace podflow::scheduler
