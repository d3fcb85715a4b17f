#include "stages/binding/binding_stage.h"

#include <string_view>
#include <unordered_map>

#include "base/logging.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"
#include "client/update.h"
#include "base/clock.h"
#include "model/conditions.h"
#include "model/events.h"

namespace podflow::binding {
namespace {

constexpr uint32_t kEventNamerInstance = 200;  // + worker index
constexpr size_t kWorkers = 8;

}  // namespace

struct BindingStage::Worker {
  client::ApiClient client;
  model::EventNamer namer;
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

BindingStage::BindingStage(pipeline::StageContext& context)
    : pull_(context, Pull::Spec{"decisions", "stage.binding", kWorkers,
                                [&context](size_t i) {
                                  return std::unique_ptr<Worker>(new Worker{
                                      client::ApiClient(context.bus, context.Endpoint("api"), std::string(kName)),
                                      model::EventNamer(kEventNamerInstance + static_cast<uint32_t>(i))});
                                },
                                DecodeDecision,
                                [this](Worker& worker, std::vector<Decision>& batch) { Bind(worker, batch); },
                                {"scheduling"}}) {}
BindingStage::~BindingStage() = default;
Status BindingStage::Start() { return pull_.Start(); }
void BindingStage::Stop() { pull_.Stop(); }

Result<std::vector<BindingStage::Pull::Decoded>> BindingStage::DecodeDecision(const bus::Frame& frame) {
  const msg::Decision* decision = frame.envelope().body_as_Decision();
  if (decision == nullptr || decision->pod_key() == nullptr || decision->pod_uid() == nullptr ||
      decision->node_name() == nullptr || decision->node_name()->size() == 0) {
    return Status::Invalid("not a decision with a pod and a node");
  }
  auto bytes = [](const flatbuffers::Vector<uint8_t>* v) {
    return v ? std::string(reinterpret_cast<const char*>(v->data()), v->size()) : std::string();
  };
  Decision d{decision->pod_key()->str(), decision->pod_uid()->str(), decision->pod_mod_revision(),
             decision->node_name()->str(), bytes(decision->pod()), bytes(decision->explanation())};
  std::string key = d.pod_key;
  std::vector<Pull::Decoded> out;
  out.push_back(Pull::Decoded{std::move(key), std::move(d)});
  return out;
}

void BindingStage::Bind(Worker& w, std::vector<Decision>& decisions) {
  static auto log = Logger("stage.binding");
  const SimTime now = WallClockNow();
  // Two decisions for one pod in a batch: the later one was made on a newer
  // revision (the scheduler decided again), so it is the one that stands.
  std::unordered_map<std::string_view, size_t> last;
  for (size_t i = 0; i < decisions.size(); ++i) last[decisions[i].pod_key] = i;
  std::vector<const Decision*> bound;
  std::vector<client::UpdateItem> items;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& decision = decisions[i];
    if (last.at(decision.pod_key) != i) continue;
    client::UpdateItem item;
    item.key = decision.pod_key;
    // The pod as the decision saw it, when the decision carried it (else it
    // is read). Either way the write is guarded by the decided revision.
    if (!decision.pod.empty()) item.known = KeyValue{decision.pod_key, decision.pod, {}, Revision(decision.pod_mod_revision)};
    item.mutate = [&w, &decision, now](const KeyValue* current, bool) -> client::Mutation {
      if (current == nullptr) return client::Mutation::Skip(Status::NotFound("the pod is gone"));
      if (!model::VerifyObject(model::Kind("Pod"), current->value).ok()) {
        return client::Mutation::Skip(Status::Corruption("the pod does not verify"));
      }
      const api::Pod* stored = flatbuffers::GetRoot<api::Pod>(current->value.data());
      // A pod that changed since its decision is a conflict: the scheduler
      // decides again on the newer revision.
      if (std::string why = Mismatch(*stored, decision, current->mod_revision.value()); !why.empty()) {
        return client::Mutation::Skip(Status::Conflict(why));
      }
      std::unique_ptr<api::PodT> pod(stored->UnPack());
      if (!pod->metadata || !pod->spec) return client::Mutation::Skip(Status::Invalid("the pod has no metadata or spec"));
      pod->spec->node_name = decision.node;
      if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
      model::SetCondition(*pod->status, {"PodScheduled", api::ConditionStatus::True, "", ""}, FormatRfc3339(now));
      model::PackedEvent event =
          model::PackEvent(model::ScheduledEvent(*pod, decision.node, now, w.namer, model::SchedulerOf(*pod)));
      std::vector<TxnOp> extra;
      extra.push_back(PutOp{std::move(event.key), std::move(event.bytes), std::nullopt, model::kEventTtlSeconds});
      if (!decision.explanation.empty()) {
        // Why the scheduler chose the node, with the binding it explains; it
        // lives as long as the events do.
        extra.push_back(PutOp{scheduler::DecisionKeyOfPod(decision.pod_key), decision.explanation, std::nullopt,
                              model::kEventTtlSeconds});
      }
      return client::Mutation::Put(model::Pack(*pod), std::move(extra));
    };
    items.push_back(std::move(item));
    bound.push_back(&decision);
  }
  // Not bound (an error, a conflict): the scheduler's assumption expires and
  // it decides again.
  client::UpdatePolicy policy;
  policy.max_attempts = 2;  // a lost guard is decided once more: the pod changed, so it is a conflict
  policy.stopping = [this] { return pull_.stopping(); };
  std::vector<client::UpdateOutcome> outcomes = client::UpdateBatch(w.client, std::move(items), policy);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Decision& d = *bound[i];
    const client::UpdateOutcome& o = outcomes[i];
    if (o.written) {
      log->debug("bound {} to {} at revision {}", d.pod_key, d.node, o.revision.value());
    } else if (o.status.code() == Code::kConflict || o.status.code() == Code::kNotFound) {
      log->info("binding {} to {}: {}", d.pod_key, d.node, o.status.message());
    } else {
      log->warn("binding {} to {}: {}", d.pod_key, d.node, o.status.ToString());
    }
  }
}

}  // namespace podflow::binding
