#include "stages/controllers/replica_set_loop.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "apps_generated.h"
#include "client/client.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/value.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/owned_pods.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/pod_control.h"
#include "stages/controllers/replica_set.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 401;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// What the loop keeps of a ReplicaSet.
struct SetRecord {
  KeyValue kv;
  std::string namespace_, name, uid;
  std::string owner_uid;  // its controller's (a Deployment's); "" when none
  model::LabelSelector selector;
  bool selector_valid = false;
  bool deleting = false;
  int32_t replicas = 1;
  int32_t min_ready_seconds = 0;
  model::Labels template_labels;

  const api::ReplicaSet& stored() const { return *flatbuffers::GetRoot<api::ReplicaSet>(kv.value.data()); }
};

std::optional<SetRecord> ReadSet(const KeyValue& kv) {
  if (!model::VerifyObject(model::Kind("ReplicaSet"), kv.value).ok()) return std::nullopt;
  SetRecord out;
  out.kv = kv;
  const api::ReplicaSet& rs = out.stored();
  // Admission always writes both; anything else is not acted on.
  if (rs.metadata() == nullptr || rs.spec() == nullptr) return std::nullopt;
  if (const api::ObjectMeta* meta = rs.metadata()) {
    out.namespace_ = Str(meta->namespace_());
    out.name = Str(meta->name());
    out.uid = Str(meta->uid());
    out.deleting = meta->deletion_timestamp() != nullptr && meta->deletion_timestamp()->size() > 0;
    if (meta->owner_references() != nullptr) {
      for (const api::OwnerReference* ref : *meta->owner_references()) {
        if (ref->controller().value_or(false)) out.owner_uid = Str(ref->uid());
      }
    }
  }
  if (const api::ReplicaSetSpec* spec = rs.spec()) {
    out.replicas = spec->replicas().value_or(1);
    out.min_ready_seconds = spec->min_ready_seconds();
    Result<model::LabelSelector> selector = model::LabelSelector::FromApi(spec->selector());
    out.selector_valid = selector.ok();
    if (selector.ok()) out.selector = std::move(*selector);
    if (spec->template_() != nullptr && spec->template_()->metadata() != nullptr) {
      out.template_labels = model::LabelsFromEntries(spec->template_()->metadata()->labels());
    }
  }
  return out;
}

// The pod a ReplicaSet creates, named NAME-xxxxx, owned by the ReplicaSet.
std::string PodOf(const SetRecord& set) {
  const model::Value rs = model::ToValue(model::Kind("ReplicaSet"), set.kv.value);
  const model::Value* spec = rs.Find("spec");
  return model::ToJson(controllers::PodFromTemplate(spec != nullptr ? spec->Find("template") : nullptr, set.name + "-",
                                       set.namespace_, ControllerRef("apps/v1", "ReplicaSet", set.name, set.uid)));
}

