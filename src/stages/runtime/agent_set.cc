#include "stages/runtime/agent_set.h"

#include "model/objects.h"

namespace podflow::runtime {
namespace {

const Ipv4 kThisMachine = 0x7f000001;  // 127.0.0.1

}  // namespace

NodeAgentSet::NodeAgentSet(const ImageCatalog* catalog, RuntimeTiming timing)
    : catalog_(catalog), timing_(timing) {}

Status NodeAgentSet::AddNode(SimNode node) {
  if (nodes_.contains(node.name)) {
    return Status::AlreadyExists("node \"" + node.name + "\" is already hosted");
  }
  ContainerHost* host = nullptr;
  if (node.type == RuntimeType::kProcess) {
    if (host_ == nullptr) return Status::Unavailable("node \"" + node.name + "\" runs processes, and no process runtime is set up");
    host = host_;
  }
  // On the pod network, where the host has one: its address there, its
  // pods' gateway the podCIDR's first address.
  std::string network;
  Status networked;
  if (host != nullptr && host->HasPodNetwork()) {
    const Cidr& cidr = node.pod_cidr;
    const Cidr& nodes = node.node_network;
    const auto in = [](Ipv4 ip, const Cidr& c) {
      return c.prefix == 0 || (ip >> (32 - c.prefix)) == (c.base >> (32 - c.prefix));
    };
    if (nodes.prefix == 0 || !in(node.internal_ip, nodes) || (node.internal_ip >> 24) == 127) {
      networked = Status::Invalid("its InternalIP " + FormatIpv4(node.internal_ip) + " is not an address of nodeIPRange " +
                                  nodes.ToString());
    } else {
      networked = host->AddNodeNetwork(node.name, FormatIpv4(node.internal_ip) + "/" + std::to_string(nodes.prefix),
                                       cidr.ToString(), FormatIpv4(cidr.base + 1) + "/" + std::to_string(cidr.prefix));
    }
    if (networked.ok()) {
      network = host->NodeNetwork(node.name);
    } else if (!node.internal_ip_given) {
      node.internal_ip = kThisMachine;  // on this machine's network after all
    }
  }
  std::string name = node.name;
  nodes_.emplace(std::move(name), std::make_unique<NodeRuntime>(std::move(node), catalog_, &timing_, &sources_, host,
                                                                std::move(network), &dns_));
  if (!networked.ok()) {
    return Status(networked.code(), "not on the pod network (its pods run on this machine's network): " +
                                        networked.message());
  }
  return Status::Ok();
}

void NodeAgentSet::RemoveNode(const std::string& name) {
  for (auto it = pods_.begin(); it != pods_.end();) {
    it = it->second.node_name == name ? pods_.erase(it) : std::next(it);
  }
  for (auto it = adopted_.begin(); it != adopted_.end();) {
    it = it->second.node_name == name ? adopted_.erase(it) : std::next(it);
  }
  nodes_.erase(name);  // after its pods: their runners release IPs into it
}

Status NodeAgentSet::AddPod(const std::string& node_name, PodAssignment assignment, SimTime now) {
  auto node = nodes_.find(node_name);
  if (node == nodes_.end()) {
    return Status::NotFound("node \"" + node_name + "\" is not hosted here");
  }
  if (assignment.pod == nullptr || assignment.pod->metadata == nullptr ||
      assignment.pod->spec == nullptr) {
    return Status::Invalid("pod " + assignment.pod_key + " has no metadata or spec");
  }
  if (auto adopted = adopted_.find(assignment.pod_key); adopted != adopted_.end()) {
    if (adopted->second.node_name == node_name && adopted->second.uid == assignment.pod->metadata->uid) {
      return Status::Ok();
    }
    ForgetAdopted(assignment.pod_key);
  }
  auto existing = pods_.find(assignment.pod_key);
  if (existing != pods_.end()) {
    if (existing->second.node_name == node_name &&
        existing->second.uid == assignment.pod->metadata->uid) {
      existing->second.runner->ObserveRevision(assignment.mod_revision);
      return Status::Ok();
    }
    existing->second.runner->RemoveFiles();
    pods_.erase(existing);  // same name, new pod (or moved): start over
  }
  const std::string key = assignment.pod_key;
  Hosted hosted;
  hosted.node_name = node_name;
  hosted.uid = assignment.pod->metadata->uid;
  hosted.runner = std::make_unique<PodRunner>(std::move(assignment), node->second.get(), now);
  Hosted& placed = pods_.emplace(key, std::move(hosted)).first->second;
  Schedule(key, placed);
  return Status::Ok();
}

Status NodeAgentSet::AdoptPod(const std::string& node_name, const std::string& pod_key, const std::string& uid,
                              const std::string& pod_ip) {
  auto node = nodes_.find(node_name);
  if (node == nodes_.end()) {
    return Status::NotFound("node \"" + node_name + "\" is not hosted here");
  }
  RemovePod(pod_key);
  Adopted adopted{node_name, uid, std::nullopt};
  if (!pod_ip.empty()) {
    Result<Ipv4> ip = ParseIpv4(pod_ip);
    // An address outside this node's block (or taken twice) is not ours to
    // keep; the pod keeps it, the pool just does not account for it.
    if (ip.ok() && node->second->ip_pool().Reserve(*ip).ok()) adopted.ip = *ip;
  }
  adopted_[pod_key] = std::move(adopted);
  return Status::Ok();
}

void NodeAgentSet::ForgetAdopted(const std::string& pod_key) {
  auto it = adopted_.find(pod_key);
  if (it == adopted_.end()) return;
  auto node = nodes_.find(it->second.node_name);
  if (it->second.ip && node != nodes_.end()) node->second->ip_pool().Release(*it->second.ip);
  adopted_.erase(it);
}

void NodeAgentSet::RemovePod(const std::string& pod_key) {
  if (auto it = pods_.find(pod_key); it != pods_.end()) {
    it->second.runner->RemoveFiles();
    pods_.erase(it);
  }
  // One taken over after a restart (it had finished) has its logs too:
  // "/registry/pods/<ns>/<name>" -> "<ns>_<name>_<uid>".
  std::string_view ns, name;
  if (auto it = adopted_.find(pod_key);
      it != adopted_.end() && RunsProcesses(it->second.node_name) && model::SplitNamespacedKey(pod_key, &ns, &name)) {
    host_->RemovePodFiles(PodLogDir(ns, name, it->second.uid));
  }
  ForgetAdopted(pod_key);
}

Status NodeAgentSet::TerminatePod(const std::string& pod_key, SimDuration grace, SimTime now,
                                  int64_t mod_revision) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return Status::NotFound("pod " + pod_key + " has no runner here");
  it->second.runner->ObserveRevision(mod_revision);
  // Again for a pod being stopped: a shorter grace period shortens it.
  it->second.runner->Terminate(now, grace);
  Schedule(pod_key, it->second);
  return Status::Ok();
}

