#include "scheduler/framework/node_info.h"

#include <algorithm>

namespace podflow::scheduler {

void NodeInfo::AddPod(std::shared_ptr<const PodInfo> pod) {
  requested_.Add(pod->requests);
  non_zero_milli_cpu_ += pod->non_zero_milli_cpu;
  non_zero_memory_ += pod->non_zero_memory;
  used_ports_.insert(used_ports_.end(), pod->host_ports.begin(), pod->host_ports.end());
  pods_.push_back(std::move(pod));
}

Status NodeInfo::RemovePod(std::string_view uid) {
  auto it = std::find_if(pods_.begin(), pods_.end(), [&](const auto& p) { return p->uid == uid; });
  if (it == pods_.end()) {
    return Status::NotFound("pod " + std::string(uid) + " is not on node " + name);
  }
  const PodInfo& pod = **it;
  requested_.Subtract(pod.requests);
  non_zero_milli_cpu_ -= pod.non_zero_milli_cpu;
  non_zero_memory_ -= pod.non_zero_memory;
  for (const HostPort& hp : pod.host_ports) {
    auto used = std::find(used_ports_.begin(), used_ports_.end(), hp);
    if (used != used_ports_.end()) used_ports_.erase(used);
  }
  pods_.erase(it);
  return Status::Ok();
}

bool NodeInfo::HostPortConflicts(const HostPort& want) const {
  if (want.port <= 0) return false;
  const bool want_all = want.host_ip == kDefaultBindAllHostIp;
  for (const HostPort& used : used_ports_) {
    if (used.port != want.port || used.protocol != want.protocol) continue;
    if (want_all || used.host_ip == want.host_ip || used.host_ip == kDefaultBindAllHostIp) {
      return true;
    }
  }
  return false;
}

Result<NodeInfo> NodeInfoFromNode(const api::Node& node) {
  NodeInfo info;
  if (node.metadata() != nullptr) {
    if (node.metadata()->name() != nullptr) info.name = node.metadata()->name()->str();
    info.labels = LabelsFromEntries(node.metadata()->labels());
  }
  if (const api::NodeSpec* spec = node.spec(); spec != nullptr) {
    info.unschedulable = spec->unschedulable();
    if (spec->taints() != nullptr) {
      for (const api::Taint* t : *spec->taints()) {
        info.taints.push_back(Taint{t->key() != nullptr ? t->key()->str() : std::string(),
                                    t->value() != nullptr ? t->value()->str() : std::string(),
                                    t->effect()});
      }
    }
  }
  if (node.status() != nullptr) {
    auto allocatable = ResourcesFromList(node.status()->allocatable());
    if (!allocatable.ok()) {
      return Status::Invalid("node " + info.name + ": status.allocatable: " +
                             allocatable.status().message());
    }
    info.allocatable = std::move(allocatable).value();
  }
  return info;
}

}  // namespace podflow::scheduler
