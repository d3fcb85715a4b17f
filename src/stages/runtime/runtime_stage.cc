#include "stages/runtime/runtime_stage.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "base/logging.h"
#include "bus/bus.h"
#include "model/objects.h"
#include "stages/persistence/informer.h"
#include "stages/runtime/adopt.h"

namespace podflow::runtime {
namespace {

// Whether a pod first seen by this process was already brought up by an
// earlier one: kubelet would find its containers running (or exited) and
// would not start them again.
// Running counts only once Ready: a pod whose containers run but whose
// readiness is still to come has steps left, and is run again instead.
bool AlreadyUp(const api::Pod& pod) {
  if (pod.status() == nullptr) return false;
  switch (pod.status()->phase()) {
    case api::PodPhase::Succeeded:
    case api::PodPhase::Failed:
      return true;
    case api::PodPhase::Running:
      if (pod.status()->conditions() == nullptr) return false;
      for (const api::PodCondition* c : *pod.status()->conditions()) {
        if (c->type() && c->type()->str() == "Ready") return c->status() == api::ConditionStatus::True;
      }
      return false;
    default:
      return false;
  }
}

// How long a push may wait for the status stage before the reports are kept
// for the next round.
constexpr std::chrono::milliseconds kPushTimeout{200};
// Reports kept while the status stage does not take them (merged per pod,
// so this bounds pods, not steps).
constexpr size_t kMaxUnsent = 100'000;

}  // namespace

Result<std::unique_ptr<RuntimeStage>> RuntimeStage::Create(pipeline::StageContext& context) {
  Result<RuntimeConfig> config = ParseRuntimeConfig(context.config.Section("runtime"));
  if (!config.ok()) return config.status();
  Result<std::vector<SimNode>> nodes = ResolveNodes(*config);
  if (!nodes.ok()) return nodes.status();
  return std::unique_ptr<RuntimeStage>(new RuntimeStage(context, std::move(*config), std::move(*nodes)));
}

Status RuntimeStage::Start() {
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void RuntimeStage::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void RuntimeStage::Loop() {
  auto log = Logger("stage.runtime");
  persistence::Client client(context_.zmq, context_.Endpoint("api"), std::string(kName));
  bus::Pusher reports(context_.zmq, context_.Endpoint("reports"));
  const ImageCatalog catalog(config_.registry);
  NodeAgentSet agents(&catalog, config_.timing);

  // Register the nodes: create each Node unless it exists (a restart keeps
  // the registered object and its creationTimestamp).
  for (const SimNode& node : nodes_) {
    Status added = agents.AddNode(node);
    if (!added.ok()) log->error("node {}: {}", node.name, added.ToString());
  }
  std::vector<const SimNode*> unregistered;
  for (const SimNode& node : nodes_) unregistered.push_back(&node);
  while (!unregistered.empty() && !stopping_) {
    const SimNode& node = *unregistered.back();
    const std::string key = model::ObjectKey(model::Kind("Node"), "", node.name);
    Result<persistence::WriteResult> written =
        client.Write({PutOp{key, BuildNodeBytes(node, catalog, WallClockNow()), Revision(0)}}, std::chrono::seconds(1));
    if (!written.ok()) {
      log->warn("registering node {}: {}; retrying", node.name, written.status().ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    log->info("node {} {}", node.name, written->succeeded ? "registered" : "already registered");
    unregistered.pop_back();
  }

  // Nodes created by others (the publisher) are adopted: this runtime
  // becomes their kubelet.
  std::vector<NodeDef> hosted_defs;
  for (const SimNode& node : nodes_) hosted_defs.push_back(NodeDefFromSim(node));
  std::unordered_map<std::string, std::string> node_names;  // node key -> name, for removals
  // Pods bound to a node not hosted (yet): handed over if it is adopted.
  std::unordered_map<std::string, KeyValue> unhosted;
  std::vector<model::Report> unsent;                              // reports the status stage did not take yet
  std::unordered_map<std::string, KeyValue> adopt_retry;  // node key -> the Node to adopt again
  SimTime adopt_retry_at{};

  persistence::Informer pods(context_.zmq, context_.Endpoint("api"), context_.Endpoint("watch"),
                             model::KindPrefix(model::Kind("Pod")));
  std::unordered_set<std::string> hosted;  // pod keys handed to `agents`
  std::function<void(const KeyValue&)> upsert_pod = [&](const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
      log->warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    const std::string node = pod->spec() && pod->spec()->node_name() ? pod->spec()->node_name()->str() : "";
    const bool deleting = pod->metadata() && pod->metadata()->deletion_timestamp() &&
                          pod->metadata()->deletion_timestamp()->size() > 0;
    unhosted.erase(kv.key);
    if (node.empty() || !agents.HasNode(node) || deleting) {
      if (hosted.erase(kv.key)) agents.RemovePod(kv.key);
      if (!node.empty() && !deleting) unhosted[kv.key] = kv;
      return;
    }
    const std::string uid = pod->metadata() && pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
    Status status;
    if (!hosted.contains(kv.key) && AlreadyUp(*pod)) {
      const std::string ip = pod->status()->pod_ip() ? pod->status()->pod_ip()->str() : "";
      status = agents.AdoptPod(node, kv.key, uid, ip);
      log->info("{} is already up on {}: adopted", kv.key, node);
    } else {
      PodAssignment assignment{kv.key, kv.mod_revision.value(), std::shared_ptr<const api::PodT>(pod->UnPack())};
      status = agents.AddPod(node, std::move(assignment), WallClockNow());
    }
    if (status.ok()) {
      hosted.insert(kv.key);
    } else {
      log->warn("{}: {}", kv.key, status.ToString());
    }
  };
  persistence::Informer::Handlers handlers{upsert_pod, [&](const std::string& key) {
                                             unhosted.erase(key);
                                             if (hosted.erase(key)) agents.RemovePod(key);
                                           }};

  persistence::Informer node_informer(context_.zmq, context_.Endpoint("api"), context_.Endpoint("watch"),
                                      model::KindPrefix(model::Kind("Node")));
  persistence::Informer::Handlers node_handlers{
      [&](const KeyValue& kv) {
        if (!model::VerifyObject(model::Kind("Node"), kv.value).ok()) return;
        const api::Node* stored = flatbuffers::GetRoot<api::Node>(kv.value.data());
        NodeDef def = NodeDefFromNode(*stored);
        if (def.name.empty() || agents.HasNode(def.name)) return;
        Result<SimNode> node = ResolveAdopted(config_, hosted_defs, def);
        if (!node.ok()) {
          log->warn("{}", node.status().ToString());
          return;
        }
        Result<persistence::WriteResult> written = client.Write(
            {PutOp{kv.key, model::Pack(AdoptedNode(*stored, *node, catalog, WallClockNow())), kv.mod_revision}});
        if (!written.ok()) {
          log->warn("adopting node {}: {}; will retry", def.name, written.status().ToString());
          adopt_retry[kv.key] = kv;
          return;
        }
        if (!written->succeeded) return;  // changed meanwhile: the watch brings it again
        hosted_defs.push_back(NodeDefFromSim(*node));
        node_names[kv.key] = node->name;
        (void)agents.AddNode(*node);
        log->info("node {} adopted (podCIDR {})", node->name, node->pod_cidr.ToString());
        std::vector<KeyValue> waiting;
        for (const auto& [key, pod_kv] : unhosted) waiting.push_back(pod_kv);
        for (const KeyValue& pod_kv : waiting) upsert_pod(pod_kv);
      },
      [&](const std::string& key) {
        auto it = node_names.find(key);
        if (it == node_names.end()) return;  // configured nodes stay: their kubelet is this process
        std::erase_if(hosted_defs, [&](const NodeDef& d) { return d.name == it->second; });
        agents.RemoveNode(it->second);
        node_names.erase(it);
      }};

  while (!stopping_) {
    // Sleep in the watch until the next step is due (at most 100 ms).
    auto wait = std::chrono::milliseconds(100);
    if (std::optional<SimTime> due = agents.NextDue()) {
      wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*due - WallClockNow()),
                        std::chrono::milliseconds(0), wait);
    }
    Status polled = node_informer.Poll(std::chrono::milliseconds(0), node_handlers);
    if (polled.ok()) polled = pods.Poll(wait, handlers);
    if (!polled.ok()) {
      log->warn("following pods: {}", polled.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    // Reports not taken last time go first; a pod's are merged into one.
    std::vector<model::Report> due = std::move(unsent);
    unsent.clear();
    for (model::Report& r : agents.Advance(WallClockNow())) due.push_back(std::move(r));
    model::CoalesceReports(due);
    for (size_t i = 0; i < due.size(); ++i) {
      std::string frame = model::EncodeReport(due[i]);
      Status pushed = reports.Push(zmq::message_t(frame.data(), frame.size()), kPushTimeout);
      if (!pushed.ok()) {
        log->warn("status stage not taking reports ({}); keeping {} for later", pushed.ToString(), due.size() - i);
        unsent.assign(std::make_move_iterator(due.begin() + static_cast<std::ptrdiff_t>(i)),
                      std::make_move_iterator(due.end()));
        if (unsent.size() > kMaxUnsent) {
          log->error("dropping {} reports: the status stage has not taken any for too long", unsent.size());
          unsent.clear();
        }
        break;
      }
    }
    // Nodes whose adoption failed on an error (not a conflict) are tried again.
    if (!adopt_retry.empty() && WallClockNow() >= adopt_retry_at) {
      auto retry = std::move(adopt_retry);
      adopt_retry.clear();
      for (const auto& [key, kv] : retry) node_handlers.upsert(kv);
      adopt_retry_at = WallClockNow() + SimDuration(1000);
    }
  }
}

}  // namespace podflow::runtime
