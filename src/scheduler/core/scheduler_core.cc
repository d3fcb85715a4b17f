#include "scheduler/core/scheduler_core.h"

#include <algorithm>

#include "model/codec.h"
#include "model/objects.h"
#include "scheduler/framework/runner.h"

namespace podflow::scheduler {
namespace {

const api::Pod* VerifiedPod(const std::string& bytes) {
  if (!model::VerifyObject(model::Kind("Pod"), bytes).ok()) return nullptr;
  return flatbuffers::GetRoot<api::Pod>(bytes.data());
}

using Event = SchedulingQueue::ClusterEvent;

// The plugins that rejected some node: the queue moves the pod back only on
// events that may change their answer.
std::vector<std::string> RejectingPlugins(const std::vector<NodeVerdict>& verdicts) {
  std::vector<std::string> out;
  for (const NodeVerdict& v : verdicts) {
    if (v.status.IsSuccess()) continue;
    const std::string_view p = v.status.plugin();
    if (std::find(out.begin(), out.end(), p) == out.end()) out.emplace_back(p);
  }
  return out;
}

}  // namespace

void SchedulerCore::UpsertNode(const StoredObject& object, Clock::time_point now) {
  if (!model::VerifyObject(model::Kind("Node"), object.value).ok()) return;
  Result<NodeInfo> info = NodeInfoFromNode(*flatbuffers::GetRoot<api::Node>(object.value.data()));
  if (!info.ok()) return;
  const std::string name = info->name;
  const bool added = cache_.FindNode(name) == nullptr;
  if (!cache_.UpsertNode(std::move(*info)).ok()) return;
  node_keys_[object.key] = name;
  if (added) {
    // Pods bound to this node before it was known count from now on.
    for (auto& [key, state] : pods_) {
      if (state.node.empty() && state.bound_node == name && !state.terminal) {
        const api::Pod* pod = VerifiedPod(state.bytes);
        Result<PodInfo> pod_info = pod ? PodInfoFromPod(*pod) : Status::Invalid("pod");
        if (pod_info.ok() && cache_.AddPod(std::move(*pod_info)).ok()) state.node = name;
      }
    }
  }
  // A node added or changed may make room (kube-scheduler: NodeAdd, NodeUpdate).
  if (std::optional<int64_t> revision = Fed(object)) {
    queue_.MoveOnEvent(added ? Event::kNodeAdd : Event::kNodeUpdate, now, *revision);
  }
}

void SchedulerCore::RemoveNode(const std::string& key) {
  fed_revisions_.erase(key);
  auto it = node_keys_.find(key);
  if (it == node_keys_.end()) return;
  for (auto& [pod_key, state] : pods_) {
    if (state.node == it->second) state.node.clear();  // the snapshot drops them with the node
  }
  (void)cache_.RemoveNode(it->second);
  node_keys_.erase(it);
}

void SchedulerCore::Uncount(PodState& state) {
  if (!state.node.empty()) (void)cache_.RemovePod(state.uid);
  state.node.clear();
  if (state.assumed) --assumed_pods_;
  state.assumed = false;
}

void SchedulerCore::Requeue(const std::string& key, const PodState& state, Clock::time_point now) {
  const api::Pod* pod = VerifiedPod(state.bytes);
  if (pod == nullptr) return;
  SchedulingQueue::Item item{key, pod->spec() ? pod->spec()->priority().value_or(0) : 0,
                             pod->metadata() && pod->metadata()->creation_timestamp()
                                 ? pod->metadata()->creation_timestamp()->str()
                                 : ""};
  queue_.Activate(item, now);
}

void SchedulerCore::UpsertPod(const StoredObject& object, Clock::time_point now) {
  Saw(object.mod_revision.value());
  const api::Pod* pod = VerifiedPod(object.value);
  if (pod == nullptr || pod->metadata() == nullptr || pod->spec() == nullptr) return;
  const std::string uid = pod->metadata()->uid() ? pod->metadata()->uid()->str() : "";
  const std::string node = pod->spec()->node_name() ? pod->spec()->node_name()->str() : "";

  PodState& state = pods_[object.key];
  if (!state.uid.empty() && state.uid != uid) {  // deleted and re-created under the same name
    Uncount(state);
    cache_.RemoveNominatedPod(state.uid);
    queue_.Remove(object.key);
    state = PodState{};
  }
  state.uid = uid;
  state.mod_revision = object.mod_revision;
  state.bytes = object.value;
  state.bound_node = node;
  const api::PodPhase phase = pod->status() ? pod->status()->phase() : api::PodPhase::Pending;
  state.terminal = phase == api::PodPhase::Succeeded || phase == api::PodPhase::Failed;

  if (!node.empty()) {
    // Bound (by binding, or published with spec.nodeName): count it where it is.
    queue_.Remove(object.key);
    if (state.terminal) {
      const bool was_counted = !state.node.empty();
      Uncount(state);
      if (was_counted) queue_.MoveOnEvent(Event::kAssignedPodDelete, now, object.mod_revision.value());  // its resources are free
      return;
    }
    if (state.assumed) --assumed_pods_;
    state.assumed = false;
    // Most updates of a bound pod are its status: it is counted there already,
    // and its PodInfo (quantities parsed) is not needed again.
    if (state.node == node) return;
    Result<PodInfo> info = PodInfoFromPod(*pod);
    if (!info.ok()) return;
    Uncount(state);
    if (cache_.AddPod(std::move(*info)).ok()) {
      state.node = node;
      queue_.MoveOnEvent(Event::kAssignedPodAdd, now, object.mod_revision.value());  // bound by someone else
    }
    return;
  }

  Result<PodInfo> info = PodInfoFromPod(*pod);
  if (!info.ok()) return;
  const bool deleting = pod->metadata()->deletion_timestamp() && pod->metadata()->deletion_timestamp()->size() > 0;
  // SchedulingGates (PreEnqueue): a gated pod is not queued until an update
  // removes its last gate; that update brings it here again.
  const bool gated = pod->spec()->scheduling_gates() && pod->spec()->scheduling_gates()->size() > 0;
  if (deleting || gated || state.terminal || ProfileFor(*info) == nullptr) {
    Uncount(state);
    cache_.RemoveNominatedPod(uid);
    queue_.Remove(object.key);
    return;
  }
  // kube-scheduler's nominator: a pending pod's status.nominatedNodeName
  // holds its room there against pods of lower or equal priority.
  if (info->nominated_node_name.empty()) {
    state.cleared_nomination.clear();  // the store has caught up
  } else if (!state.assumed && info->nominated_node_name != state.cleared_nomination) {
    cache_.AddNominatedPod(*info);
  }
  if (state.assumed) {
    // Still unbound after our decision: binding lost its compare-and-swap
    // if the pod changed since the revision we decided on.
    if (object.mod_revision.value() <= state.assumed_on.value()) return;
    Uncount(state);
  } else if (queue_.Contains(object.key) && object.mod_revision == state.own_write) {
    return;  // our own FailedScheduling status coming back
  }
  Requeue(object.key, state, now);
}

void SchedulerCore::MakeCaches() {
  equivalence_caches_.reserve(profiles_.size());
  for (const Profile* p : profiles_) equivalence_caches_.emplace_back(*p);
}

uint64_t SchedulerCore::equivalence_hits() const {
  uint64_t n = 0;
  for (const auto& c : equivalence_caches_) n += c.hits();
  return n;
}

uint64_t SchedulerCore::equivalence_misses() const {
  uint64_t n = 0;
  for (const auto& c : equivalence_caches_) n += c.misses();
  return n;
}

const Profile* SchedulerCore::ProfileFor(const PodInfo& pod) const {
  for (const Profile* p : profiles_) {
    if (p->Handles(pod)) return p;
  }
  return nullptr;
}

void SchedulerCore::RemovePod(const std::string& key, Clock::time_point now) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const bool was_counted = !it->second.node.empty();
  Uncount(it->second);
  cache_.RemoveNominatedPod(it->second.uid);
  queue_.Remove(key);
  pods_.erase(it);
  // A pod that held resources is gone (kube-scheduler: AssignedPodDelete).
  if (was_counted) queue_.MoveOnEvent(Event::kAssignedPodDelete, now);
}

