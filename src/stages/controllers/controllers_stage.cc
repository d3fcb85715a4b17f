#include "stages/controllers/controllers_stage.h"

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "client/api_calls.h"
#include "client/client.h"
#include "model/codec.h"
#include "model/conditions.h"
#include "model/events.h"
#include "model/objects.h"
#include "model/taints.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/cron_job_loop.h"
#include "stages/controllers/daemon_set_loop.h"
#include "stages/controllers/deployment_loop.h"
#include "stages/controllers/garbage_collector_loop.h"
#include "stages/controllers/job_loop.h"
#include "stages/controllers/node_lifecycle.h"
#include "stages/controllers/replica_set_loop.h"
#include "stages/controllers/taint_eviction.h"

namespace podflow::controllers {
namespace {

constexpr std::string_view kNodeController = "node-controller";
constexpr std::string_view kTaintEvictionController = "taint-eviction-controller";
constexpr uint32_t kEventNamerInstance = 400;
// The taint eviction controller's tries at one pod's deletion.
constexpr int kEvictionTries = 5;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// What the controllers keep of a pod: enough to find, mark and evict it.
struct PodView {
  std::string namespace_, name, uid, node;
  bool ready = false;
  std::vector<model::Toleration> tolerations;
};

// The node lifecycle controller and taint-based eviction, which read the same
// nodes and pods (in kube-controller-manager the taint manager was a part of
// the node lifecycle controller until it became a controller of its own).
// Runs on one thread.
class NodeLifecycleLoop {
 public:
  NodeLifecycleLoop(pipeline::StageContext& context, const NodeLifecycleConfig& config)
      : log_(Logger("stage.controllers")),
        health_(config),
        api_(context, kNodeController, kEventNamerInstance),
        nodes_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                        model::KindPrefix(model::Kind("Node"))),
        leases_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                         model::KindPrefix(model::Kind("Lease"), "kube-node-lease")),
        pods_informer_(context, model::KindPrefix(model::Kind("Pod"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers node_handlers{[this](const KeyValue& kv) { UpsertNode(kv); },
                                                   [this](const std::string& key) { RemoveNode(key); }};
    const client::Informer::Handlers lease_handlers{[this](const KeyValue& kv) { UpsertLease(kv); },
                                                    [](const std::string&) {}};
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { UpsertPod(kv); },
                                                  [this](const std::string& key) { RemovePod(key); }};
    SimTime next_monitor = WallClockNow();
    while (!stopping) {
      Status polled = nodes_informer_.Poll(std::chrono::milliseconds(0), node_handlers);
      if (polled.ok()) {
        polled = FollowPods(!attention_.empty() || evictions_.NextDue().has_value() || !retries_.empty(), pod_handlers);
      }
      const auto wait = std::chrono::milliseconds(pods_informer_.open() ? 0 : 100);
      if (polled.ok()) polled = leases_informer_.Poll(wait, lease_handlers);
      if (polled.ok()) polled = pods_informer_.Poll(std::chrono::milliseconds(100), pod_handlers);
      if (!polled.ok()) {
        log_->warn("following nodes and pods: {}", polled.ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      const SimTime now = WallClockNow();
      if (now >= next_monitor) {
        MonitorNodeHealth(now);
        next_monitor = now + health_.config().monitor_period;
      }
      for (const std::string& node : std::exchange(dirty_nodes_, {})) Reconcile(node, now, true);
      for (const std::string& pod : std::exchange(dirty_pods_, {})) DecideEviction(pod, now);
      for (const std::string& pod : evictions_.Due(now)) Evict(pod, 1, now);
      RetryEvictions(now);
    }
  }

 private:
  static std::string NameOf(const std::string& key) { return key.substr(key.rfind('/') + 1); }

  // The pods are followed only while some node needs them (not Ready, or
  // tainted NoExecute) or an eviction is pending: a cluster of healthy nodes
  // costs this loop no pod traffic. Once none does, what it held of them is
  // dropped; the next need lists them again.
  Status FollowPods(bool needed, const client::Informer::Handlers& handlers) {
    Result<bool> changed = pods_informer_.Follow(needed, handlers);
    if (!changed.ok()) return changed.status();
    if (!*changed) return Status::Ok();
    if (pods_informer_.open()) {
      log_->info("following pods: {} node(s) not Ready or tainted NoExecute", attention_.size());
      return Status::Ok();
    }
    pods_.clear();
    pods_by_node_.clear();
    dirty_pods_.clear();
    evicted_.clear();
    log_->info("no node needs its pods looked at: no longer following pods");
    return Status::Ok();
  }

  // Whether the node needs its pods looked at: not Ready, or tainted NoExecute.
  static bool NeedsAttention(const api::Node& node) {
    if (model::ConditionStatusOf(node, "Ready") != api::ConditionStatus::True) return true;
    if (node.spec() == nullptr || node.spec()->taints() == nullptr) return false;
    return std::any_of(node.spec()->taints()->begin(), node.spec()->taints()->end(),
                       [](const api::Taint* t) { return t->effect() == api::TaintEffect::NoExecute; });
  }

  void UpsertNode(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Node"), kv.value).ok()) {
      log_->warn("{}: not a valid Node; ignored", kv.key);
      return;
    }
    const std::string name = NameOf(kv.key);
    const api::Node& node = *flatbuffers::GetRoot<api::Node>(kv.value.data());
    health_.ObserveNode(name, node, WallClockNow());
    nodes_[name] = kv;
    dirty_nodes_.insert(name);
    if (NeedsAttention(node)) {
      attention_.insert(name);
    } else {
      attention_.erase(name);
    }
  }

  void RemoveNode(const std::string& key) {
    const std::string name = NameOf(key);
    // Its pods' evictions are decided again (without the node: cancelled).
    if (auto pods = pods_by_node_.find(name); pods != pods_by_node_.end()) {
      dirty_pods_.insert(pods->second.begin(), pods->second.end());
    }
    nodes_.erase(name);
    attention_.erase(name);
    was_ready_.erase(name);
    health_.Forget(name);
    dirty_nodes_.erase(name);
  }

  // A lease counts for a node known (the nodes are polled first); one of a
  // node gone is left alone.
  void UpsertLease(const KeyValue& kv) {
    const std::string node = NameOf(kv.key);
    if (!nodes_.contains(node) || !model::VerifyObject(model::Kind("Lease"), kv.value).ok()) return;
    health_.ObserveLease(node, *flatbuffers::GetRoot<api::Lease>(kv.value.data()), WallClockNow());
  }

  void UpsertPod(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
      log_->warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    const bool deleting = pod->metadata() && pod->metadata()->deletion_timestamp() &&
                          pod->metadata()->deletion_timestamp()->size() > 0;
    const std::string node = pod->spec() ? Str(pod->spec()->node_name()) : std::string();
    if (deleting || node.empty()) {
      RemovePod(kv.key);
      return;
    }
    PodView view{pod->metadata() ? Str(pod->metadata()->namespace_()) : std::string(),
                 pod->metadata() ? Str(pod->metadata()->name()) : std::string(),
                 pod->metadata() ? Str(pod->metadata()->uid()) : std::string(),
                 node,
                 model::ConditionIsTrue(*pod, "Ready"),
                 model::TolerationsOf(pod->spec())};
    auto it = pods_.find(kv.key);
    if (it != pods_.end() && it->second.node != node) pods_by_node_[it->second.node].erase(kv.key);
    pods_by_node_[node].insert(kv.key);
    PodView& kept = pods_[kv.key] = std::move(view);
    dirty_pods_.insert(kv.key);
    // A Ready pod on a node that is not (one bound since, or listed now) is
    // marked at once, as the controller's processPod does.
    auto on = nodes_.find(node);
    if (kept.ready && on != nodes_.end()) {
      const std::optional<api::ConditionStatus> ready =
          model::ConditionStatusOf(*flatbuffers::GetRoot<api::Node>(on->second.value.data()), "Ready");
      if (ready.has_value() && ready != api::ConditionStatus::True) MarkPodNotReady(kept, WallClockNow());
    }
  }

  void RemovePod(const std::string& key) {
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    pods_by_node_[it->second.node].erase(key);
    if (pods_by_node_[it->second.node].empty()) pods_by_node_.erase(it->second.node);
    pods_.erase(it);
    evictions_.Forget(key);
    retries_.erase(key);
    evicted_.erase(key);
    dirty_pods_.erase(key);
  }

  // monitorNodeHealth: a node not heard of within its grace period has its
  // kubelet's conditions marked Unknown; every node's taints and pods are
  // looked at again (what a failed write left undone is done now).
  void MonitorNodeHealth(SimTime now) {
    for (const auto& [name, kv] : nodes_) {
      const api::Node& node = *flatbuffers::GetRoot<api::Node>(kv.value.data());
      std::optional<api::NodeT> marked =
          health_.TimedOut(name, node, now) ? MarkedUnknown(node, now) : std::nullopt;
      if (marked && UpdateNode(kv, std::move(*marked), "status")) {
        log_->info("node {}: not heard of for {}; its conditions are Unknown", name,
                   FormatGoDuration(health_.config().grace_period));
        continue;  // the watch brings it back, to be reconciled then
      }
      Reconcile(name, now, /*decide_evictions=*/false);
    }
  }

  // A node changed (or its periodic look): its taints follow its
  // conditions; when it stopped being Ready, that is recorded and its pods
  // are marked not Ready; with `decide_evictions`, its pods' evictions are
  // decided again.
  void Reconcile(const std::string& name, SimTime now, bool decide_evictions) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return;
    const api::Node& node = *flatbuffers::GetRoot<api::Node>(it->second.value.data());
    const bool ready = model::ConditionStatusOf(node, "Ready") == api::ConditionStatus::True;
    auto [seen, first] = was_ready_.try_emplace(name, ready);
    if (!first && seen->second && !ready) {
      api_.Record({"Node", "v1", "", name, node.metadata() ? Str(node.metadata()->uid()) : std::string()}, "Normal", "NodeNotReady", "Node " + name + " status is now: NodeNotReady", now);
    }
    seen->second = ready;
    if (std::optional<api::NodeT> tainted = ConditionTaints(node, now)) {
      UpdateNode(it->second, std::move(*tainted), "");
    }
    auto pods = pods_by_node_.find(name);
    if (pods == pods_by_node_.end()) return;
    for (const std::string& key : pods->second) {
      PodView& pod = pods_[key];
      if (!ready && model::ConditionStatusOf(node, "Ready").has_value() && pod.ready) MarkPodNotReady(pod, now);
      if (decide_evictions) dirty_pods_.insert(key);
    }
  }

  void MarkPodNotReady(PodView& pod, SimTime now) {
    Result<client::ApiResponse> patched =
        api_.Call({.verb = "patch",
                   .resource = "pods",
                   .namespace_ = pod.namespace_,
                   .name = pod.name,
                   .subresource = "status",
                   .body = PodConditionPatch("Ready", "False", "", "", now),
                   .patch_type = "strategic"});
    if (!api_.Succeeded(patched, "marking pod " + pod.namespace_ + "/" + pod.name + " not ready")) return;
    pod.ready = false;
    api_.Record({"Pod", "v1", pod.namespace_, pod.name, pod.uid}, "Warning", "NodeNotReady",
           "Node is not ready", now);
  }

  // The pod's eviction, decided again from its node's NoExecute taints.
  void DecideEviction(const std::string& key, SimTime now) {
    auto pod = pods_.find(key);
    if (pod == pods_.end()) return;
    auto node = nodes_.find(pod->second.node);
    std::vector<model::Taint> taints;
    if (node != nodes_.end()) {
      taints = model::TaintsOf(flatbuffers::GetRoot<api::Node>(node->second.value.data())->spec());
    }
    const std::optional<SimDuration> delay = EvictionDelay(taints, pod->second.tolerations);
    // Once its deletion was tried (done, given up, or to be tried again),
    // the pod is not scheduled anew; the taints going ends all of that.
    if (evicted_.contains(key) || retries_.contains(key)) {
      if (delay) return;
      evicted_.erase(key);
      if (retries_.erase(key) == 0) return;
    } else if (evictions_.Update(key, delay, now) != TaintEvictions::Change::kCancelled) {
      return;
    }
    api_.RecordAs(kTaintEvictionController, {"Pod", "v1", pod->second.namespace_, pod->second.name, pod->second.uid},
           "Normal", "TaintManagerEviction",
           "Cancelling deletion of Pod " + pod->second.namespace_ + "/" + pod->second.name, now);
  }

  void RetryEvictions(SimTime now) {
    std::vector<std::pair<std::string, int>> due;
    for (const auto& [key, retry] : retries_) {
      if (retry.due <= now) due.emplace_back(key, retry.tries + 1);
    }
    for (const auto& [key, attempt] : due) Evict(key, attempt, now);
  }

  // The taint eviction controller's deletion (`attempt` 1, 2, ...):
  // recorded, the pod marked a disruption target, then deleted with its own
  // grace period; a failed delete is tried again (1 s, 2 s, ...) up to
  // kEvictionTries times. Tried, it stays evicted until the pod goes or its
  // taints do.
  void Evict(const std::string& key, int attempt, SimTime now) {
    retries_.erase(key);
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    const PodView pod = it->second;
    const model::ObjectRef ref{"Pod", "v1", pod.namespace_, pod.name, pod.uid};
    evicted_.insert(key);
    if (attempt == 1) {
      api_.RecordAs(kTaintEvictionController, ref, "Normal", "TaintManagerEviction",
             "Marking for deletion Pod " + pod.namespace_ + "/" + pod.name, now);
    }
    Result<client::ApiResponse> marked = api_.Call(
        {.verb = "patch",
         .resource = "pods",
         .namespace_ = pod.namespace_,
         .name = pod.name,
         .subresource = "status",
         .body = PodConditionPatch("DisruptionTarget", "True", "DeletionByTaintManager",
                                   "Taint manager: deleting due to NoExecute taint", now),
         .patch_type = "strategic"});
    (void)api_.Succeeded(marked, "marking pod " + pod.namespace_ + "/" + pod.name + " a disruption target");
    Result<client::ApiResponse> deleted =
        api_.Call({.verb = "delete", .resource = "pods", .namespace_ = pod.namespace_, .name = pod.name});
    const bool gone = deleted.ok() && deleted->status.code == 404;
    if (gone || api_.Succeeded(deleted, "evicting pod " + pod.namespace_ + "/" + pod.name)) {
      if (!gone) log_->info("pod {}/{} evicted from node {} (NoExecute taint)", pod.namespace_, pod.name, pod.node);
      return;
    }
    if (attempt >= kEvictionTries) {
      log_->warn("pod {}/{}: eviction given up after {} tries", pod.namespace_, pod.name, attempt);
      return;
    }
    evicted_.erase(key);
    retries_[key] = Retry{attempt, now + SimDuration(int64_t{1000} << (attempt - 1))};
  }

  // Writes `changed` (a change of the node `stored`) as an update of the node
  // or of its status, guarded by the revision it was decided on. A lost
  // guard is decided again when the node comes back changed.
  bool UpdateNode(const KeyValue& stored, api::NodeT changed, const std::string& subresource) {
    if (!changed.metadata) changed.metadata = std::make_unique<api::ObjectMetaT>();
    changed.metadata->resource_version = std::to_string(stored.mod_revision.value());
    return api_.Update(model::Kind("Node"), "", changed.metadata->name, subresource, model::Pack(changed)) ==
           ControllerApi::Updated::kWritten;
  }

  std::shared_ptr<spdlog::logger> log_;
  NodeHealth health_;
  TaintEvictions evictions_;
  ControllerApi api_;
  client::Informer nodes_informer_;
  client::Informer leases_informer_;
  OnDemandInformer pods_informer_;  // while some node needs its pods (FollowPods)
  std::map<std::string, KeyValue> nodes_;                      // by node name
  std::map<std::string, bool> was_ready_;                      // by node name: Ready when last looked at
  std::set<std::string> attention_;                            // nodes not Ready or tainted NoExecute
  std::map<std::string, PodView> pods_;                        // bound, not deleting; by key
  std::map<std::string, std::set<std::string>> pods_by_node_;  // node -> pod keys
  std::set<std::string> dirty_nodes_, dirty_pods_;
  struct Retry {
    int tries;    // deletes tried so far
    SimTime due;  // the next one
  };
  std::map<std::string, Retry> retries_;  // pod key -> a failed eviction's next try
  std::set<std::string> evicted_;         // pod keys whose deletion was done or given up

};

}  // namespace

