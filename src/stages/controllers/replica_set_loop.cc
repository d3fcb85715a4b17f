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
    const client::Informer::Handlers set_handlers{[this](const KeyValue& kv) { UpsertSet(kv); },
                                                  [this](const std::string& key) { RemoveSet(key); }};
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { UpsertPod(kv); },
                                                  [this](const std::string& key) { RemovePod(key); }};
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
      pod_records_.clear();
      pods_by_namespace_.clear();
      api_.log().info("no replica set left: no longer following pods");
    }
    return Status::Ok();
  }

  void UpsertSet(const KeyValue& kv) {
    std::optional<SetRecord> set = ReadSet(kv);
    if (!set) {
      api_.log().warn("{}: not a valid ReplicaSet; ignored", kv.key);
      return;
    }
    sets_.Put(kv.key, std::move(*set));
    queue_.Add(kv.key, WallClockNow());
  }

  void RemoveSet(const std::string& key) {
    if (!sets_.Erase(key)) return;
    expectations_.Forget(key);
    queue_.Forget(key);
  }

  // The ReplicaSets a pod's change concerns: its controller's, or, for an
  // orphan, every one in its namespace that selects it (to adopt it).
  void EnqueueFor(const PodRecord& pod, SimTime now) {
    if (!pod.controller_uid.empty()) {
      if (const std::string* key = sets_.KeyOf(pod.controller_uid)) queue_.Add(*key, now);
      return;
    }
    if (pod.deleting) return;
    for (const auto& [key, set] : sets_.records()) {
      if (set.namespace_ == pod.namespace_ && set.selector.Matches(pod.labels)) queue_.Add(key, now);
    }
  }

  void UpsertPod(const KeyValue& kv) {
    std::optional<PodRecord> pod = ReadPod(kv.key, kv.value);
    if (!pod) {
      api_.log().warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const SimTime now = WallClockNow();
    auto it = pod_records_.find(kv.key);
    const std::string* owner = pod->controller_uid.empty() ? nullptr : sets_.KeyOf(pod->controller_uid);
    for (const std::string& met : expectations_.ObservePod(kv.key, pod->deleting, it == pod_records_.end(), owner)) {
      queue_.Add(met, now);
    }
    if (it != pod_records_.end() && (it->second.controller_uid != pod->controller_uid || it->second.labels != pod->labels)) {
      EnqueueFor(it->second, now);
    }
    EnqueueFor(*pod, now);
    pods_by_namespace_[pod->namespace_].insert(kv.key);
    pod_records_[kv.key] = std::move(*pod);
  }

  void RemovePod(const std::string& key) {
    const SimTime now = WallClockNow();
    if (std::optional<std::string> owner = expectations_.Observe(key, /*present=*/false)) queue_.Add(*owner, now);
    auto it = pod_records_.find(key);
    if (it == pod_records_.end()) return;
    EnqueueFor(it->second, now);
    auto in_namespace = pods_by_namespace_.find(it->second.namespace_);
    if (in_namespace != pods_by_namespace_.end()) {
      in_namespace->second.erase(key);
      if (in_namespace->second.empty()) pods_by_namespace_.erase(in_namespace);
    }
    pod_records_.erase(it);
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
    if (set.min_ready_seconds > 0) {
      for (const PodRecord* pod : active) {
        if (pod->ready && pod->ready_at && !IsAvailable(*pod, set.min_ready_seconds, now)) {
          queue_.Add(key, *pod->ready_at + std::chrono::seconds(set.min_ready_seconds));
        }
      }
    }
  }

  // The active pods the ReplicaSet controls, after adopting and releasing
  // (finished and deleting pods are neither); `claimed` false when an
  // adoption or release failed (the sync then changes nothing and is tried
  // again).
  std::vector<const PodRecord*> Claim(const SetRecord& set, bool& claimed) {
    std::vector<const PodRecord*> owned;
    claimed = true;
    auto in_namespace = pods_by_namespace_.find(set.namespace_);
    if (in_namespace == pods_by_namespace_.end()) return owned;
    for (const std::string& pod_key : in_namespace->second) {
      PodRecord& pod = pod_records_.at(pod_key);
      if (!IsActive(pod)) continue;
      const bool selected = set.selector_valid && set.selector.Matches(pod.labels);
      if (pod.controller_uid == set.uid) {
        if (selected) {
          owned.push_back(&pod);
        } else if (!set.deleting) {
          const ControllerApi::Updated released =
              api_.PatchOwners(model::Kind("Pod"), pod.namespace_, pod.name, ReleasePatch(set.uid, pod.uid), "releasing");
          if (released == ControllerApi::Updated::kWritten) pod.controller_uid.clear();
          claimed &= released != ControllerApi::Updated::kFailed;
        }
      } else if (pod.controller_uid.empty() && selected && !set.deleting) {
        const ControllerApi::Updated adopted = api_.PatchOwners(
            model::Kind("Pod"), pod.namespace_, pod.name,
            AdoptPatch(ControllerRef("apps/v1", "ReplicaSet", set.name, set.uid), pod.uid), "adopting");
        if (adopted == ControllerApi::Updated::kWritten) {
          pod.controller_uid = set.uid;
          owned.push_back(&pod);
        }
        claimed &= adopted != ControllerApi::Updated::kFailed;
      }
    }
    return owned;
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
      for (const std::string& pod_key : pods_by_namespace_[set.namespace_]) {
        const PodRecord& pod = pod_records_.at(pod_key);
        const SetRecord* owner = sets_.FindByUid(pod.controller_uid);
        if (owner != nullptr && owner->owner_uid == set.owner_uid) related.push_back(&pod);
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
  std::map<std::string, PodRecord> pod_records_;     // by key
  std::map<std::string, std::set<std::string>> pods_by_namespace_;
  Expectations expectations_;
  PodControl pod_control_{api_, expectations_};
  WorkQueue queue_;
};

}  // namespace

void RunReplicaSetController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  ReplicaSetLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
