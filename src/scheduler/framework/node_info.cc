#include "scheduler/framework/node_info.h"

#include <algorithm>

#include <yaml-cpp/yaml.h>

namespace podflow::scheduler {

void NodeInfo::AddPod(std::shared_ptr<const PodInfo> pod) {
  requested_.Add(pod->requests);
  non_zero_milli_cpu_ += pod->non_zero_milli_cpu;
  non_zero_memory_ += pod->non_zero_memory;
  used_ports_.insert(used_ports_.end(), pod->host_ports.begin(), pod->host_ports.end());
  if (pod->pod_affinity.declared) pods_with_affinity_.push_back(pod);
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
  if (pod.pod_affinity.declared) {
    auto with = std::find_if(pods_with_affinity_.begin(), pods_with_affinity_.end(),
                             [&](const auto& p) { return p->uid == uid; });
    if (with != pods_with_affinity_.end()) pods_with_affinity_.erase(with);
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

const ImageState* NodeInfo::FindImage(std::string_view name) const {
  auto it = std::lower_bound(images.begin(), images.end(), name,
                             [](const ImageState& i, std::string_view n) { return i.name < n; });
  return it != images.end() && it->name == name ? &*it : nullptr;
}

namespace {

// The preferAvoidPods annotation (JSON, which YAML reads too): a malformed
// value avoids nothing, as kube-scheduler treats an annotation it cannot read.
std::vector<AvoidedController> PreferAvoidPods(std::string_view json) {
  std::vector<AvoidedController> out;
  try {
    YAML::Node root = YAML::Load(std::string(json));
    YAML::Node list = root["preferAvoidPods"];
    if (!list || !list.IsSequence()) return out;
    for (const YAML::Node& entry : list) {
      YAML::Node controller = entry["podSignature"]["podController"];
      if (!controller || !controller.IsMap()) continue;
      AvoidedController c;
      if (controller["kind"]) c.kind = controller["kind"].as<std::string>();
      if (controller["uid"]) c.uid = controller["uid"].as<std::string>();
      out.push_back(std::move(c));
    }
  } catch (const YAML::Exception&) {
    out.clear();
  }
  return out;
}

}  // namespace

Result<NodeInfo> NodeInfoFromNode(const api::Node& node) {
  NodeInfo info;
  if (node.metadata() != nullptr) {
    if (node.metadata()->name() != nullptr) info.name = node.metadata()->name()->str();
    info.labels = LabelsFromEntries(node.metadata()->labels());
    if (const auto* annotations = node.metadata()->annotations(); annotations != nullptr) {
      for (const api::StringEntry* a : *annotations) {
        if (a->key() == nullptr || a->key()->string_view() != kPreferAvoidPodsAnnotationKey) continue;
        if (a->value() != nullptr) info.prefer_avoid_pods = PreferAvoidPods(a->value()->string_view());
      }
    }
  }
  if (const api::NodeSpec* spec = node.spec(); spec != nullptr) {
    info.unschedulable = spec->unschedulable();
    info.taints = model::TaintsOf(spec);
  }
  if (node.status() != nullptr) {
    auto allocatable = ResourcesFromList(node.status()->allocatable());
    if (!allocatable.ok()) {
      return Status::Invalid("node " + info.name + ": status.allocatable: " +
                             allocatable.status().message());
    }
    info.allocatable = std::move(allocatable).value();
    if (const auto* images = node.status()->images(); images != nullptr) {
      for (const api::ContainerImage* image : *images) {
        if (image->names() == nullptr) continue;
        for (const flatbuffers::String* name : *image->names()) {
          info.images.push_back(ImageState{NormalizedImageName(name->string_view()), image->size_bytes()});
        }
      }
      std::stable_sort(info.images.begin(), info.images.end(),
                       [](const ImageState& a, const ImageState& b) { return a.name < b.name; });
      info.images.erase(std::unique(info.images.begin(), info.images.end(),
                                    [](const ImageState& a, const ImageState& b) { return a.name == b.name; }),
                        info.images.end());
    }
    if (const auto* conditions = node.status()->conditions(); conditions != nullptr) {
      for (const api::NodeCondition* c : *conditions) {
        if (c->type() == nullptr || c->status() != api::ConditionStatus::True) continue;
        const std::string_view type = c->type()->string_view();
        if (type == "MemoryPressure") info.memory_pressure = true;
        if (type == "DiskPressure") info.disk_pressure = true;
        if (type == "PIDPressure") info.pid_pressure = true;
      }
    }
  }
  return info;
}

}  // namespace podflow::scheduler
