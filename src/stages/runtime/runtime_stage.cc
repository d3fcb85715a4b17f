#include "stages/runtime/runtime_stage.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "base/hex_id.h"
#include "base/logging.h"
#include "bus/bus.h"
#include "model/api_status.h"
#include "model/conditions.h"
#include "model/objects.h"
#include "netns/pod_network.h"
#include "client/client.h"
#include "stages/runtime/adopt.h"
#include "stages/runtime/kubelet_text.h"
#include "stages/runtime/node_lease.h"
#include "stages/runtime/process/process_engine.h"
#include "stages/runtime/report_outbox.h"
#include "stages/runtime/termination.h"

namespace podflow::runtime {
namespace {

// The uid of a stored Node ("" when it has none).
std::string UidOf(const api::Node& node) {
  return node.metadata() && node.metadata()->uid() ? node.metadata()->uid()->str() : std::string();
}

// Running and not Ready though kubelet's rules (its containers, its
// readiness gates) make it Ready: what the node lifecycle controller leaves
// of a pod whose node it lost.
bool ReadinessLost(const api::Pod& pod) {
  if (pod.status() == nullptr || pod.status()->phase() != api::PodPhase::Running || pod.spec() == nullptr ||
      !model::ConditionIsTrue(pod, "ContainersReady") || model::ConditionIsTrue(pod, "Ready")) {
    return false;
  }
  std::unique_ptr<api::PodSpecT> spec(pod.spec()->UnPack());
  std::unique_ptr<api::PodStatusT> status(pod.status()->UnPack());
  return model::ReadyCondition(*spec, *status).status == api::ConditionStatus::True;
}

// Whether a pod first seen by this process was already brought up by an
// earlier one: kubelet would find its containers running (or exited) and
// would not start them again.
// Running counts only once its containers were ready: a pod whose
// containers run but whose readiness is still to come has steps left, and
// is run again instead. ContainersReady, not Ready, says so: the node
// lifecycle controller turns only Ready False when it loses the node.
bool AlreadyUp(const api::Pod& pod) {
  if (pod.status() == nullptr) return false;
  switch (pod.status()->phase()) {
    case api::PodPhase::Succeeded:
    case api::PodPhase::Failed:
      return true;
    case api::PodPhase::Running:
      return model::ConditionIsTrue(pod, "ContainersReady");
    default:
      return false;
  }
}

// The grace period of a pod's deletion: metadata.deletionGracePeriodSeconds
// (what the delete asked for), else its spec's terminationGracePeriodSeconds.
SimDuration DeletionGrace(const api::Pod& pod) {
  int64_t seconds = 30;
  if (pod.metadata() && pod.metadata()->deletion_grace_period_seconds()) {
    seconds = *pod.metadata()->deletion_grace_period_seconds();
  } else if (pod.spec() && pod.spec()->termination_grace_period_seconds()) {
    seconds = *pod.spec()->termination_grace_period_seconds();
  }
  return SimDuration(std::clamp<int64_t>(seconds, 0, 1'000'000'000) * 1000);
}

// How long a push may wait for the status stage before the reports are kept
// for the next round.
constexpr std::chrono::milliseconds kPushTimeout{200};
// kubelet's lease controller retries a failed renewal after 200 ms at first.
constexpr SimDuration kLeaseRetry{200};
// Node status posts to one write (etcd's default --max-txn-ops), and how
// soon those of a write whose guard failed are tried again.
constexpr size_t kNodesPerWrite = 128;
constexpr SimDuration kNodeStatusRetry{1000};
// The kubelet channel's threads: an exec's turn holds one up to kExecTurnWait.
constexpr int kKubeletThreads = 4;
constexpr std::chrono::milliseconds kExecTurnWait{100};

}  // namespace

Result<std::unique_ptr<RuntimeStage>> RuntimeStage::Create(pipeline::StageContext& context) {
  Result<RuntimeConfig> config = ParseRuntimeConfig(context.config.Section("runtime"));
  if (!config.ok()) return config.status();
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  if (!nodes.ok()) return nodes.status();
  return std::unique_ptr<RuntimeStage>(new RuntimeStage(context, std::move(*config), std::move(*nodes)));
}

// The stage's loop, step by step; runs on the stage's one thread.
class RuntimeLoop {
 public:
  RuntimeLoop(pipeline::StageContext& context, const RuntimeConfig& config, const std::vector<SimNode>& nodes,
              LogMailbox& logs, ExecMailbox& execs)
      : logs_(logs),
        execs_(execs),
        config_(config),
        nodes_(nodes),
        log_(Logger("stage.runtime")),
        client_(context.bus, context.Endpoint("api"), std::string(RuntimeStage::kName)),
        reports_(context.bus, context.Endpoint("reports"), std::string(RuntimeStage::kName)),
        outbox_([this](std::string_view frame) { return reports_.Push(frame, kPushTimeout); }),
        catalog_(config.registry),
        agents_(&catalog_, config.timing),
        leases_(config.timing.node_lease_seconds),
        pods_(context.bus, context.Endpoint("api"), context.Endpoint("watch"), model::KindPrefix(model::Kind("Pod"))),
        node_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("Node"))),
        config_maps_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                     model::KindPrefix(model::Kind("ConfigMap"))),
        secrets_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                 model::KindPrefix(model::Kind("Secret"))) {
    agents_.SetClusterDns(config_.cluster_dns, config_.cluster_domain);
    // Adopted nodes take the runtime's type.
    if (config_.type == RuntimeType::kProcess ||
        std::ranges::any_of(nodes_, [](const SimNode& n) { return n.type == RuntimeType::kProcess; })) {
      const std::string data_dir = std::filesystem::absolute(context.config.data_dir).string();
      engine_ = std::make_unique<process::ProcessEngine>(process::EngineOptions{
          .log_root = data_dir + "/runtime/pods",
          .state_root = data_dir + "/runtime",
          .hidden = {data_dir},
          .owner = DeterministicHex(data_dir, 16),
          .limits = config_.ulimits,
          .network_prefix = config_.pod_network ? netns::PrefixFor(data_dir) : ""});
      for (const std::string& limit : engine_->limitations()) log_->warn("process runtime: {}", limit);
      agents_.SetContainerHost(engine_.get());
    }
    for (SimNode& node : nodes_) OnThisMachine(node);
    for (const SimNode& node : nodes_) hosted_defs_.push_back(NodeDefFromSim(node));
  }

  // A process node without a pod network is this machine, on its network:
  // its address is this machine's loopback, unless one was given.
  void OnThisMachine(SimNode& node) const {
    if (node.type == RuntimeType::kProcess && !node.internal_ip_given && !(engine_ && engine_->HasPodNetwork())) {
      node.internal_ip = *ParseIpv4("127.0.0.1");
    }
  }

  void Run(const std::atomic<bool>& stopping) {
    RegisterNodes(stopping);
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { UpsertPod(kv); },
                                                  [this](const std::string& key) { RemovePod(key); }};
    const client::Informer::Handlers node_handlers{[this](const KeyValue& kv) { UpsertNode(kv); },
                                                   [this](const std::string& key) { RemoveNode(key); }};
    // ConfigMaps and Secrets, as kubelet's managers keep them: read when a
    // container is created or a volume set up; a change reaches a process
    // node's volume files.
    const auto erase_source = [this](const std::string& key) { agents_.sources().Erase(key); };
    const client::Informer::Handlers map_handlers{
        [this](const KeyValue& kv) { PutSource<api::ConfigMap>(kv, "ConfigMap", ConfigMapData); }, erase_source};
    const client::Informer::Handlers secret_handlers{
        [this](const KeyValue& kv) { PutSource<api::Secret>(kv, "Secret", SecretData); }, erase_source};
    while (!stopping) {
      // Sleep in the watch until the next step is due (at most 100 ms).
      auto wait = std::chrono::milliseconds(100);
      for (std::optional<SimTime> due : {agents_.NextDue(), leases_.NextDue()}) {
        if (!due) continue;
        wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*due - WallClockNow()),
                          std::chrono::milliseconds(0), wait);
      }
      // Pods last: the first round lists what their containers read before them.
      Status polled = node_informer_.Poll(std::chrono::milliseconds(0), node_handlers);
      if (polled.ok()) polled = config_maps_.Poll(std::chrono::milliseconds(0), map_handlers);
      if (polled.ok()) polled = secrets_.Poll(std::chrono::milliseconds(0), secret_handlers);
      new_pods_ = false;
      if (polled.ok()) polled = pods_.Poll(wait, pod_handlers);
      // A ConfigMap or Secret written just before a new pod may have come
      // while the pods were awaited: taken before the pod's containers start.
      if (polled.ok() && new_pods_) polled = config_maps_.Poll(std::chrono::milliseconds(0), map_handlers);
      if (polled.ok() && new_pods_) polled = secrets_.Poll(std::chrono::milliseconds(0), secret_handlers);
      if (!polled.ok()) {
        log_->warn("following pods: {}", polled.ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      const auto now = std::chrono::steady_clock::now();
      outbox_.Send(agents_.Advance(WallClockNow()), now);
      logs_.AnswerAll([this](const LogQuestion& q) { return ContainerLog(q); });
      execs_.AnswerAll([this](const ExecQuestion& q) { return ExecTarget(q); });
      outbox_.ResendOverdue(now);
      RenewLeases();
      RetryAdoptions();
      PostNodeImages();
    }
  }

 private:
  // Registers the configured nodes: creates each Node unless it exists (a
  // restart keeps the registered object and its creationTimestamp).
  void RegisterNodes(const std::atomic<bool>& stopping) {
    for (SimNode& node : nodes_) {
      Status added = agents_.AddNode(node);
      if (!added.ok()) log_->error("node {}: {}", node.name, added.ToString());
      // A node the pod network could not take is on this machine's: its
      // address is what the agent set made it.
      if (const NodeRuntime* hosted = agents_.FindNode(node.name)) node.internal_ip = hosted->node().internal_ip;
    }
    hosted_defs_.clear();
    for (const SimNode& node : nodes_) hosted_defs_.push_back(NodeDefFromSim(node));
    stored_leases_ = StoredLeases(stopping);
    // A first start creates them kNodesPerWrite to a write; one of a write
    // that exists already (a restart), or a write that failed (too large,
    // the API away), sends that write's nodes one by one.
    std::vector<const SimNode*> unregistered;
    for (size_t first = 0; first < nodes_.size() && !stopping;) {
      const size_t end = std::min(nodes_.size(), first + kNodesPerWrite);
      std::vector<TxnOp> creates;
      for (size_t i = first; i < end; ++i) {
        creates.push_back(PutOp{model::ObjectKey(model::Kind("Node"), "", nodes_[i].name),
                                BuildNodeBytes(nodes_[i], catalog_, WallClockNow()), Revision(0)});
      }
      Result<client::WriteResult> written = client_.Write(creates, std::chrono::seconds(5));
      if (!written.ok()) {
        log_->warn("registering {} node(s) at once: {}; one by one", creates.size(), written.status().ToString());
      }
      for (size_t i = first; i < end; ++i) {
        if (!written.ok() || !written->succeeded) {
          unregistered.push_back(&nodes_[i]);
          continue;
        }
        log_->info("node {} registered", nodes_[i].name);
        HoldLease(nodes_[i].name, DeterministicUid("node/" + nodes_[i].name));
      }
      first = end;
    }
    std::reverse(unregistered.begin(), unregistered.end());  // taken from the back: in order
    while (!unregistered.empty() && !stopping) {
      const SimNode& node = *unregistered.back();
      const std::string key = model::ObjectKey(model::Kind("Node"), "", node.name);
      Result<client::WriteResult> written = client_.Write(
          {PutOp{key, BuildNodeBytes(node, catalog_, WallClockNow()), Revision(0)}}, std::chrono::seconds(1));
      if (!written.ok()) {
        log_->warn("registering node {}: {}; retrying", node.name, written.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      log_->info("node {} {}", node.name, written->succeeded ? "registered" : "already registered");
      std::string uid = DeterministicUid("node/" + node.name);
      if (!written->succeeded && written->current && model::VerifyObject(model::Kind("Node"), written->current->value).ok()) {
        uid = UidOf(*flatbuffers::GetRoot<api::Node>(written->current->value.data()));
      }
      HoldLease(node.name, uid);
      unregistered.pop_back();
    }
  }

  // The node leases stored before this start (an agent restarting renews
  // the lease it held), by node name.
  std::map<std::string, KeyValue> StoredLeases(const std::atomic<bool>& stopping) {
    std::map<std::string, KeyValue> out;
    const std::string prefix = model::KindPrefix(model::Kind("Lease"), kNodeLeaseNamespace);
    while (!stopping) {
      Result<RangeResult> listed = client_.List(prefix);
      if (!listed.ok()) {
        log_->warn("listing node leases: {}; retrying", listed.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      for (KeyValue& kv : listed->kvs) {
        if (!model::VerifyObject(model::Kind("Lease"), kv.value).ok()) continue;  // made anew
        std::string name = kv.key.substr(prefix.size());
        out.emplace(std::move(name), std::move(kv));
      }
      break;
    }
    return out;
  }

  // Holds (and renews from now on) the lease of `node`, the one stored
  // before this start if there is one.
  void HoldLease(const std::string& node, const std::string& node_uid) {
    auto it = stored_leases_.find(node);
    leases_.Add(node, node_uid, WallClockNow(),
                it == stored_leases_.end() ? nullptr : flatbuffers::GetRoot<api::Lease>(it->second.value.data()));
    if (it != stored_leases_.end()) stored_leases_.erase(it);
  }

  // Renews the leases due, all in one write; a failed write is tried again soon.
  void RenewLeases() {
    const SimTime now = WallClockNow();
    std::vector<NodeLeases::Write> due = leases_.Renew(now);
    if (due.empty()) return;
    std::vector<TxnOp> puts;
    puts.reserve(due.size());
    for (NodeLeases::Write& w : due) puts.push_back(PutOp{w.key, std::move(w.bytes)});
    Result<client::WriteResult> written = client_.Write(puts, std::chrono::seconds(1));
    if (!written.ok() || !written->succeeded) {
      log_->warn("renewing {} node lease(s): {}; retrying", due.size(),
                 written.ok() ? "not written" : written.status().ToString());
      leases_.RetryAfter(due, kLeaseRetry, now);
    }
  }

  // kubelet's periodic node status update, for what it changes here: the
  // images each node's pulls added, in Node.status.images (what the
  // scheduler's ImageLocality reads). Each node has its own period, from a
  // share of it taken by its name, so that nodes registered together do not
  // all write at once. Up to kNodesPerWrite of the nodes due go in one
  // write, each guarded by the revision it was read at. A write whose guard
  // failed (a node changed meanwhile) has its nodes tried again a second
  // later, once the watch has brought them; one that failed (the API is
  // away) ends this round, and its nodes wait for their next update.
  void PostNodeImages() {
    const SimTime now = WallClockNow();
    std::vector<TxnOp> puts;
    std::vector<std::string> names;
    bool failed = false;
    const auto write = [&] {
      Result<client::WriteResult> written = client_.Write(puts, std::chrono::seconds(1));
      if (!written.ok()) {
        log_->warn("posting the images of {} node(s): {}; at their next update", puts.size(),
                   written.status().ToString());
        failed = true;
      } else if (!written->succeeded) {
        for (const std::string& name : names) Reschedule(name, now + kNodeStatusRetry);
      }
      puts.clear();
      names.clear();
    };
    while (!failed && !status_due_.empty() && status_due_.top().first <= now) {
      const auto [due, name] = status_due_.top();
      status_due_.pop();
      auto kv = stored_nodes_.find(name);
      NodeRuntime* node = agents_.FindNode(name);
      if (kv == stored_nodes_.end() || node == nullptr || kv->second.status_due != due) continue;  // gone, or stale
      Reschedule(name, now + config_.timing.node_status_update);
      std::optional<api::NodeT> updated = NodeStatusUpdate(
          *flatbuffers::GetRoot<api::Node>(kv->second.node.value.data()), node->Images(now), node->node().internal_ip);
      if (!updated) continue;
      puts.push_back(PutOp{kv->second.node.key, model::Pack(*updated), kv->second.node.mod_revision});
      names.push_back(name);
      if (puts.size() == kNodesPerWrite) write();
    }
    if (!puts.empty()) write();
  }

  // The stored node's next status update is at `at`.
  void Reschedule(const std::string& name, SimTime at) {
    auto it = stored_nodes_.find(name);
    if (it == stored_nodes_.end()) return;
    it->second.status_due = at;
    status_due_.emplace(at, name);
  }

  // kubelet's answer to a pods/log request.
  Result<LogAnswer> ContainerLog(const LogQuestion& q) const {
    const PodRunner* runner = agents_.FindPod(q.pod_key);
    if (runner == nullptr || (!q.uid.empty() && runner->uid() != q.uid)) {
      const size_t slash = q.pod_key.rfind('/');
      return Status::NotFound("pod \"" + q.pod_key.substr(slash + 1) + "\" cannot be found - no logs available");
    }
    return runner->ContainerLog(q.query, WallClockNow());
  }

  // The running container an exec's command is to join, in kubelet's words
  // when there is none.
  Result<process::ExecTarget> ExecTarget(const ExecQuestion& q) const {
    const PodRunner* runner = agents_.FindPod(q.pod_key);
    if (runner == nullptr || (!q.uid.empty() && runner->uid() != q.uid)) return Status::NotFound("pod does not exist");
    Result<PodRunner::ExecInto> into = runner->ExecTarget(q.container);
    if (!into.ok()) return into.status();
    Result<process::ExecTarget> target =
        engine_ ? engine_->ExecTargetOf(into->process) : Result<process::ExecTarget>(Status::NotFound(""));
    if (!target.ok()) return Status::NotFound("container not found (" + kubelet_text::Quoted(q.container) + ")");
    target->env = std::move(into->env);
    target->working_dir = std::move(into->working_dir);
    return target;
  }

  template <typename T, typename Decode>
  void PutSource(const KeyValue& kv, std::string_view kind, Decode decode) {
    if (!model::VerifyObject(model::Kind(kind), kv.value).ok()) {
      log_->warn("{}: not a valid {}; ignored", kv.key, kind);
      agents_.sources().Erase(kv.key);
      return;
    }
    if (!agents_.sources().Put(kv.key, decode(*flatbuffers::GetRoot<T>(kv.value.data())))) return;  // same data
    std::string_view ns, name;
    if (model::SplitNamespacedKey(kv.key, &ns, &name)) agents_.SourceChanged(ns);
  }

  // A pod created or changed: hosted when bound to a node of this process.
  void UpsertPod(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
      log_->warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    const std::string node = pod->spec() && pod->spec()->node_name() ? pod->spec()->node_name()->str() : "";
    const bool deleting = pod->metadata() && pod->metadata()->deletion_timestamp() &&
                          pod->metadata()->deletion_timestamp()->size() > 0;
    unhosted_.erase(kv.key);
    if (!deleting) terminating_.erase(kv.key);  // a pod made again under the name
    if (deleting && agents_.HasNode(node)) {
      // Deleted: its containers are stopped gracefully (preStop, SIGTERM,
      // SIGKILL at the grace period's end); the status stage removes it
      // once they all have.
      const auto now = std::chrono::steady_clock::now();
      if (hosted_.contains(kv.key) &&
          agents_.TerminatePod(kv.key, DeletionGrace(*pod), WallClockNow(), kv.mod_revision.value()).ok()) {
        outbox_.Observe(kv.key, pod->status(), now);
        return;
      }
      // Not run here (adopted after a restart): stopped at once. Its IP is
      // kept out of the pool until the pod is gone (RemovePod): the stored
      // pod still shows it, so no new pod may get it meanwhile.
      if (!hosted_.contains(kv.key)) {
        const std::string ip = pod->status() && pod->status()->pod_ip() ? pod->status()->pod_ip()->str() : "";
        const std::string uid = pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
        if (agents_.AdoptPod(node, kv.key, uid, ip).ok()) hosted_.insert(kv.key);
      }
      if (terminating_.insert(kv.key).second) {
        std::unique_ptr<api::PodT> native(pod->UnPack());
        model::Report report = TerminationReport(*native, node, kv.mod_revision.value(), WallClockNow());
        report.pod_key = kv.key;
        outbox_.Send({std::move(report)}, now);
      }
      outbox_.Observe(kv.key, pod->status(), now);
      return;
    }
    if (node.empty() || !agents_.HasNode(node) || deleting) {
      if (hosted_.erase(kv.key)) {
        agents_.RemovePod(kv.key);
        outbox_.Forget(kv.key);
      }
      // Bound to a node not adopted yet: handed over when it is (a
      // deleted one then to be stopped).
      if (!node.empty()) unhosted_[kv.key] = kv;
      return;
    }
    const std::string uid = pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
    Status status;
    // A process node's containers did not outlive the runtime (they are
    // killed when it stops): a pod still Running there is run again.
    const bool gone = agents_.RunsProcesses(node) && pod->status() && pod->status()->phase() == api::PodPhase::Running;
    if (!hosted_.contains(kv.key) && AlreadyUp(*pod) && !gone) {
      const std::string ip = pod->status()->pod_ip() ? pod->status()->pod_ip()->str() : "";
      status = agents_.AdoptPod(node, kv.key, uid, ip);
      log_->info("{} is already up on {}: adopted", kv.key, node);
    } else {
      PodAssignment assignment{kv.key, kv.mod_revision.value(), std::shared_ptr<const api::PodT>(pod->UnPack())};
      new_pods_ = new_pods_ || !hosted_.contains(kv.key);
      status = agents_.AddPod(node, std::move(assignment), WallClockNow());
    }
    if (status.ok()) {
      hosted_.insert(kv.key);
      const auto now = std::chrono::steady_clock::now();
      outbox_.Observe(kv.key, pod->status(), now);
      // Ready taken away by the node lifecycle controller (the node was
      // lost for a while) while kubelet's rules make it Ready: posted again
      // once the node is Ready once more and nothing of this agent's is on
      // its way, as kubelet's status manager puts back a status the API
      // server holds otherwise; the status stage derives Ready again.
      if (ReadinessLost(*pod)) {
        lost_readiness_[kv.key] = kv;
        RepostPodStatus(kv.key, now);
      } else {
        lost_readiness_.erase(kv.key);
      }
    } else {
      log_->warn("{}: {}", kv.key, status.ToString());
    }
  }

  // Posts the stored status of a pod whose Ready was taken (lost_readiness_)
  // again, when its node is Ready and nothing for it is in flight.
  void RepostPodStatus(const std::string& key, std::chrono::steady_clock::time_point now) {
    auto it = lost_readiness_.find(key);
    if (it == lost_readiness_.end() || !outbox_.Settled(key)) return;
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(it->second.value.data());
    const std::string node = pod->spec()->node_name()->str();
    if (!ready_nodes_.contains(node)) return;  // again once it is
    std::unique_ptr<api::PodStatusT> stored(pod->status()->UnPack());
    const std::string uid = pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
    outbox_.Send({model::Report{node, key, uid, it->second.mod_revision.value(), std::move(*stored), {}}}, now);
    lost_readiness_.erase(it);
  }

  void RemovePod(const std::string& key) {
    lost_readiness_.erase(key);
    unhosted_.erase(key);
    terminating_.erase(key);
    if (hosted_.erase(key)) agents_.RemovePod(key);
    outbox_.Forget(key);
  }

  // Nodes created by others (the publisher) are adopted: this runtime
  // becomes their kubelet.
  void UpsertNode(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Node"), kv.value).ok()) return;
    const api::Node* stored = flatbuffers::GetRoot<api::Node>(kv.value.data());
    NodeDef def = NodeDefFromNode(*stored);
    if (def.name.empty()) return;
    if (agents_.HasNode(def.name)) {
      // What an earlier run pulled is still in the node's store.
      auto [seen, first] = stored_nodes_.try_emplace(def.name);
      seen->second.node = kv;
      if (first) {
        agents_.FindNode(def.name)->KeepImages(CachedImages(*stored, catalog_));
        const auto period = static_cast<uint64_t>(config_.timing.node_status_update.count());
        seen->second.status_due =
            WallClockNow() + SimDuration(static_cast<int64_t>(std::hash<std::string>{}(def.name) % period));
        status_due_.emplace(seen->second.status_due, def.name);
      }
      RepostStatus(kv, *stored);
      NoteReadiness(def.name, *stored);
      return;
    }
    Result<SimNode> node = ResolveAdopted(config_, hosted_defs_, def);
    if (!node.ok()) {
      log_->warn("{}", node.status().ToString());
      return;
    }
    node->images = CachedImages(*stored, catalog_);
    OnThisMachine(*node);
    Result<client::WriteResult> written = client_.Write(
        {PutOp{kv.key, model::Pack(AdoptedNode(*stored, *node, catalog_, WallClockNow())), kv.mod_revision}});
    if (!written.ok()) {
      log_->warn("adopting node {}: {}; will retry", def.name, written.status().ToString());
      adopt_retry_[kv.key] = kv;
      return;
    }
    if (!written->succeeded) return;  // changed meanwhile: the watch brings it again
    hosted_defs_.push_back(NodeDefFromSim(*node));
    node_names_[kv.key] = node->name;
    if (Status added = agents_.AddNode(*node); !added.ok()) log_->error("node {}: {}", node->name, added.ToString());
    HoldLease(node->name, UidOf(*stored));
    log_->info("node {} adopted (podCIDR {})", node->name, node->pod_cidr.ToString());
    // Pods bound to it before it was adopted are hosted now.
    std::vector<KeyValue> waiting;
    for (const auto& [key, pod_kv] : unhosted_) waiting.push_back(pod_kv);
    for (const KeyValue& pod_kv : waiting) UpsertPod(pod_kv);
  }

  void RemoveNode(const std::string& key) {
    stored_nodes_.erase(key.substr(key.rfind('/') + 1));  // no status is posted to a node no longer stored
    auto it = node_names_.find(key);
    if (it == node_names_.end()) return;  // configured nodes stay: their kubelet is this process
    std::erase_if(hosted_defs_, [&](const NodeDef& d) { return d.name == it->second; });
    agents_.RemoveNode(it->second);
    leases_.Remove(it->second);
    ready_nodes_.erase(it->second);
    // Its lease goes with it (the garbage collector's part, by its owner
    // reference, until there is one).
    Result<client::WriteResult> deleted = client_.Write({DeleteOp{NodeLeases::Key(it->second)}}, std::chrono::seconds(1));
    if (!deleted.ok()) log_->warn("removing the lease of node {}: {}", it->second, deleted.status().ToString());
    node_names_.erase(it);
  }

  // Whether a node of this runtime is Ready as stored; once it is, the pods
  // whose Ready was taken meanwhile get their status posted again.
  void NoteReadiness(const std::string& node, const api::Node& stored) {
    if (!model::ConditionIsTrue(stored, "Ready")) {
      ready_nodes_.erase(node);
      return;
    }
    if (!ready_nodes_.insert(node).second) return;
    std::vector<std::string> waiting;
    for (const auto& [key, kv] : lost_readiness_) waiting.push_back(key);
    for (const std::string& key : waiting) RepostPodStatus(key, std::chrono::steady_clock::now());
  }

  // A node of this runtime that is not Ready (marked Unknown while its agent
  // was away): the agent posts its status again, as kubelet does at its next
  // status update. Guarded; a lost guard brings the node again.
  void RepostStatus(const KeyValue& kv, const api::Node& stored) {
    std::optional<api::NodeT> reposted = RepostedNodeStatus(stored, WallClockNow());
    if (!reposted) return;
    Result<client::WriteResult> written =
        client_.Write({PutOp{kv.key, model::Pack(*reposted), kv.mod_revision}}, std::chrono::seconds(1));
    if (!written.ok()) {
      log_->warn("posting the status of node {}: {}; will retry", kv.key, written.status().ToString());
      adopt_retry_[kv.key] = kv;
      return;
    }
    if (written->succeeded) log_->info("node {} posted Ready", kv.key);
  }

  // Nodes whose adoption (or status post) failed on an error (not a
  // conflict) are tried again.
  void RetryAdoptions() {
    if (adopt_retry_.empty() || WallClockNow() < adopt_retry_at_) return;
    auto retry = std::move(adopt_retry_);
    adopt_retry_.clear();
    for (const auto& [key, kv] : retry) UpsertNode(kv);
    adopt_retry_at_ = WallClockNow() + SimDuration(1000);
  }

  LogMailbox& logs_;
  ExecMailbox& execs_;
  const RuntimeConfig& config_;
  std::vector<SimNode> nodes_;  // the configured ones
  std::shared_ptr<spdlog::logger> log_;
  client::ApiClient client_;
  bus::Pusher reports_;
  ReportOutbox outbox_;  // reports sent until the stored pods show them
  const ImageCatalog catalog_;
  // Runs the containers of process nodes (made only when there is one);
  // outlives the pods in `agents_`.
  std::unique_ptr<process::ProcessEngine> engine_;
  NodeAgentSet agents_;
  NodeLeases leases_;
  std::map<std::string, KeyValue> stored_leases_;  // node -> its lease as found at start, until held
  client::Informer pods_;
  client::Informer node_informer_;
  client::Informer config_maps_;
  client::Informer secrets_;
  bool new_pods_ = false;  // the last poll of the pods brought one to start
  std::vector<NodeDef> hosted_defs_;                     // configured and adopted nodes
  std::unordered_map<std::string, std::string> node_names_;  // adopted node key -> name, for removals
  // Pods bound to a node not hosted (yet): handed over if it is adopted.
  std::unordered_map<std::string, KeyValue> unhosted_;
  std::unordered_set<std::string> hosted_;  // pod keys handed to `agents_`
  std::unordered_set<std::string> terminating_;  // deleted pods whose stop was reported
  std::unordered_set<std::string> ready_nodes_;   // hosted nodes stored Ready
  std::map<std::string, KeyValue> lost_readiness_;  // pods whose Ready was taken, to post again
  std::unordered_map<std::string, KeyValue> adopt_retry_;  // node key -> the Node to adopt again
  struct StoredNode {
    KeyValue node;       // as last stored
    SimTime status_due;  // its next status update
  };
  std::unordered_map<std::string, StoredNode> stored_nodes_;  // by hosted node name
  // Each stored node's next status update (an entry that is not its
  // StoredNode's is dropped when due).
  std::priority_queue<std::pair<SimTime, std::string>, std::vector<std::pair<SimTime, std::string>>,
                      std::greater<>>
      status_due_;
  SimTime adopt_retry_at_{};
};

namespace {

// Only the apiserver (admission) asks the kubelet; it has checked the pod,
// the container's name and the caller's rights.
Status CheckAsker(std::string_view peer) {
  if (peer.empty() || peer == "admission") return Status::Ok();
  return Status::Forbidden("only the apiserver (admission) may ask the kubelet");
}

// kube-apiserver's status for the kubelet's refusal.
model::ApiStatusInfo KubeletStatus(const Status& refused) {
  switch (refused.code()) {
    case Code::kInvalid: return model::BadRequestStatus(refused.message());
    case Code::kNotFound: return {"Failure", 404, "NotFound", refused.message(), {}};
    case Code::kForbidden: return {"Failure", 403, "Forbidden", refused.message(), {}};
    default: return model::InternalErrorStatus(refused.message());
  }
}

// The kubelet channel's first request: a container's log.
bus::ReplyBody ServeLog(LogMailbox& logs, const msg::Envelope& request, std::string_view peer,
                        flatbuffers::FlatBufferBuilder& fbb) {
  model::ApiStatusInfo status{"Success", 200, "", "", {}};
  LogAnswer log;
  const msg::ContainerLogRequest* ask = request.body_as_ContainerLogRequest();
  if (ask == nullptr || ask->pod_key() == nullptr) {
    status = model::BadRequestStatus("the kubelet channel takes ContainerLogRequest messages naming a pod");
  } else if (Status asker = CheckAsker(peer); !asker.ok()) {
    status = KubeletStatus(asker);
  } else {
    LogQuery query;
    if (const msg::PodLogOptions* o = ask->options()) {
      query.container = o->container() ? o->container()->str() : "";
      query.previous = o->previous();
      query.timestamps = o->timestamps();
      auto opt = [](flatbuffers::Optional<int64_t> v) { return v ? std::optional<int64_t>(*v) : std::nullopt; };
      query.tail_lines = opt(o->tail_lines());
      query.since_seconds = opt(o->since_seconds());
      query.limit_bytes = opt(o->limit_bytes());
      query.from_line = opt(o->from_line());
    }
    Result<LogAnswer> answer = logs.Ask(
        {ask->pod_key()->str(), ask->uid() ? ask->uid()->str() : "", std::move(query)}, std::chrono::seconds(5));
    if (answer.ok()) {
      log = std::move(*answer);
    } else {
      status = KubeletStatus(answer.status());
    }
  }
  auto written = model::WriteApiStatus(fbb, status);
  auto reply = msg::CreateContainerLogReply(fbb, written, fbb.CreateString(log.text), log.lines,
                                            fbb.CreateString(log.container_id));
  return {msg::Body::ContainerLogReply, reply.Union()};
}

// The kubelet channel's other request: a command run in a container
// (`podflow exec`), started, then driven turn by turn. A session answers
// only the user who started it, on the pod it was started in.
bus::ReplyBody ServeExec(ExecMailbox& execs, process::ExecSessions& sessions, const msg::Envelope& request,
                         std::string_view peer, flatbuffers::FlatBufferBuilder& fbb) {
  model::ApiStatusInfo status{"Success", 200, "", "", {}};
  std::string session, error;
  process::ExecChunk chunk;
  const msg::ContainerExecRequest* ask = request.body_as_ContainerExecRequest();
  if (ask == nullptr || ask->pod_key() == nullptr || (ask->options() == nullptr) == (ask->input() == nullptr)) {
    status = model::BadRequestStatus("the kubelet channel's exec takes a pod and either a command or a session's input");
  } else if (Status asker = CheckAsker(peer); !asker.ok()) {
    status = KubeletStatus(asker);
  } else {
    // A session's turns name its pod and come from the user who started it.
    const std::string owner = ask->pod_key()->str() + "\n" + (ask->user() ? ask->user()->str() : "");
    const auto text = [](const flatbuffers::String* s) { return s ? s->str() : std::string(); };
    Status failed = Status::Ok();
    if (const msg::ExecInput* in = ask->input()) {
      session = text(in->session());
      process::ExecTurn turn;
      if (in->data()) turn.input.assign(reinterpret_cast<const char*>(in->data()->data()), in->data()->size());
      turn.close_stdin = in->close_stdin();
      turn.rows = in->rows();
      turn.cols = in->cols();
      Result<process::ExecChunk> got = sessions.Turn(session, owner, turn, kExecTurnWait);
      if (got.ok()) {
        chunk = std::move(*got);
      } else {
        failed = got.status();
      }
    } else {
      const msg::PodExecOptions& o = *ask->options();
      process::ExecCommand command;
      if (o.command()) {
        for (const flatbuffers::String* arg : *o.command()) command.argv.push_back(arg->str());
      }
      command.with_stdin = o.with_stdin();
      command.tty = o.tty();
      command.rows = o.rows();
      command.cols = o.cols();
      command.owner = owner;
      // Well within the apiserver's 6 s for the kubelet's answer, start included.
      Result<process::ExecTarget> target =
          execs.Ask({ask->pod_key()->str(), text(ask->uid()), text(o.container())}, std::chrono::seconds(3));
      Result<std::string> started = target.ok() ? sessions.Start(std::move(*target), command) : target.status();
      if (started.ok()) {
        session = *started;
      } else if (target.ok() && started.status().code() == Code::kInvalid) {
        // The command could not start: a CRI runtime's words, in the stream.
        status = model::InternalErrorStatus("error executing command in container: failed to exec in container: " +
                                            started.status().message());
        error = status.message;
      } else if (target.ok() && started.status().code() == Code::kNotFound) {
        failed = Status::NotFound("container not found (" + kubelet_text::Quoted(text(o.container())) + ")");
      } else {
        failed = started.status();
      }
    }
    if (!failed.ok()) {
      // The kubelet refused the stream (kubectl: "unable to upgrade connection").
      status = KubeletStatus(failed);
      error = "unable to upgrade connection: " + failed.message();
    }
  }
  auto written = model::WriteApiStatus(fbb, status);
  auto output = msg::CreateExecOutput(
      fbb, fbb.CreateString(session),
      fbb.CreateVector(reinterpret_cast<const uint8_t*>(chunk.out.data()), chunk.out.size()),
      fbb.CreateVector(reinterpret_cast<const uint8_t*>(chunk.err.data()), chunk.err.size()), chunk.exited,
      chunk.exit_code, chunk.input_waiting, fbb.CreateString(error));
  auto reply = msg::CreateContainerExecReply(fbb, written, output);
  return {msg::Body::ContainerExecReply, reply.Union()};
}

}  // namespace

Status RuntimeStage::Start() {
  kubelet_ = std::make_unique<bus::RpcServer>(
      context_.bus, context_.Endpoint("kubelet"), kKubeletThreads,
      [this](const msg::Envelope& request, std::string_view peer, flatbuffers::FlatBufferBuilder& fbb) {
        if (request.body_type() == msg::Body::ContainerExecRequest) {
          return ServeExec(execs_, exec_sessions_, request, peer, fbb);
        }
        return ServeLog(logs_, request, peer, fbb);
      });
  Status started = kubelet_->Start();
  if (!started.ok()) return started;
  loop_.Start([this](const std::atomic<bool>& stopping) {
    RuntimeLoop(context_, config_, nodes_, logs_, execs_).Run(stopping);
  });
  return Status::Ok();
}

void RuntimeStage::Stop() {
  if (kubelet_) kubelet_->Stop();  // no question waits for a loop that is gone
  // Before the containers: each one's end waits for what runs in its namespaces.
  exec_sessions_.KillAll();
  loop_.Stop();
}

}  // namespace podflow::runtime
