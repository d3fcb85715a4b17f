// SchedulerCore's feeds (what it follows in the log, in listing order) and
// the kinds it follows besides nodes and pods: Services, Namespaces,
// PersistentVolumes and their claims, CSINodes.
#include "scheduler/core/scheduler_core.h"

#include "model/codec.h"
#include "model/objects.h"
#include "policy_generated.h"

namespace podflow::scheduler {
namespace {

using Event = SchedulingQueue::ClusterEvent;

}  // namespace

std::vector<SchedulerCore::Feed> SchedulerCore::Feeds() {
  std::vector<Feed> feeds;
  feeds.push_back({model::KindPrefix(model::Kind("Node")),
                   [this](const StoredObject& object, Clock::time_point now) { UpsertNode(object, now); },
                   [this](const std::string& key, Clock::time_point) { RemoveNode(key); }});
  // Services: default topology spreading groups pods by them.
  feeds.push_back({model::KindPrefix(model::Kind("Service")),
                   [this](const StoredObject& object, Clock::time_point) { UpsertService(object); },
                   [this](const std::string& key, Clock::time_point) { RemoveService(key); }});
  // Namespaces: pod affinity's namespaceSelector reads their labels.
  feeds.push_back({model::KindPrefix(model::Kind("Namespace")),
                   [this](const StoredObject& object, Clock::time_point) { UpsertNamespace(object); },
                   [this](const std::string& key, Clock::time_point) { RemoveNamespace(key); }});
  // Volumes and claims: the volume plugins read them.
  feeds.push_back({model::KindPrefix(model::Kind("PersistentVolume")),
                   [this](const StoredObject& object, Clock::time_point now) { UpsertPersistentVolume(object, now); },
                   [this](const std::string& key, Clock::time_point) { RemovePersistentVolume(key); }});
  feeds.push_back({model::KindPrefix(model::Kind("PersistentVolumeClaim")),
                   [this](const StoredObject& object, Clock::time_point now) { UpsertPersistentVolumeClaim(object, now); },
                   [this](const std::string& key, Clock::time_point) { RemovePersistentVolumeClaim(key); }});
  // CSINodes: NodeVolumeLimits reads each node's CSI attach limits.
  feeds.push_back({model::KindPrefix(model::Kind("CSINode")),
                   [this](const StoredObject& object, Clock::time_point now) { UpsertCsiNode(object, now); },
                   [this](const std::string& key, Clock::time_point) { RemoveCsiNode(key); }});
  // Pods last: the nodes they are bound to are known by then.
  feeds.push_back({model::KindPrefix(model::Kind("Pod")),
                   [this](const StoredObject& object, Clock::time_point now) { UpsertPod(object, now); },
                   [this](const std::string& key, Clock::time_point now) { RemovePod(key, now); }});
  return feeds;
}

void SchedulerCore::UpsertService(const StoredObject& object) {
  if (!model::VerifyObject(model::Kind("Service"), object.value).ok()) return;
  ServiceInfo info =
      ServiceInfoFromService(*flatbuffers::GetRoot<api::Service>(object.value.data()));
  std::pair<std::string, std::string> id{info.namespace_, info.name};
  if (!cache_.UpsertService(std::move(info)).ok()) return;
  service_keys_[object.key] = std::move(id);
}

void SchedulerCore::RemoveService(const std::string& key) {
  auto it = service_keys_.find(key);
  if (it == service_keys_.end()) return;
  (void)cache_.RemoveService(it->second.first, it->second.second);
  service_keys_.erase(it);
}

void SchedulerCore::UpsertNamespace(const StoredObject& object) {
  if (!model::VerifyObject(model::Kind("Namespace"), object.value).ok()) return;
  const api::ObjectMeta* meta = flatbuffers::GetRoot<api::Namespace>(object.value.data())->metadata();
  if (meta == nullptr || meta->name() == nullptr) return;
  std::string name = meta->name()->str();
  if (!cache_.UpsertNamespace(name, LabelsFromEntries(meta->labels())).ok()) return;
  namespace_keys_[object.key] = std::move(name);
}

void SchedulerCore::RemoveNamespace(const std::string& key) {
  auto it = namespace_keys_.find(key);
  if (it == namespace_keys_.end()) return;
  (void)cache_.RemoveNamespace(it->second);
  namespace_keys_.erase(it);
}

void SchedulerCore::UpsertPersistentVolume(const StoredObject& object, Clock::time_point now) {
  if (!model::VerifyObject(model::Kind("PersistentVolume"), object.value).ok()) return;
  PersistentVolumeInfo info =
      PersistentVolumeInfoFromPv(*flatbuffers::GetRoot<api::PersistentVolume>(object.value.data()));
  pv_keys_[object.key] = info.name;
  cache_.UpsertPersistentVolume(std::move(info));
  if (std::optional<int64_t> revision = Fed(object)) queue_.MoveOnEvent(Event::kStorageChange, now, *revision);
}

void SchedulerCore::RemovePersistentVolume(const std::string& key) {
  fed_revisions_.erase(key);
  auto it = pv_keys_.find(key);
  if (it == pv_keys_.end()) return;
  (void)cache_.RemovePersistentVolume(it->second);
  pv_keys_.erase(it);
}

void SchedulerCore::UpsertPersistentVolumeClaim(const StoredObject& object, Clock::time_point now) {
  if (!model::VerifyObject(model::Kind("PersistentVolumeClaim"), object.value).ok()) return;
  PersistentVolumeClaimInfo info =
      ClaimInfoFromPvc(*flatbuffers::GetRoot<api::PersistentVolumeClaim>(object.value.data()));
  pvc_keys_[object.key] = {info.namespace_, info.name};
  cache_.UpsertPersistentVolumeClaim(std::move(info));
  if (std::optional<int64_t> revision = Fed(object)) queue_.MoveOnEvent(Event::kStorageChange, now, *revision);
}

void SchedulerCore::RemovePersistentVolumeClaim(const std::string& key) {
  fed_revisions_.erase(key);
  auto it = pvc_keys_.find(key);
  if (it == pvc_keys_.end()) return;
  (void)cache_.RemovePersistentVolumeClaim(it->second.first, it->second.second);
  pvc_keys_.erase(it);
}

void SchedulerCore::UpsertCsiNode(const StoredObject& object, Clock::time_point now) {
  if (!model::VerifyObject(model::Kind("CSINode"), object.value).ok()) return;
  CsiNodeInfo info = CsiNodeInfoFromCsiNode(*flatbuffers::GetRoot<api::CSINode>(object.value.data()));
  if (info.node.empty()) return;
  csi_node_keys_[object.key] = info.node;
  cache_.UpsertCsiNode(std::move(info));
  // A higher limit may let a pod NodeVolumeLimits held back through.
  if (std::optional<int64_t> revision = Fed(object)) queue_.MoveOnEvent(Event::kStorageChange, now, *revision);
}

void SchedulerCore::RemoveCsiNode(const std::string& key) {
  fed_revisions_.erase(key);
  auto it = csi_node_keys_.find(key);
  if (it == csi_node_keys_.end()) return;
  (void)cache_.RemoveCsiNode(it->second);
  csi_node_keys_.erase(it);
}

}  // namespace podflow::scheduler