class ReplicaSetLoop {
 public:
  explicit ReplicaSetLoop(pipeline::StageContext& context)
      : api_(context, kReplicaSetController, kEventNamerInstance),
        sets_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("ReplicaSet"))),
        pods_(context, model::KindPrefix(model::Kind("Pod"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers set_handlers{[this](const KeyValue& kv) { owned_.UpsertOwner(kv, ReadSet(kv), "ReplicaSet"); },
                                                  [this](const std::string& key) { owned_.RemoveOwner(key); }};
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { owned_.Upsert(kv); },
                                                  [this](const std::string& key) { owned_.Remove(key); }};
    RunWorkQueue(
        stopping, queue_,
        [&](std::chrono::milliseconds wait) {
          return PollKindAndPods(sets_informer_, set_handlers, pods_, pod_handlers, wait, [&] { return FollowPods(pod_handlers); });
        },
        [this](const Status& failed) { api_.log().warn("following replica sets and pods: {}", failed.ToString()); },
        [this](const std::string& key, SimTime now) { Sync(key, now); }, [this] { api_.FlushEvents(); });
  }

 private:
  // The pods are followed while there is a ReplicaSet: a pipeline without
  // any costs this loop no pod traffic. The ReplicaSets are synced only
  // once the pods are listed, so that none is taken for having no pods.
  Status FollowPods(const client::Informer::Handlers& handlers) {
    Result<bool> changed = pods_.Follow(!sets_.empty(), handlers);
    if (!changed.ok()) return changed.status();
    if (!*changed) return Status::Ok();
    if (pods_.open()) {
      api_.log().info("following pods: {} replica set(s)", sets_.size());
    } else {
      owned_.Clear();
      api_.log().info("no replica set left: no longer following pods");
    }
    return Status::Ok();
  }

  // syncReplicaSet: claims the pods (adopting the orphans it selects,
  // releasing its own it no longer selects), creates or deletes pods to
  // match replicas once its earlier ones are seen, and writes its status.
  void Sync(const std::string& key, SimTime now) {
    const SetRecord* found = sets_.Find(key);
    if (found == nullptr) return;
    const SetRecord& set = *found;
    bool claimed = true;
    const std::vector<const PodRecord*> active = Claim(set, claimed);
    std::string failure_reason, failure;
    const bool satisfied = expectations_.Satisfied(key, now);
    if (!satisfied) {
      // Looked at again when they lapse, if the watch has not met them by then.
      if (std::optional<SimTime> lapses = expectations_.Lapses(key)) queue_.Add(key, *lapses);
    }
    if (set.selector_valid && !set.deleting && claimed && satisfied) {
      const int diff = static_cast<int>(active.size()) - set.replicas;
      if (diff < 0) {
        failure = Create(set, std::min(-diff, kBurstReplicas), now);
        failure_reason = "FailedCreate";
      } else if (diff > 0) {
        failure = Delete(set, active, std::min(diff, kBurstReplicas), now);
        failure_reason = "FailedDelete";
      }
    }
    const ReplicaCounts counts = CountReplicas(active, set.template_labels, set.min_ready_seconds, now);
    const bool written = WriteStatus(set, counts, failure.empty() ? "" : failure_reason, failure, now);
    if (!failure.empty() || !written || !claimed) {
      queue_.AddRateLimited(key, now);
      return;
    }
    queue_.Forget(key);
    // A pod ready but not yet for minReadySeconds counts as available then.
    if (std::optional<SimTime> at = NextAvailable(active, set.min_ready_seconds, now)) queue_.Add(key, *at);
  }

  // The active pods the ReplicaSet controls, after adopting and releasing
  // (finished and deleting pods are neither).
  std::vector<const PodRecord*> Claim(const SetRecord& set, bool& claimed) {
    std::vector<PodRecord*> active = owned_.InNamespace(set.namespace_);
    std::erase_if(active, [](const PodRecord* pod) { return !IsActive(*pod); });
    return pod_control_.Claim(RefOf(set), set.selector_valid ? &set.selector : nullptr, set.deleting, active, claimed);
  }

  model::ObjectRef RefOf(const SetRecord& set) const {
    return {"ReplicaSet", "apps/v1", set.namespace_, set.name, set.uid};
  }

  // Creates `count` pods from its template; "" or the first failure.
  std::string Create(const SetRecord& set, int count, SimTime now) {
    return pod_control_.Create(set.kv.key, RefOf(set), std::vector<std::string>(count, PodOf(set)), now);
  }

  // Deletes `count` of `active`, the ones ranked first; "" or the first failure.
  std::string Delete(const SetRecord& set, const std::vector<const PodRecord*>& active, int count, SimTime now) {
    // Siblings (ReplicaSets of the same Deployment) count towards how
    // doubled up a node is; a ReplicaSet of no owner has none, and its own
    // pods do not count either, as in kube-controller-manager.
    std::vector<const PodRecord*> related;
    if (!set.owner_uid.empty()) {
      for (const PodRecord* pod : owned_.InNamespace(set.namespace_)) {
        const SetRecord* owner = sets_.FindByUid(pod->controller_uid);
        if (owner != nullptr && owner->owner_uid == set.owner_uid) related.push_back(pod);
      }
    }
    return pod_control_.Delete(set.kv.key, RefOf(set), PodsToDelete(active, related, count, now), now);
  }

  // Writes the status the counts call for (observedGeneration, and the
  // ReplicaFailure condition while creating or deleting fails), unless it
  // is so already. False when it should be tried again.
  bool WriteStatus(const SetRecord& set, const ReplicaCounts& counts, const std::string& failure_reason,
                   const std::string& failure, SimTime now) {
    std::unique_ptr<api::ReplicaSetT> rs(set.stored().UnPack());
    if (!rs->status) rs->status = std::make_unique<api::ReplicaSetStatusT>();
    api::ReplicaSetStatusT& status = *rs->status;
    const int64_t generation = rs->metadata ? rs->metadata->generation : 0;
    bool changed = status.replicas != counts.replicas || status.fully_labeled_replicas != counts.fully_labeled ||
                   status.ready_replicas != counts.ready || status.available_replicas != counts.available ||
                   status.observed_generation != generation;
    status.replicas = counts.replicas;
    status.fully_labeled_replicas = counts.fully_labeled;
    status.ready_replicas = counts.ready;
    status.available_replicas = counts.available;
    status.observed_generation = generation;
    auto& conditions = status.conditions;
    auto failed = std::ranges::find_if(conditions, [](const auto& c) { return c->type == "ReplicaFailure"; });
    if (!failure.empty() && failed == conditions.end()) {
      auto condition = std::make_unique<api::ReplicaSetConditionT>();
      condition->type = "ReplicaFailure";
      condition->status = api::ConditionStatus::True;
      condition->reason = failure_reason;
      condition->message = failure;
      condition->last_transition_time = FormatRfc3339(now);
      conditions.push_back(std::move(condition));
      changed = true;
    } else if (failure.empty() && failed != conditions.end()) {
      conditions.erase(failed);
      changed = true;
    }
    if (!changed) return true;
    rs->metadata->resource_version = std::to_string(set.kv.mod_revision.value());
    return api_.Update(model::Kind("ReplicaSet"), set.namespace_, set.name, "status", model::Pack(*rs)) !=
           ControllerApi::Updated::kFailed;
  }

  ControllerApi api_;
  client::Informer sets_informer_;
  OnDemandInformer pods_;  // while there is a ReplicaSet (FollowPods)
  ObjectIndex<SetRecord> sets_;
  Expectations expectations_;
  WorkQueue queue_;
  OwnedPods<SetRecord> owned_{sets_, expectations_, queue_, api_.log()};
  PodControl pod_control_{api_, expectations_};
};

}  // namespace

void RunReplicaSetController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  ReplicaSetLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