void NodeAgentSet::Schedule(const std::string& pod_key, Hosted& hosted) {
  hosted.generation = ++next_generation_;
  if (std::optional<SimTime> at = hosted.runner->due()) {
    queue_.push(Due{*at, seq_++, pod_key, hosted.generation});
  }
}

void NodeAgentSet::DropStale() {
  while (!queue_.empty()) {
    const Due& top = queue_.top();
    auto it = pods_.find(top.pod_key);
    if (it != pods_.end() && it->second.generation == top.generation) return;
    queue_.pop();
  }
}

std::optional<SimTime> NodeAgentSet::NextDue() {
  DropStale();
  if (queue_.empty()) return std::nullopt;
  return queue_.top().at;
}

void NodeAgentSet::DeliverExits() {
  if (host_ == nullptr) return;
  for (const ContainerExit& exit : host_->TakeExits()) {
    auto it = pods_.find(exit.pod_key);
    if (it == pods_.end()) continue;  // removed meanwhile
    if (it->second.runner->ProcessExited(exit)) Schedule(exit.pod_key, it->second);
  }
  for (const ProbeOutcome& outcome : host_->TakeProbeOutcomes()) {
    auto it = pods_.find(outcome.pod_key);
    if (it == pods_.end()) continue;
    if (it->second.runner->ProbeFinished(outcome)) Schedule(outcome.pod_key, it->second);
  }
}

std::vector<model::Report> NodeAgentSet::Advance(SimTime now) {
  DeliverExits();
  std::vector<model::Report> reports;
  for (DropStale(); !queue_.empty() && queue_.top().at <= now; DropStale()) {
    const std::string key = queue_.top().pod_key;
    queue_.pop();
    Hosted& hosted = pods_.at(key);
    reports.push_back(hosted.runner->Step());
    Schedule(key, hosted);
  }
  return reports;
}

const PodRunner* NodeAgentSet::FindPod(const std::string& pod_key) const {
  auto it = pods_.find(pod_key);
  return it == pods_.end() ? nullptr : it->second.runner.get();
}

void NodeAgentSet::SourceChanged(std::string_view namespace_) {
  if (host_ == nullptr) return;  // no process node: no files to bring up to date
  for (auto& [key, hosted] : pods_) {
    if (hosted.runner->pod_namespace() == namespace_) hosted.runner->RefreshVolumes();
  }
}

}  // namespace podflow::runtime
