#include "stages/controllers/deployment_loop.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "apps_generated.h"
#include "client/client.h"
#include "model/codec.h"
#include "model/labels.h"
#include "model/objects.h"
#include "model/pod_template.h"
#include "model/value.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/deployment.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 402;

// The Deployment's annotations a ReplicaSet does not take over.
constexpr std::string_view kNotCopied[] = {"kubectl.kubernetes.io/last-applied-configuration", kRevisionAnnotation,
                                           kRevisionHistoryAnnotation, kDesiredReplicasAnnotation,
                                           kMaxReplicasAnnotation, "deprecated.deployment.rollback.to"};

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

std::string ControllerUid(const api::ObjectMeta* meta) {
  if (meta == nullptr || meta->owner_references() == nullptr) return {};
  for (const api::OwnerReference* ref : *meta->owner_references()) {
    if (ref->controller().value_or(false)) return Str(ref->uid());
  }
  return {};
}

bool Deleting(const api::ObjectMeta* meta) {
  return meta != nullptr && meta->deletion_timestamp() != nullptr && meta->deletion_timestamp()->size() > 0;
}

std::optional<int64_t> ParseInt(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(*text, &used);
    if (used == text->size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Sets key to value among `entries`; whether it changed.
bool SetEntry(std::vector<std::unique_ptr<api::StringEntryT>>& entries, std::string_view key, const std::string& value) {
  auto it = std::ranges::find_if(entries, [&](const auto& e) { return e->key == key; });
  if (it != entries.end()) {
    if ((*it)->value == value) return false;
    (*it)->value = value;
    return true;
  }
  auto entry = std::make_unique<api::StringEntryT>();
  entry->key = std::string(key);
  entry->value = value;
  entries.push_back(std::move(entry));
  return true;
}

struct DeploymentRecord {
  KeyValue kv;
  std::string namespace_, name, uid;
  model::LabelSelector selector;
  bool selector_valid = false;
  bool deleting = false;
  std::string template_key;

  const api::Deployment& stored() const { return *flatbuffers::GetRoot<api::Deployment>(kv.value.data()); }
  int32_t desired() const { return stored().spec() ? stored().spec()->replicas().value_or(1) : 1; }
  bool recreate() const {
    const api::DeploymentSpec* spec = stored().spec();
    return spec && spec->strategy() && spec->strategy()->type() == api::DeploymentStrategyType::Recreate;
  }
  // progressDeadlineSeconds, unless unset or "never" (MaxInt32).
  std::optional<int32_t> deadline() const {
    const api::DeploymentSpec* spec = stored().spec();
    if (spec == nullptr || !spec->progress_deadline_seconds().has_value()) return std::nullopt;
    const int32_t seconds = *spec->progress_deadline_seconds();
    if (seconds == std::numeric_limits<int32_t>::max()) return std::nullopt;
    return seconds;
  }
  model::ObjectRef ref() const { return {"Deployment", "apps/v1", namespace_, name, uid}; }
};

struct SetRecord {
  KeyValue kv;
  std::string namespace_, uid, controller_uid;
  model::Labels labels, annotations;
  std::string template_key;
  SetState state;
  std::optional<int64_t> desired_annotation;
  int64_t generation = 0, observed_generation = 0;
  struct Failure {
    std::string reason, message, since;
  };
  std::optional<Failure> failure;  // its ReplicaFailure condition, when True

  const api::ReplicaSet& stored() const { return *flatbuffers::GetRoot<api::ReplicaSet>(kv.value.data()); }
};

std::optional<DeploymentRecord> ReadDeployment(const KeyValue& kv) {
  const model::KindInfo& kind = model::Kind("Deployment");
  if (!model::VerifyObject(kind, kv.value).ok()) return std::nullopt;
  DeploymentRecord out;
  out.kv = kv;
  const api::Deployment& d = out.stored();
  // Admission always writes both; anything else is not acted on.
  if (d.metadata() == nullptr || d.spec() == nullptr) return std::nullopt;
  out.namespace_ = d.metadata() ? Str(d.metadata()->namespace_()) : std::string();
  out.name = d.metadata() ? Str(d.metadata()->name()) : std::string();
  out.uid = d.metadata() ? Str(d.metadata()->uid()) : std::string();
  out.deleting = Deleting(d.metadata());
  if (d.spec() != nullptr) {
    Result<model::LabelSelector> selector = model::LabelSelector::FromApi(d.spec()->selector());
    out.selector_valid = selector.ok();
    if (selector.ok()) out.selector = std::move(*selector);
  }
  out.template_key = model::PodTemplateKey(kind, kv.value);
  return out;
}

std::optional<SetRecord> ReadSet(const KeyValue& kv) {
  const model::KindInfo& kind = model::Kind("ReplicaSet");
  if (!model::VerifyObject(kind, kv.value).ok()) return std::nullopt;
  SetRecord out;
  out.kv = kv;
  const api::ReplicaSet& rs = out.stored();
  if (rs.metadata() == nullptr || rs.spec() == nullptr) return std::nullopt;
  if (const api::ObjectMeta* meta = rs.metadata()) {
    out.state.name = Str(meta->name());
    out.namespace_ = Str(meta->namespace_());
    out.uid = Str(meta->uid());
    out.controller_uid = ControllerUid(meta);
    out.labels = model::LabelsFromEntries(meta->labels());
    out.annotations = model::LabelsFromEntries(meta->annotations());
    out.state.deleting = Deleting(meta);
    out.generation = meta->generation();
    if (auto created = ParseRfc3339(Str(meta->creation_timestamp()))) {
      out.state.created = std::chrono::floor<SimDuration>(*created);
    }
  }
  out.state.replicas = rs.spec() ? rs.spec()->replicas().value_or(1) : 1;
  if (const api::ReplicaSetStatus* status = rs.status()) {
    out.state.current = status->replicas();
    out.state.ready = status->ready_replicas();
    out.state.available = status->available_replicas();
    out.observed_generation = status->observed_generation();
    if (status->conditions() != nullptr) {
      for (const api::ReplicaSetCondition* c : *status->conditions()) {
        if (Str(c->type()) == "ReplicaFailure" && c->status() == api::ConditionStatus::True) {
          out.failure = SetRecord::Failure{Str(c->reason()), Str(c->message()), Str(c->last_transition_time())};
        }
      }
    }
  }
  out.state.revision = ParseInt(model::FindLabel(out.annotations, kRevisionAnnotation)).value_or(0);
  if (auto max = ParseInt(model::FindLabel(out.annotations, kMaxReplicasAnnotation))) {
    out.state.max_replicas = static_cast<int32_t>(*max);
  }
  out.desired_annotation = ParseInt(model::FindLabel(out.annotations, kDesiredReplicasAnnotation));
  out.template_key = model::PodTemplateKey(kind, kv.value);
  return out;
}

// A Deployment's ReplicaSets for one sync: the new one (its template's),
// and the old ones.
struct Members {
  SetRecord* new_set = nullptr;
  std::vector<SetRecord*> old_sets;

  std::vector<SetRecord*> all() const {
    std::vector<SetRecord*> out = old_sets;
    if (new_set != nullptr) out.push_back(new_set);
    return out;
  }
};

class DeploymentLoop {
 public:
  explicit DeploymentLoop(pipeline::StageContext& context)
      : api_(context, kDeploymentController, kEventNamerInstance),
        deployments_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                              model::KindPrefix(model::Kind("Deployment"))),
        sets_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("ReplicaSet"))),
        pods_(context, model::KindPrefix(model::Kind("Pod"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers deployment_handlers{[this](const KeyValue& kv) { UpsertDeployment(kv); },
                                                         [this](const std::string& key) { RemoveDeployment(key); }};
    const client::Informer::Handlers set_handlers{[this](const KeyValue& kv) { UpsertSet(kv); },
                                                  [this](const std::string& key) { RemoveSet(key); }};
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { UpsertPod(kv); },
                                                  [this](const std::string& key) { RemovePod(key); }};
    RunWorkQueue(
        stopping, queue_,
        [&](std::chrono::milliseconds wait) {
          Status polled = deployments_informer_.Poll(std::chrono::milliseconds(0), deployment_handlers);
          if (polled.ok()) polled = sets_informer_.Poll(pods_.open() ? std::chrono::milliseconds(0) : wait, set_handlers);
          if (polled.ok()) polled = FollowPods(pod_handlers);
          if (polled.ok()) polled = pods_.Poll(wait, pod_handlers);
          return polled;
        },
        [this](const Status& failed) {
          api_.log().warn("following deployments and replica sets: {}", failed.ToString());
        },
        [this](const std::string& key, SimTime now) { Sync(key, now); });
  }

 private:
  // The pods are followed only while a Deployment uses Recreate, whose
  // rollout waits for the old pods to be gone.
  Status FollowPods(const client::Informer::Handlers& handlers) {
    const bool needed =
        std::ranges::any_of(deployments_.records(), [](const auto& d) { return d.second.recreate(); });
    Result<bool> changed = pods_.Follow(needed, handlers);
    if (!changed.ok()) return changed.status();
    if (*changed && !pods_.open()) pod_owners_.clear();
    return Status::Ok();
  }

  // ---- what the informers bring

  void UpsertDeployment(const KeyValue& kv) {
    std::optional<DeploymentRecord> d = ReadDeployment(kv);
    if (!d) {
      api_.log().warn("{}: not a valid Deployment; ignored", kv.key);
      return;
    }
    deployments_.Put(kv.key, std::move(*d));
    queue_.Add(kv.key, WallClockNow());
  }

  void RemoveDeployment(const std::string& key) {
    if (deployments_.Erase(key)) queue_.Forget(key);
  }

  // The Deployments a ReplicaSet's change concerns: its controller, or,
  // for an orphan, every one in its namespace that selects it.
  void EnqueueFor(const SetRecord& rs, SimTime now) {
    if (!rs.controller_uid.empty()) {
      if (const std::string* key = deployments_.KeyOf(rs.controller_uid)) queue_.Add(*key, now);
      return;
    }
    if (rs.state.deleting) return;
    for (const auto& [key, d] : deployments_.records()) {
      if (d.namespace_ == rs.namespace_ && d.selector_valid && d.selector.Matches(rs.labels)) queue_.Add(key, now);
    }
  }

  void UpsertSet(const KeyValue& kv) {
    std::optional<SetRecord> rs = ReadSet(kv);
    if (!rs) {
      api_.log().warn("{}: not a valid ReplicaSet; ignored", kv.key);
      return;
    }
    const SimTime now = WallClockNow();
    EnqueueFor(*rs, now);
    std::optional<SetRecord> old = sets_.Put(kv.key, std::move(*rs));
    const SetRecord& now_stored = *sets_.Find(kv.key);
    if (old && (old->controller_uid != now_stored.controller_uid || old->labels != now_stored.labels)) {
      EnqueueFor(*old, now);
    }
  }

  void RemoveSet(const std::string& key) {
    if (std::optional<SetRecord> was = sets_.Erase(key)) EnqueueFor(*was, WallClockNow());
  }

  struct PodOwner {
    std::string set_uid;  // its controller's uid
    bool finished = false;
  };

  void TouchPodOwner(const PodOwner& pod) {
    if (const SetRecord* rs = sets_.FindByUid(pod.set_uid)) EnqueueFor(*rs, WallClockNow());
  }

  void UpsertPod(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) return;
    const api::Pod& pod = *flatbuffers::GetRoot<api::Pod>(kv.value.data());
    PodOwner owner{ControllerUid(pod.metadata()),
                   pod.status() != nullptr && (pod.status()->phase() == api::PodPhase::Succeeded ||
                                               pod.status()->phase() == api::PodPhase::Failed)};
    auto [it, added] = pod_owners_.try_emplace(kv.key, owner);
    if (!added && it->second.set_uid == owner.set_uid && it->second.finished == owner.finished) return;
    if (!added) TouchPodOwner(it->second);
    it->second = owner;
    TouchPodOwner(owner);
  }

  void RemovePod(const std::string& key) {
    auto it = pod_owners_.find(key);
    if (it == pod_owners_.end()) return;
    TouchPodOwner(it->second);
    pod_owners_.erase(it);
  }

  // ---- syncDeployment

  void Sync(const std::string& key, SimTime now) {
    const DeploymentRecord* found = deployments_.Find(key);
    if (found == nullptr) return;
    const DeploymentRecord& d = *found;
    if (!d.selector_valid || d.selector.MatchesEverything()) {
      const api::Deployment& stored = d.stored();
      if (stored.status() == nullptr || stored.status()->observed_generation() < stored.metadata()->generation()) {
        api_.Record(d.ref(), "Warning", "SelectingAll",
                    "This deployment is selecting all pods. A non-empty selector is required.", now);
        std::unique_ptr<api::DeploymentT> next(stored.UnPack());
        if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
        next->status->observed_generation = next->metadata->generation;
        WriteStatus(d, *next);
      }
      return;
    }
    bool claimed = true;
    Members members = Claim(d, claimed);
    bool ok = true;
    if (!claimed) {
      ok = false;
    } else if (d.deleting) {
      ok = SyncStatus(d, members, now, /*rollout=*/false);
    } else if (std::optional<bool> paused = PausedConditions(d, now); !paused.has_value() || *paused) {
      ok = paused.has_value();  // the condition written: back by watch
    } else if (d.stored().spec()->paused() || ScalingEvent(d, members)) {
      ok = ScaleAndCleanUp(d, members, now);
    } else if (d.recreate()) {
      ok = Recreate(d, members, now);
    } else {
      ok = Rolling(d, members, now);
    }
    if (ok) {
      queue_.Forget(key);
    } else {
      queue_.AddRateLimited(key, now);
    }
  }

  // The Deployment's ReplicaSets: those it controls that it selects, after
  // adopting the orphans it selects and releasing its own it does not. The
  // new one is the oldest whose template is the Deployment's. `claimed`
  // false when an adoption or release failed (the sync then changes
  // nothing and is tried again).
  Members Claim(const DeploymentRecord& d, bool& claimed) {
    claimed = true;
    std::vector<SetRecord*> owned;
    for (auto& [key, rs] : sets_.records()) {
      if (rs.namespace_ != d.namespace_) continue;
      const bool selected = d.selector.Matches(rs.labels);
      if (rs.controller_uid == d.uid) {
        if (selected) {
          owned.push_back(&rs);
        } else if (!d.deleting) {
          const ControllerApi::Updated released = api_.PatchOwners(model::Kind("ReplicaSet"), rs.namespace_,
                                                                   rs.state.name, ReleasePatch(d.uid, rs.uid), "releasing");
          if (released == ControllerApi::Updated::kWritten) rs.controller_uid.clear();
          claimed &= released != ControllerApi::Updated::kFailed;
        }
      } else if (rs.controller_uid.empty() && selected && !rs.state.deleting && !d.deleting) {
        const ControllerApi::Updated adopted = api_.PatchOwners(
            model::Kind("ReplicaSet"), rs.namespace_, rs.state.name,
            AdoptPatch(ControllerRef("apps/v1", "Deployment", d.name, d.uid), rs.uid), "adopting");
        if (adopted == ControllerApi::Updated::kWritten) {
          rs.controller_uid = d.uid;
          owned.push_back(&rs);
        }
        claimed &= adopted != ControllerApi::Updated::kFailed;
      }
    }
    std::ranges::sort(owned, [](const SetRecord* a, const SetRecord* b) {
      if (a->state.created != b->state.created) return a->state.created < b->state.created;
      return a->state.name < b->state.name;
    });
    Members out;
    for (SetRecord* rs : owned) {
      if (out.new_set == nullptr && rs->template_key == d.template_key) {
        out.new_set = rs;
      } else {
        out.old_sets.push_back(rs);
      }
    }
    return out;
  }

  // checkPausedConditions: the Progressing condition says when a
  // Deployment with a progress deadline is paused and resumed. nullopt: a
  // write failed; true: the condition was written (the sync ends there);
  // false: nothing to write.
  std::optional<bool> PausedConditions(const DeploymentRecord& d, SimTime now) {
    if (!d.deadline()) return false;
    const bool paused = d.stored().spec()->paused();
    std::unique_ptr<api::DeploymentT> next(d.stored().UnPack());
    if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
    auto& conditions = next->status->conditions;
    auto progressing = std::ranges::find_if(conditions, [](const auto& c) { return c->type == "Progressing"; });
    // A Deployment that has run out of time keeps saying so.
    if (progressing != conditions.end() && (*progressing)->reason == "ProgressDeadlineExceeded") return false;
    const bool paused_shown = progressing != conditions.end() && (*progressing)->reason == "DeploymentPaused";
    if (paused == paused_shown) return false;
    SetDeploymentCondition(*next->status,
                           paused ? DeploymentCondition("Progressing", api::ConditionStatus::Unknown, "DeploymentPaused",
                                                        "Deployment is paused", now)
                                  : DeploymentCondition("Progressing", api::ConditionStatus::Unknown,
                                                        "DeploymentResumed", "Deployment is resumed", now));
    if (!WriteStatus(d, *next)) return std::nullopt;
    return true;
  }

  // isScalingEvent: an active ReplicaSet was sized for another replicas.
  static bool ScalingEvent(const DeploymentRecord& d, const Members& members) {
    return std::ranges::any_of(members.all(), [&](const SetRecord* rs) {
      return rs->state.replicas > 0 && rs->desired_annotation.has_value() && *rs->desired_annotation != d.desired();
    });
  }

  // ---- rollouts

  // rolloutRolling: the new ReplicaSet up within maxSurge, then the old
  // ones down within maxUnavailable; each step ends the sync (the watch
  // brings the next).
  bool Rolling(const DeploymentRecord& d, Members members, SimTime now) {
    std::optional<bool> synced = SyncRevision(d, members, now);
    if (!synced.has_value()) return false;
    if (!*synced) return true;  // written: back by watch
    const Fenceposts f = ResolveFenceposts(*d.stored().spec());
    const int32_t desired = d.desired();
    if (members.new_set == nullptr) {
      int32_t all = 0;
      for (const SetRecord* rs : members.old_sets) all += rs->state.replicas;
      return CreateNewSet(d, members, RollingNewReplicas(desired, f, all, 0), now);
    }
    SetRecord& new_set = *members.new_set;
    if (new_set.state.replicas != desired) {
      int32_t all = 0;
      for (const SetRecord* rs : members.all()) all += rs->state.replicas;
      const int32_t target =
          new_set.state.replicas > desired ? desired : RollingNewReplicas(desired, f, all, new_set.state.replicas);
      if (target != new_set.state.replicas) {
        if (!ScaleSet(d, new_set, target, now)) return false;
        return SyncStatus(d, members, now, true);
      }
    }
    std::vector<SetState> lowered;
    for (const SetRecord* rs : members.old_sets) lowered.push_back(rs->state);
    std::vector<SetState*> old_states;
    for (SetState& s : lowered) old_states.push_back(&s);
    if (ScaleDownOld(desired, f, &new_set.state, old_states) > 0) {
      for (size_t i = 0; i < lowered.size(); ++i) {
        SetRecord& rs = *members.old_sets[i];
        if (lowered[i].replicas != rs.state.replicas && !ScaleSet(d, rs, lowered[i].replicas, now)) return false;
      }
      return SyncStatus(d, members, now, true);
    }
    if (Complete(d)) CleanUp(d, members, now);
    return SyncStatus(d, members, now, true);
  }

  // rolloutRecreate: every old ReplicaSet to 0; once none of their pods
  // runs, the new one at the full size.
  bool Recreate(const DeploymentRecord& d, Members members, SimTime now) {
    std::optional<bool> synced = SyncRevision(d, members, now);
    if (!synced.has_value()) return false;
    if (!*synced) return true;
    bool scaled = false;
    for (SetRecord* rs : members.old_sets) {
      if (rs->state.replicas == 0) continue;
      if (!ScaleSet(d, *rs, 0, now)) return false;
      scaled = true;
    }
    if (scaled || OldPodsRunning(members)) return SyncStatus(d, members, now, true);
    if (members.new_set == nullptr) return CreateNewSet(d, members, d.desired(), now);
    if (members.new_set->state.replicas != d.desired() && !ScaleSet(d, *members.new_set, d.desired(), now)) return false;
    if (Complete(d)) CleanUp(d, members, now);
    return SyncStatus(d, members, now, true);
  }

  bool OldPodsRunning(const Members& members) const {
    std::set<std::string> old_uids;
    for (const SetRecord* rs : members.old_sets) {
      if (rs->state.current > 0) return true;
      old_uids.insert(rs->uid);
    }
    return std::ranges::any_of(pod_owners_, [&](const auto& pod) {
      return !pod.second.finished && old_uids.contains(pod.second.set_uid);
    });
  }

  // sync: a paused Deployment, or one resized: its ReplicaSets scaled to
  // the new size (proportionally while more than one is active), no
  // rollout; the history cleaned up while paused.
  bool ScaleAndCleanUp(const DeploymentRecord& d, Members members, SimTime now) {
    std::optional<bool> synced = SyncRevision(d, members, now);
    if (!synced.has_value()) return false;
    if (!*synced) return true;
    if (!Scale(d, members, now)) return false;
    if (d.stored().spec()->paused()) CleanUp(d, members, now);
    return SyncStatus(d, members, now, false);
  }

  bool Scale(const DeploymentRecord& d, const Members& members, SimTime now) {
    const int32_t desired = d.desired();
    std::vector<SetRecord*> active;
    for (SetRecord* rs : members.all()) {
      if (rs->state.replicas > 0) active.push_back(rs);
    }
    // One active (or none: the newest): it takes the new size.
    SetRecord* only = active.size() == 1 ? active.front() : nullptr;
    if (active.empty()) {
      only = members.new_set != nullptr ? members.new_set
                                        : (members.old_sets.empty() ? nullptr : members.old_sets.back());
    }
    if (active.size() <= 1) {
      return only == nullptr || only->state.replicas == desired || ScaleSet(d, *only, desired, now);
    }
    // The new one is complete: the old ones go.
    const SetRecord* n = members.new_set;
    if (n != nullptr && n->state.replicas == desired && n->desired_annotation == desired && n->state.available == desired) {
      for (SetRecord* rs : members.old_sets) {
        if (rs->state.replicas > 0 && !ScaleSet(d, *rs, 0, now)) return false;
      }
      return true;
    }
    if (d.recreate()) return true;
    std::vector<SetState> sized;
    for (const SetRecord* rs : active) sized.push_back(rs->state);
    std::vector<SetState*> states;
    for (SetState& s : sized) states.push_back(&s);
    const int32_t status_replicas = d.stored().status() ? d.stored().status()->replicas() : 0;
    ScaleProportionally(desired, ResolveFenceposts(*d.stored().spec()), status_replicas, states);
    for (size_t i = 0; i < active.size(); ++i) {
      if (!ScaleSet(d, *active[i], sized[i].replicas, now)) return false;
    }
    return true;
  }

  // ---- the new ReplicaSet and the revisions

  // getNewReplicaSet's bookkeeping: the new ReplicaSet takes the next
  // revision (the one before it kept in revision-history), the
  // Deployment's annotations and minReadySeconds; the Deployment takes its
  // revision. nullopt: a write failed; false: something was written (the
  // sync ends; the watch brings it back); true: nothing to write.
  std::optional<bool> SyncRevision(const DeploymentRecord& d, const Members& members, SimTime now) {
    if (members.new_set == nullptr) return true;
    SetRecord& rs = *members.new_set;
    const int64_t revision = NextRevision(members);
    std::unique_ptr<api::ReplicaSetT> next(rs.stored().UnPack());
    bool changed = CopyAnnotations(d, *next->metadata);
    if (rs.state.revision < revision) {
      if (rs.state.revision > 0) {
        const std::string* history = model::FindLabel(rs.annotations, kRevisionHistoryAnnotation);
        std::string revisions =
            (history != nullptr && !history->empty() ? *history + "," : "") + std::to_string(rs.state.revision);
        // At most 2000 characters, the oldest dropped first.
        while (revisions.size() > 2000 && revisions.find(',') != std::string::npos) {
          revisions.erase(0, revisions.find(',') + 1);
        }
        if (revisions.size() <= 2000) SetEntry(next->metadata->annotations, kRevisionHistoryAnnotation, revisions);
      }
      changed |= SetEntry(next->metadata->annotations, kRevisionAnnotation, std::to_string(revision));
    }
    if (next->spec->min_ready_seconds != d.stored().spec()->min_ready_seconds()) {
      next->spec->min_ready_seconds = d.stored().spec()->min_ready_seconds();
      changed = true;
    }
    if (changed) return UpdateSet(rs, *next) ? std::optional<bool>(false) : std::nullopt;
    // The Deployment's revision is its new ReplicaSet's.
    const std::string set_revision = std::to_string(std::max(rs.state.revision, revision));
    const model::Labels annotations = model::LabelsFromEntries(d.stored().metadata()->annotations());
    const std::string* shown = model::FindLabel(annotations, kRevisionAnnotation);
    if (shown == nullptr || *shown != set_revision) {
      // Through the status, as the controller writes it: no new generation.
      std::unique_ptr<api::DeploymentT> next(d.stored().UnPack());
      SetEntry(next->metadata->annotations, kRevisionAnnotation, set_revision);
      return WriteStatus(d, *next) ? std::optional<bool>(false) : std::nullopt;
    }
    // A Deployment with a progress deadline and no Progressing condition yet.
    if (d.deadline() && FindCondition(d, "Progressing") == nullptr) {
      std::unique_ptr<api::DeploymentT> status(d.stored().UnPack());
      if (!status->status) status->status = std::make_unique<api::DeploymentStatusT>();
      SetDeploymentCondition(*status->status,
                             DeploymentCondition("Progressing", api::ConditionStatus::True, "FoundNewReplicaSet",
                                                 "Found new replica set \"" + rs.state.name + "\"", now));
      return WriteStatus(d, *status) ? std::optional<bool>(false) : std::nullopt;
    }
    return true;
  }

  static int64_t NextRevision(const Members& members) {
    int64_t max = 0;
    for (const SetRecord* rs : members.old_sets) max = std::max(max, rs->state.revision);
    return max + 1;
  }

  // The Deployment's annotations a ReplicaSet takes over; whether any changed.
  static bool CopyAnnotations(const DeploymentRecord& d, api::ObjectMetaT& meta) {
    bool changed = false;
    for (const auto& [key, value] : model::LabelsFromEntries(d.stored().metadata()->annotations())) {
      if (std::ranges::find(kNotCopied, key) != std::end(kNotCopied)) continue;
      changed |= SetEntry(meta.annotations, key, value);
    }
    return changed;
  }

  static const api::DeploymentCondition* FindCondition(const DeploymentRecord& d, std::string_view type) {
    const api::DeploymentStatus* status = d.stored().status();
    if (status == nullptr || status->conditions() == nullptr) return nullptr;
    for (const api::DeploymentCondition* c : *status->conditions()) {
      if (c->type() != nullptr && c->type()->string_view() == type) return c;
    }
    return nullptr;
  }

  // A ReplicaSet of the Deployment's template, named NAME-HASH, of
  // `replicas` pods. The sync ends there; the watch brings it.
  bool CreateNewSet(const DeploymentRecord& d, const Members& members, int32_t replicas, SimTime now) {
    const api::Deployment& stored = d.stored();
    const std::optional<int32_t> collisions =
        stored.status() != nullptr ? std::optional<int32_t>(stored.status()->collision_count()) : std::nullopt;
    const std::string hash = PodTemplateHash(d.template_key, collisions);
    const std::string name = d.name + "-" + hash;
    std::unique_ptr<api::DeploymentT> from(stored.UnPack());
    api::ReplicaSetT rs;
    rs.api_version = "apps/v1";
    rs.kind = "ReplicaSet";
    rs.metadata = std::make_unique<api::ObjectMetaT>();
    rs.metadata->name = name;
    rs.metadata->namespace_ = d.namespace_;
    rs.spec = std::make_unique<api::ReplicaSetSpecT>();
    rs.spec->replicas = replicas;
    rs.spec->min_ready_seconds = from->spec->min_ready_seconds;
    rs.spec->selector = std::move(from->spec->selector);
    if (!rs.spec->selector) rs.spec->selector = std::make_unique<api::LabelSelectorT>();
    SetEntry(rs.spec->selector->match_labels, model::kPodTemplateHashLabel, hash);
    rs.spec->template_ = std::move(from->spec->template_);
    if (!rs.spec->template_) rs.spec->template_ = std::make_unique<api::PodTemplateSpecT>();
    if (!rs.spec->template_->metadata) rs.spec->template_->metadata = std::make_unique<api::ObjectMetaT>();
    SetEntry(rs.spec->template_->metadata->labels, model::kPodTemplateHashLabel, hash);
    for (const auto& label : rs.spec->template_->metadata->labels) {
      rs.metadata->labels.push_back(std::make_unique<api::StringEntryT>(*label));
    }
    CopyAnnotations(d, *rs.metadata);
    const std::string revision = std::to_string(NextRevision(members));
    SetEntry(rs.metadata->annotations, kRevisionAnnotation, revision);
    SetReplicasAnnotations(d, *rs.metadata);
    auto owner = std::make_unique<api::OwnerReferenceT>();
    owner->api_version = "apps/v1";
    owner->kind = "Deployment";
    owner->name = d.name;
    owner->uid = d.uid;
    owner->controller = true;
    owner->block_owner_deletion = true;
    rs.metadata->owner_references.push_back(std::move(owner));
    Result<client::ApiResponse> created = api_.Call({.verb = "create",
                                                     .resource = client::ResourceArg(model::Kind("ReplicaSet")),
                                                     .namespace_ = d.namespace_,
                                                     .body = model::ToJson(model::Kind("ReplicaSet"),
                                                                           model::Pack(rs), 0)});
    if (created.ok() && created->status.code == 409 && created->status.reason == "AlreadyExists") {
      return Collided(d, name, now);
    }
    if (!created.ok()) return api_.Succeeded(created, "creating replica set " + d.namespace_ + "/" + name);
    if (!created->status.success()) {
      // Said on the Deployment, as the controller says it.
      const std::string message = "Failed to create new replica set \"" + name + "\": " + created->status.message;
      api_.Record(d.ref(), "Warning", "ReplicaSetCreateError", message, now);
      if (d.deadline()) {
        std::unique_ptr<api::DeploymentT> next(stored.UnPack());
        if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
        SetDeploymentCondition(*next->status, DeploymentCondition("Progressing", api::ConditionStatus::False,
                                                                  "ReplicaSetCreateError", message, now));
        WriteStatus(d, *next);
      }
      return false;
    }
    if (replicas > 0) {
      api_.Record(d.ref(), "Normal", "ScalingReplicaSet",
                  "Scaled up replica set " + name + " from 0 to " + std::to_string(replicas), now);
    }
    std::unique_ptr<api::DeploymentT> next(stored.UnPack());
    if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
    if (d.deadline()) {
      SetDeploymentCondition(*next->status,
                             DeploymentCondition("Progressing", api::ConditionStatus::True, "NewReplicaSetCreated",
                                                 "Created new replica set \"" + name + "\"", now));
      return WriteStatus(d, *next);
    }
    return true;
  }

  // A ReplicaSet of that name exists: ours of the same template (a watch
  // behind) is fine; another is a hash collision, and the next
  // collisionCount gives another name.
  bool Collided(const DeploymentRecord& d, const std::string& name, SimTime now) {
    const std::string key = model::ObjectKey(model::Kind("ReplicaSet"), d.namespace_, name);
    const SetRecord* existing = sets_.Find(key);
    if (existing == nullptr) return false;  // not seen yet: tried again
    if (existing->controller_uid == d.uid && existing->template_key == d.template_key) return true;
    std::unique_ptr<api::DeploymentT> next(d.stored().UnPack());
    if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
    next->status->collision_count = next->status->collision_count.value_or(0) + 1;
    api_.log().info("{}/{}: replica set {} exists with another template; collisionCount {}", d.namespace_, d.name, name,
                    *next->status->collision_count);
    (void)now;
    return WriteStatus(d, *next);
  }

  static void SetReplicasAnnotations(const DeploymentRecord& d, api::ObjectMetaT& meta) {
    const int32_t desired = d.desired();
    SetEntry(meta.annotations, kDesiredReplicasAnnotation, std::to_string(desired));
    SetEntry(meta.annotations, kMaxReplicasAnnotation,
             std::to_string(desired + ResolveFenceposts(*d.stored().spec()).max_surge));
  }

  // scaleReplicaSet: its size and the replicas annotations, recording the
  // scaling on the Deployment.
  bool ScaleSet(const DeploymentRecord& d, SetRecord& rs, int32_t replicas, SimTime now) {
    std::unique_ptr<api::ReplicaSetT> next(rs.stored().UnPack());
    next->spec->replicas = replicas;
    SetReplicasAnnotations(d, *next->metadata);
    const bool annotations = model::LabelsFromNative(next->metadata->annotations) != rs.annotations;
    const int32_t was = rs.state.replicas;
    if (was == replicas && !annotations) return true;
    if (!UpdateSet(rs, *next)) return false;
    rs.state.replicas = replicas;
    if (was != replicas) {
      api_.Record(d.ref(), "Normal", "ScalingReplicaSet",
                  std::string(was < replicas ? "Scaled up" : "Scaled down") + " replica set " + rs.state.name +
                      " from " + std::to_string(was) + " to " + std::to_string(replicas),
                  now);
    }
    return true;
  }

  bool UpdateSet(const SetRecord& rs, api::ReplicaSetT& next) {
    next.metadata->resource_version = std::to_string(rs.kv.mod_revision.value());
    return api_.Update(model::Kind("ReplicaSet"), rs.namespace_, rs.state.name, "", model::Pack(next)) ==
           ControllerApi::Updated::kWritten;
  }

  // cleanupDeployment: beyond revisionHistoryLimit, the oldest revisions
  // that have scaled to nothing are deleted.
  void CleanUp(const DeploymentRecord& d, const Members& members, SimTime now) {
    const api::DeploymentSpec* spec = d.stored().spec();
    if (!spec->revision_history_limit().has_value() ||
        *spec->revision_history_limit() == std::numeric_limits<int32_t>::max()) {
      return;
    }
    std::vector<const SetRecord*> alive;
    for (const SetRecord* rs : members.old_sets) {
      if (!rs->state.deleting) alive.push_back(rs);
    }
    const int64_t surplus = static_cast<int64_t>(alive.size()) - *spec->revision_history_limit();
    if (surplus <= 0) return;
    std::ranges::sort(alive, [](const SetRecord* a, const SetRecord* b) {
      if (a->state.revision != b->state.revision) return a->state.revision < b->state.revision;
      return a->state.created < b->state.created;
    });
    for (int64_t i = 0; i < surplus; ++i) {
      const SetRecord& rs = *alive[static_cast<size_t>(i)];
      if (rs.state.current != 0 || rs.state.replicas != 0 || rs.generation > rs.observed_generation) continue;
      Result<client::ApiResponse> deleted = api_.Call({.verb = "delete",
                                                       .resource = client::ResourceArg(model::Kind("ReplicaSet")),
                                                       .namespace_ = rs.namespace_,
                                                       .name = rs.state.name});
      if (!(deleted.ok() && deleted->status.code == 404)) {
        (void)api_.Succeeded(deleted, "deleting old replica set " + rs.namespace_ + "/" + rs.state.name);
      }
    }
    (void)now;
  }

  // ---- status

  // Complete by its stored status, as the rollouts ask before cleaning up.
  static bool Complete(const DeploymentRecord& d) {
    const api::Deployment& stored = d.stored();
    const api::DeploymentStatus* s = stored.status();
    return s != nullptr && s->observed_generation() >= stored.metadata()->generation() &&
           DeploymentComplete(d.desired(), {s->replicas(), s->updated_replicas(), s->ready_replicas(),
                                            s->available_replicas(), s->unavailable_replicas()});
  }

  // syncDeploymentStatus (and, in a rollout, syncRolloutStatus): the counts,
  // Available, and with a progress deadline the Progressing condition
  // (progressed, complete, or timed out) and ReplicaFailure from the
  // ReplicaSets. A Deployment still progressing is looked at again when its
  // deadline would pass.
  bool SyncStatus(const DeploymentRecord& d, const Members& members, SimTime now, bool rollout) {
    std::vector<const SetState*> all;
    for (const SetRecord* rs : members.all()) all.push_back(&rs->state);
    const SetState* new_state = members.new_set ? &members.new_set->state : nullptr;
    const DeploymentCounts counts = CountDeployment(all, new_state);
    const api::Deployment& stored = d.stored();
    std::unique_ptr<api::DeploymentT> next(stored.UnPack());
    if (!next->status) next->status = std::make_unique<api::DeploymentStatusT>();
    api::DeploymentStatusT& status = *next->status;
    const DeploymentCounts before{status.replicas, status.updated_replicas, status.ready_replicas,
                                  status.available_replicas, status.unavailable_replicas};
    status.observed_generation = next->metadata->generation;
    status.replicas = counts.replicas;
    status.updated_replicas = counts.updated;
    status.ready_replicas = counts.ready;
    status.available_replicas = counts.available;
    status.unavailable_replicas = counts.unavailable;
    const int32_t desired = d.desired();
    if (counts.available >= desired - ResolveFenceposts(*stored.spec()).max_unavailable) {
      SetDeploymentCondition(status, DeploymentCondition("Available", api::ConditionStatus::True,
                                                         "MinimumReplicasAvailable",
                                                         "Deployment has minimum availability.", now));
    } else {
      SetDeploymentCondition(status, DeploymentCondition("Available", api::ConditionStatus::False,
                                                         "MinimumReplicasUnavailable",
                                                         "Deployment does not have minimum availability.", now));
    }
    std::optional<SimTime> recheck;
    if (rollout) recheck = Progress(d, members, before, counts, status, now);
    if (!d.deadline()) std::erase_if(status.conditions, [](const auto& c) { return c->type == "Progressing"; });
    if (std::unique_ptr<api::DeploymentStatusT> was(stored.status() ? stored.status()->UnPack() : nullptr);
        was != nullptr && SameStatus(*was, status)) {
      if (recheck) queue_.Add(d.kv.key, *recheck);
      return true;
    }
    if (!WriteStatus(d, *next)) return false;
    if (recheck) queue_.Add(d.kv.key, *recheck);
    return true;
  }

  // The Progressing and ReplicaFailure conditions of a rollout; when to
  // look again for the deadline.
  std::optional<SimTime> Progress(const DeploymentRecord& d, const Members& members, const DeploymentCounts& before,
                                  const DeploymentCounts& counts, api::DeploymentStatusT& status, SimTime now) {
    std::optional<SimTime> recheck;
    const std::optional<int32_t> deadline = d.deadline();
    auto current = std::ranges::find_if(status.conditions, [](const auto& c) { return c->type == "Progressing"; });
    const bool has = current != status.conditions.end();
    const bool done = counts.replicas == counts.updated && has && (*current)->reason == "NewReplicaSetAvailable";
    const std::string subject =
        members.new_set ? "ReplicaSet \"" + members.new_set->state.name + "\"" : "Deployment \"" + d.name + "\"";
    if (deadline && !done) {
      if (DeploymentComplete(d.desired(), counts)) {
        SetDeploymentCondition(status, DeploymentCondition("Progressing", api::ConditionStatus::True,
                                                           "NewReplicaSetAvailable",
                                                           subject + " has successfully progressed.", now));
      } else if (DeploymentProgressed(before, counts)) {
        api::DeploymentConditionT next = DeploymentCondition("Progressing", api::ConditionStatus::True,
                                                             "ReplicaSetUpdated", subject + " is progressing.", now);
        if (has && (*current)->status == api::ConditionStatus::True) {
          next.last_transition_time = (*current)->last_transition_time;
        }
        if (has) status.conditions.erase(current);
        SetDeploymentCondition(status, next);
        recheck = now + std::chrono::seconds(*deadline) + std::chrono::seconds(1);
      } else if (has && (*current)->reason != "ProgressDeadlineExceeded" &&
                 (*current)->reason != "NewReplicaSetAvailable") {
        const std::optional<std::chrono::system_clock::time_point> since = ParseRfc3339((*current)->last_update_time);
        const SimTime due = since ? std::chrono::floor<SimDuration>(*since) + std::chrono::seconds(*deadline) : now;
        if (due < now) {
          SetDeploymentCondition(status, DeploymentCondition("Progressing", api::ConditionStatus::False,
                                                             "ProgressDeadlineExceeded",
                                                             subject + " has timed out progressing.", now));
        } else {
          recheck = due + std::chrono::seconds(1);
        }
      }
    }
    // A ReplicaSet that cannot create or delete its pods says so here.
    // The new one's first, as the controller looks.
    const SetRecord::Failure* failure = nullptr;
    for (const SetRecord* rs : members.all()) {
      if (rs->failure) failure = &*rs->failure;
    }
    if (failure != nullptr) {
      api::DeploymentConditionT copied = DeploymentCondition("ReplicaFailure", api::ConditionStatus::True,
                                                             failure->reason, failure->message, now);
      copied.last_update_time = copied.last_transition_time = failure->since;
      SetDeploymentCondition(status, copied);
    } else {
      std::erase_if(status.conditions, [](const auto& c) { return c->type == "ReplicaFailure"; });
    }
    return recheck;
  }

  static bool SameStatus(const api::DeploymentStatusT& a, const api::DeploymentStatusT& b) {
    if (a.observed_generation != b.observed_generation || a.replicas != b.replicas ||
        a.updated_replicas != b.updated_replicas || a.ready_replicas != b.ready_replicas ||
        a.available_replicas != b.available_replicas || a.unavailable_replicas != b.unavailable_replicas ||
        a.collision_count != b.collision_count || a.conditions.size() != b.conditions.size()) {
      return false;
    }
    for (size_t i = 0; i < a.conditions.size(); ++i) {
      const auto& x = *a.conditions[i];
      const auto& y = *b.conditions[i];
      if (x.type != y.type || x.status != y.status || x.reason != y.reason || x.message != y.message ||
          x.last_update_time != y.last_update_time || x.last_transition_time != y.last_transition_time) {
        return false;
      }
    }
    return true;
  }

  // Writes the Deployment's status (and, as its status may, its
  // annotations); a conflict is left to the watch.
  bool WriteStatus(const DeploymentRecord& d, api::DeploymentT& next) {
    next.metadata->resource_version = std::to_string(d.kv.mod_revision.value());
    return api_.Update(model::Kind("Deployment"), d.namespace_, d.name, "status", model::Pack(next)) !=
           ControllerApi::Updated::kFailed;
  }

  ControllerApi api_;
  client::Informer deployments_informer_;
  client::Informer sets_informer_;
  OnDemandInformer pods_;  // while a Deployment uses Recreate (FollowPods)
  ObjectIndex<DeploymentRecord> deployments_;
  ObjectIndex<SetRecord> sets_;
  std::map<std::string, PodOwner> pod_owners_;  // by pod key, while following pods
  WorkQueue queue_;
};

}  // namespace

void RunDeploymentController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  DeploymentLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