std::optional<Result<SchedulerCore::Outcome>> SchedulerCore::Next(Clock::time_point now) {
  for (;;) {
    std::optional<std::string> key = queue_.Pop(now);
    if (!key) return std::nullopt;
    std::optional<Result<Outcome>> outcome = Cycle(*key, now);
    if (outcome) return outcome;
  }
}

std::optional<Result<SchedulerCore::Outcome>> SchedulerCore::Cycle(const std::string& key, Clock::time_point now) {
  auto it = pods_.find(key);
  const api::Pod* pod = it == pods_.end() ? nullptr : VerifiedPod(it->second.bytes);
  Result<PodInfo> info = pod ? PodInfoFromPod(*pod) : Status::NotFound(key);
  if (!info.ok()) {
    queue_.Remove(key);
    return std::nullopt;
  }
  PodState& state = it->second;
  // A nomination the stored pod does not show yet (our write of it may still
  // be on its way): the pod tries that node first all the same.
  if (info->nominated_node_name.empty()) {
    info->nominated_node_name = std::string(cache_.NominatedNodeOf(state.uid));
  }
  ScheduleOptions options;
  options.start_node_index = next_start_node_index_;
  options.metrics = &metrics_;
  const Profile* profile = ProfileFor(*info);
  if (profile == nullptr) {  // its schedulerName changed to one we do not run
    queue_.Remove(key);
    return std::nullopt;
  }
  if (use_equivalence_cache_) {
    for (EquivalenceCache& c : equivalence_caches_) {
      if (&c.profile() == profile) options.cache = &c;
    }
  }
  Result<Decision> decision = Schedule(*profile, *info, cache_, options);
  if (!decision.ok()) {
    queue_.MarkUnschedulable(key, now);  // a plugin failed: any event retries it, after the backoff
    return Result<Outcome>(decision.status());
  }
  next_start_node_index_ = decision->next_start_node_index;
  Outcome outcome;
  outcome.key = key;
  outcome.uid = state.uid;
  outcome.mod_revision = state.mod_revision;
  outcome.pod_bytes = state.bytes;
  outcome.decision = std::move(*decision);
  outcome.profile = profile;
  outcome.start_node_index = options.start_node_index;
  if (outcome.decision.scheduled()) {
    info->node_name = outcome.decision.node;
    if (cache_.AddPod(std::move(*info)).ok()) {
      state.node = outcome.decision.node;
      queue_.MoveOnEvent(Event::kAssignedPodAdd, now);
    }
    if (!state.assumed) ++assumed_pods_;
    state.assumed = true;
    state.assumed_on = state.mod_revision;
    state.assumed_at = now;
    assumed_order_.emplace_back(now, key);
    queue_.Remove(key);
  } else {
    if (!outcome.decision.nominated_node.empty()) {
      // Preemption: name the victims for the stage and hold the nominated
      // node's room for the pod while they go.
      for (const std::string& uid : outcome.decision.victims) {
        const PodInfo* victim = cache_.FindPod(uid);
        if (victim == nullptr) continue;
        std::string victim_key = model::ObjectKey(model::Kind("Pod"), victim->namespace_, victim->name);
        auto v = pods_.find(victim_key);
        if (v == pods_.end() || v->second.uid != uid) continue;
        outcome.victims.push_back(
            Outcome::Victim{std::move(victim_key), uid, v->second.mod_revision, v->second.bytes});
      }
      for (const std::string& uid : outcome.decision.cleared_nominations) {
        std::string cleared_key;
        for (const auto& nominated : cache_.NominatedPods(outcome.decision.nominated_node)) {
          if (nominated->uid == uid) {
            cleared_key = model::ObjectKey(model::Kind("Pod"), nominated->namespace_, nominated->name);
            break;
          }
        }
        cache_.RemoveNominatedPod(uid);
        auto c = pods_.find(cleared_key);
        if (c == pods_.end() || c->second.uid != uid) continue;
        c->second.cleared_nomination = outcome.decision.nominated_node;
        outcome.cleared_nominations.push_back(
            Outcome::Victim{std::move(cleared_key), uid, c->second.mod_revision, c->second.bytes});
      }
      info->nominated_node_name = outcome.decision.nominated_node;
      state.cleared_nomination.clear();
      cache_.AddNominatedPod(std::move(*info));
    } else if (outcome.decision.clear_nomination) {
      cache_.RemoveNominatedPod(state.uid);
    }
    queue_.MarkUnschedulable(key, now, RejectingPlugins(outcome.decision.verdicts), seen_revision_);
  }
  return Result<Outcome>(std::move(outcome));
}

void SchedulerCore::Unassume(const std::string& key, Clock::time_point now) {
  auto it = pods_.find(key);
  if (it == pods_.end() || !it->second.assumed) return;
  Uncount(it->second);
  Requeue(key, it->second, now);
}

void SchedulerCore::OwnWrite(const std::string& key, Revision revision) {
  auto it = pods_.find(key);
  if (it != pods_.end()) it->second.own_write = revision;
}

void SchedulerCore::ExpireAssumed(Clock::time_point now) {
  while (!assumed_order_.empty() && assumed_order_.front().first + kAssumeTimeout <= now) {
    auto [at, key] = std::move(assumed_order_.front());
    assumed_order_.pop_front();
    auto it = pods_.find(key);
    if (it == pods_.end() || !it->second.assumed || it->second.assumed_at != at) continue;
    Uncount(it->second);
    Requeue(key, it->second, now);
  }
}

}  // namespace podflow::scheduler
