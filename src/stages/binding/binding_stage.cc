#include "stages/binding/binding_stage.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "base/logging.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"
#include "stages/persistence/persistence.h"
#include "stages/status/status.h"

namespace podflow::binding {
namespace {

constexpr uint32_t kEventNamerInstance = 200;  // + worker index
constexpr size_t kWorkers = 8;

}  // namespace

struct BindingStage::Worker {
  persistence::Client client;
  status::EventNamer namer;
};

namespace {

// Why a decision cannot be applied to the stored pod, or "" when it can.
template <typename D>
std::string Mismatch(const api::Pod& pod, const D& decision, int64_t mod_revision) {
  const std::string uid = pod.metadata() && pod.metadata()->uid() ? pod.metadata()->uid()->str() : "";
  if (uid != decision.pod_uid) return "the pod was re-created";
  if (pod.spec() && pod.spec()->node_name() && pod.spec()->node_name()->size() > 0) {
    return "already bound to " + pod.spec()->node_name()->str();
  }
  if (mod_revision != decision.pod_mod_revision) {
    return "the pod changed at revision " + std::to_string(mod_revision) + " after the decision on revision " +
           std::to_string(decision.pod_mod_revision);
  }
  return "";
}

}  // namespace

Result<std::unique_ptr<BindingStage>> BindingStage::Create(pipeline::StageContext& context) {
  return std::unique_ptr<BindingStage>(new BindingStage(context));
}

BindingStage::BindingStage(pipeline::StageContext& context) : context_(context) {}
BindingStage::~BindingStage() = default;

Status BindingStage::Start() {
  decisions_ = std::make_unique<bus::Puller>(context_.zmq, context_.Endpoint("decisions"));
  PODFLOW_RETURN_IF_ERROR(decisions_->Bind());
  for (size_t i = 0; i < kWorkers; ++i) {
    workers_.push_back(std::unique_ptr<Worker>(
        new Worker{persistence::Client(context_.zmq, context_.Endpoint("api"), std::string(kName)),
                   status::EventNamer(kEventNamerInstance + static_cast<uint32_t>(i))}));
  }
  lanes_ = std::make_unique<pipeline::ShardedWorkers<Decision>>(
      kWorkers, [this](size_t worker, std::vector<Decision>& batch) { Bind(worker, batch); });
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void BindingStage::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  lanes_->Stop();
  lanes_.reset();
  workers_.clear();
  decisions_.reset();
}

void BindingStage::Loop() {
  auto log = Logger("stage.binding");
  while (!stopping_) {
    Result<bus::Frame> frame = decisions_->Pull(std::chrono::milliseconds(100));
    if (!frame.ok()) continue;
    const msg::Decision* decision = frame->envelope().body_as_Decision();
    if (decision == nullptr || decision->pod_key() == nullptr || decision->pod_uid() == nullptr ||
        decision->node_name() == nullptr || decision->node_name()->size() == 0) {
      log->warn("dropped a frame on the decisions channel: not a decision with a pod and a node");
      continue;
    }
    Decision d{decision->pod_key()->str(), decision->pod_uid()->str(), decision->pod_mod_revision(),
               decision->node_name()->str(),
               decision->pod() ? std::string(reinterpret_cast<const char*>(decision->pod()->data()),
                                             decision->pod()->size())
                               : std::string(),
               decision->explanation() ? std::string(reinterpret_cast<const char*>(decision->explanation()->data()),
                                                     decision->explanation()->size())
                                       : std::string()};
    std::string key = d.pod_key;
    lanes_->Submit(key, std::move(d));
  }
}

void BindingStage::Bind(size_t index, std::vector<Decision>& decisions) {
  static auto log = Logger("stage.binding");
  Worker& w = *workers_[index];
  // One pod's part of the transaction.
  struct Binding {
    const Decision* decision;
    size_t op;  // index of the pod's put in `ops`
    size_t ops;  // how many ops are the pod's (pod, event, explanation)
  };
  std::vector<Binding> bindings;
  std::vector<TxnOp> ops;
  const runtime::SimTime now = runtime::WallClockNow();
  // Two decisions for one pod in a batch: the later one was made on a newer
  // revision (the scheduler decided again), so it is the one that stands.
  std::unordered_map<std::string_view, size_t> last;
  for (size_t i = 0; i < decisions.size(); ++i) last[decisions[i].pod_key] = i;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& decision = decisions[i];
    const std::string& key = decision.pod_key;
    const std::string& node = decision.node;
    if (last.at(key) != i) continue;
    // The pod as the decision saw it; read only when the decision did not
    // carry it. Either way the write is guarded by the decided revision.
    KeyValue kv;
    if (!decision.pod.empty()) {
      kv.key = key;
      kv.value = decision.pod;
      kv.mod_revision = Revision(decision.pod_mod_revision);
    } else {
      Result<RangeResult> read = w.client.Read(RangeRequest{key});
      if (!read.ok()) {
        // Not bound: the scheduler's assumption expires and it decides again.
        log->warn("binding {} to {}: reading the pod: {}", key, node, read.status().ToString());
        continue;
      }
      if (read->kvs.empty()) {
        log->info("binding {} to {}: the pod is gone", key, node);
        continue;
      }
      kv = std::move(read->kvs[0]);
    }
    if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
      log->error("binding {}: the pod does not verify", key);
      continue;
    }
    const api::Pod* stored = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    if (std::string why = Mismatch(*stored, decision, kv.mod_revision.value()); !why.empty()) {
      log->info("binding {} to {}: conflict: {}", key, node, why);
      continue;
    }
    std::unique_ptr<api::PodT> pod(stored->UnPack());
    if (!pod->metadata || !pod->spec) continue;
    pod->spec->node_name = node;
    if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
    status::SetCondition(*pod->status, {"PodScheduled", api::ConditionStatus::True, "", ""}, runtime::FormatTime(now));
    status::PackedEvent event =
        status::PackEvent(status::ScheduledEvent(*pod, node, now, w.namer, status::SchedulerOf(*pod)));
    const size_t first = ops.size();
    ops.push_back(PutOp{key, model::Pack(*pod), kv.mod_revision});
    ops.push_back(PutOp{std::move(event.key), std::move(event.bytes), std::nullopt, status::kEventTtlSeconds});
    if (!decision.explanation.empty()) {
      // Why the scheduler chose the node, with the binding it explains; it
      // lives as long as the events do.
      ops.push_back(PutOp{scheduler::DecisionKeyOfPod(key), decision.explanation, std::nullopt,
                          status::kEventTtlSeconds});
    }
    bindings.push_back(Binding{&decision, first, ops.size() - first});
  }

  // A failed guard names a pod that changed since its decision: that one is
  // a conflict (the scheduler decides again on the newer revision); the
  // others are written without it.
  while (!bindings.empty() && !stopping_) {
    Result<persistence::WriteResult> written = w.client.Write(ops);
    if (!written.ok()) {
      log->warn("binding {} pod(s): {}", bindings.size(), written.status().ToString());
      return;  // not bound: the scheduler's assumptions expire and it decides again
    }
    if (written->succeeded) {
      log->debug("bound {} pod(s) at revision {}", bindings.size(), written->revision.value());
      return;
    }
    auto failed = std::find_if(bindings.begin(), bindings.end(),
                               [&](const Binding& b) { return b.op == written->failed_op; });
    if (failed == bindings.end()) {
      log->error("binding: the log named op {} as failed, which is no pod", written->failed_op);
      return;
    }
    log->info("binding {} to {}: conflict: the pod changed before the write", failed->decision->pod_key,
              failed->decision->node);
    // Drop its ops (the pod, its event, its explanation) and renumber the rest.
    const size_t op = failed->op;
    const size_t n = failed->ops;
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(op), ops.begin() + static_cast<std::ptrdiff_t>(op + n));
    bindings.erase(failed);
    for (Binding& b : bindings) {
      if (b.op > op) b.op -= n;
    }
  }
}

}  // namespace podflow::binding