Result<std::unique_ptr<ControllersStage>> ControllersStage::Create(pipeline::StageContext& context) {
  Result<ControllersConfig> config = ParseControllersConfig(context.config.Section("controllers"));
  if (!config.ok()) return config.status();
  return std::unique_ptr<ControllersStage>(new ControllersStage(context, *config));
}

Status ControllersStage::Start() {
  node_lifecycle_.Start([this](const std::atomic<bool>& stopping) {
    NodeLifecycleLoop(context_, config_.node_lifecycle).Run(stopping);
  });
  replica_sets_.Start([this](const std::atomic<bool>& stopping) { RunReplicaSetController(context_, stopping); });
  deployments_.Start([this](const std::atomic<bool>& stopping) { RunDeploymentController(context_, stopping); });
  daemon_sets_.Start([this](const std::atomic<bool>& stopping) { RunDaemonSetController(context_, stopping); });
  jobs_.Start([this](const std::atomic<bool>& stopping) { RunJobController(context_, stopping); });
  cron_jobs_.Start([this](const std::atomic<bool>& stopping) { RunCronJobController(context_, stopping); });
  garbage_collector_.Start([this](const std::atomic<bool>& stopping) { RunGarbageCollector(context_, stopping); });
  return Status::Ok();
}

void ControllersStage::Stop() {
  garbage_collector_.Stop();
  cron_jobs_.Stop();
  jobs_.Stop();
  daemon_sets_.Stop();
  deployments_.Stop();
  replica_sets_.Stop();
  node_lifecycle_.Stop();
}

}  // namespace podflow::controllers
