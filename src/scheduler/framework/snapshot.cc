#include "scheduler/framework/snapshot.h"

#include <algorithm>
#include <atomic>

namespace podflow::scheduler {

uint64_t NextGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Status Snapshot::UpsertNode(NodeInfo node) {
  if (node.name.empty()) return Status::Invalid("node has no name");
  auto it = node_index_.find(node.name);
  CountImages(node, +1);
  objects_generation_ = NextGeneration();
  if (it == node_index_.end()) {
    node_index_.emplace(node.name, nodes_.size());
    nodes_.push_back(std::move(node));
    node_generations_.push_back(0);
    Touch(nodes_.size() - 1);
    affinity_.NodeAdded(*this);
    return Status::Ok();
  }
  NodeInfo& old = nodes_[it->second];
  CountImages(old, -1);
  for (const auto& pod : old.pods()) node.AddPod(pod);
  affinity_.RelabelNode(it->second, old, node, *this);
  old = std::move(node);
  Touch(it->second);
  return Status::Ok();
}

Status Snapshot::RemoveNode(std::string_view name) {
  auto it = node_index_.find(std::string(name));
  if (it == node_index_.end()) return Status::NotFound("node " + std::string(name) + " not found");
  const size_t index = it->second;
  affinity_nodes_.erase(it->first);  // `name` may be the node's own, erased below
  CountImages(nodes_[index], -1);
  for (const auto& pod : nodes_[index].pods()) {
    affinity_.RemovePod(*pod, nodes_[index], *this);
    pod_node_.erase(pod->uid);
  }
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(index));
  node_generations_.erase(node_generations_.begin() + static_cast<std::ptrdiff_t>(index));
  objects_generation_ = NextGeneration();
  affinity_.NodeRemoved(index);
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

void Snapshot::CountImages(const NodeInfo& node, int64_t delta) {
  // NodeInfo.images holds each name once, so a node counts once per name.
  for (const ImageState& image : node.images) {
    auto [it, _] = image_nodes_.try_emplace(image.name, 0);
    it->second += delta;
    if (it->second <= 0) image_nodes_.erase(it);
  }
}

int64_t Snapshot::ImageNumNodes(std::string_view image) const {
  if (image_nodes_.empty()) return 0;
  auto it = image_nodes_.find(std::string(image));
  return it == image_nodes_.end() ? 0 : it->second;
}

Status Snapshot::AddPod(PodInfo pod) {
  auto node = node_index_.find(pod.node_name);
  if (node == node_index_.end()) {
    return Status::NotFound("pod " + pod.FullName() + ": node \"" + pod.node_name + "\" not found");
  }
  if (pod_node_.contains(pod.uid)) {
    return Status::AlreadyExists("pod " + pod.FullName() + " (uid " + pod.uid + ") already counted");
  }
  RemoveNominatedPod(pod.uid);
  pod_node_.emplace(pod.uid, node->second);
  NodeInfo& target = nodes_[node->second];
  target.AddPod(std::make_shared<const PodInfo>(std::move(pod)));
  affinity_.AddPod(*target.pods().back(), target, *this);
  if (!target.pods_with_affinity().empty()) affinity_nodes_.insert(target.name);
  Touch(node->second);
  return Status::Ok();
}

Status Snapshot::RemovePod(std::string_view uid) {
  auto it = pod_node_.find(std::string(uid));
  if (it == pod_node_.end()) return Status::NotFound("pod uid " + std::string(uid) + " not counted");
  NodeInfo& node = nodes_[it->second];
  for (const auto& pod : node.pods()) {
    if (pod->uid != uid) continue;
    affinity_.RemovePod(*pod, node, *this);
    break;
  }
  PODFLOW_RETURN_IF_ERROR(node.RemovePod(uid));
  if (node.pods_with_affinity().empty()) affinity_nodes_.erase(node.name);
  Touch(it->second);
  pod_node_.erase(it);
  return Status::Ok();
}

void Snapshot::AddNominatedPod(PodInfo pod) {
  RemoveNominatedPod(pod.uid);
  if (pod.nominated_node_name.empty()) return;
  nominated_node_.emplace(pod.uid, pod.nominated_node_name);
  std::string node = pod.nominated_node_name;
  nominated_[std::move(node)].push_back(std::make_shared<const PodInfo>(std::move(pod)));
}

void Snapshot::RemoveNominatedPod(std::string_view uid) {
  if (nominated_node_.empty()) return;
  auto it = nominated_node_.find(std::string(uid));
  if (it == nominated_node_.end()) return;
  auto pods = nominated_.find(it->second);
  if (pods != nominated_.end()) {
    std::erase_if(pods->second, [&](const auto& p) { return p->uid == uid; });
    if (pods->second.empty()) nominated_.erase(pods);
  }
  nominated_node_.erase(it);
}

std::span<const std::shared_ptr<const PodInfo>> Snapshot::NominatedPods(std::string_view node) const {
  if (nominated_.empty()) return {};
  auto it = nominated_.find(std::string(node));
  if (it == nominated_.end()) return {};
  return it->second;
}

Status Snapshot::UpsertService(ServiceInfo service) {
  objects_generation_ = NextGeneration();
  if (service.name.empty()) return Status::Invalid("service has no name");
  std::vector<ServiceInfo>& list = services_[service.namespace_];
  for (ServiceInfo& existing : list) {
    if (existing.name == service.name) {
      existing = std::move(service);
      return Status::Ok();
    }
  }
  list.push_back(std::move(service));
  return Status::Ok();
}

Status Snapshot::RemoveService(std::string_view namespace_, std::string_view name) {
  objects_generation_ = NextGeneration();
  auto it = services_.find(std::string(namespace_));
  if (it != services_.end()) {
    std::vector<ServiceInfo>& list = it->second;
    for (auto s = list.begin(); s != list.end(); ++s) {
      if (s->name != name) continue;
      list.erase(s);
      if (list.empty()) services_.erase(it);
      return Status::Ok();
    }
  }
  return Status::NotFound("service " + std::string(namespace_) + "/" + std::string(name) +
                          " not found");
}

std::span<const ServiceInfo> Snapshot::Services(std::string_view namespace_) const {
  auto it = services_.find(std::string(namespace_));
  if (it == services_.end()) return {};
  return it->second;
}

Status Snapshot::UpsertNamespace(std::string name, Labels labels) {
  objects_generation_ = NextGeneration();
  if (name.empty()) return Status::Invalid("namespace has no name");
  auto it = namespaces_.find(name);
  if (it != namespaces_.end() && it->second == labels) return Status::Ok();
  namespaces_.insert_or_assign(std::move(name), std::move(labels));
  affinity_.NamespacesChanged(*this);
  return Status::Ok();
}

Status Snapshot::RemoveNamespace(std::string_view name) {
  objects_generation_ = NextGeneration();
  auto it = namespaces_.find(name);
  if (it == namespaces_.end()) {
    return Status::NotFound("namespace " + std::string(name) + " not found");
  }
  namespaces_.erase(it);
  affinity_.NamespacesChanged(*this);
  return Status::Ok();
}

const Labels* Snapshot::NamespaceLabels(std::string_view name) const {
  auto it = namespaces_.find(name);
  return it == namespaces_.end() ? nullptr : &it->second;
}

std::string_view Snapshot::NominatedNodeOf(std::string_view uid) const {
  if (nominated_node_.empty()) return {};
  auto it = nominated_node_.find(std::string(uid));
  return it == nominated_node_.end() ? std::string_view() : std::string_view(it->second);
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
