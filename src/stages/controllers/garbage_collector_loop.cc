#include "stages/controllers/garbage_collector_loop.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "client/client.h"
#include "model/codec.h"
#include "model/events.h"
#include "model/objects.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/garbage_collector.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 403;
// The component its Events come from, as kube-controller-manager names it.
constexpr std::string_view kEventSource = "garbage-collector-controller";
// Owners confirmed absent are remembered (uids are never reused), up to
// this many; then forgotten and asked again.
constexpr size_t kMaxAbsentOwners = 10'000;
// Work keys: what to do, then the object's key.
constexpr std::string_view kAttempt = "attempt ";
constexpr std::string_view kOrphan = "orphan ";
// How long the pods are followed after an object goes: its dependent pods
// are found meanwhile.
constexpr SimDuration kPodsLinger = std::chrono::seconds(5);

std::string PathOf(const GcObject& o) {
  return std::string(o.kind->kind) + " " + (o.namespace_.empty() ? "" : o.namespace_ + "/") + o.name;
}

model::ObjectRef RefOf(const GcObject& o) {
  return model::ObjectRef{std::string(o.kind->kind), std::string(o.kind->api_version), o.namespace_, o.name, o.uid};
}

class GarbageCollectorLoop {
 public:
  explicit GarbageCollectorLoop(pipeline::StageContext& context)
      : api_(context, kGarbageCollector, kEventNamerInstance),
        pods_(context, model::KindPrefix(model::Kind("Pod"))) {
    // Every kind but Events, which kube-controller-manager's collector
    // ignores too, and the pods, followed only when needed (FollowPods).
    for (const model::KindInfo& kind : model::Kinds()) {
      if (kind.kind == "Event" || kind.kind == "Pod") continue;
      followed_.push_back(Followed{&kind, MakeInformer(context, kind)});
    }
  }

  void Run(const std::atomic<bool>& stopping) {
    RunWorkQueue(
        stopping, queue_, [this](std::chrono::milliseconds wait) { return Poll(wait); },
        [this](const Status& failed) { api_.log().warn("garbage collector: following the log: {}", failed.ToString()); },
        [this](const std::string& work, SimTime now) { Process(work, now); });
  }

 private:
  struct Followed {
    const model::KindInfo* kind;
    std::unique_ptr<client::Informer> informer;
  };

  static std::unique_ptr<client::Informer> MakeInformer(pipeline::StageContext& context, const model::KindInfo& kind) {
    return std::make_unique<client::Informer>(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                                              model::KindPrefix(kind));
  }

  // Delivers what every informer has (listing first the ones not yet
  // listed), then the pods' when they are followed: the work queue is not
  // looked at until all have been, so that nothing is decided on a
  // partial graph.
  Status Poll(std::chrono::milliseconds wait) {
    for (size_t i = 0; i < followed_.size(); ++i) {
      const model::KindInfo& kind = *followed_[i].kind;
      const client::Informer::Handlers handlers{[this, &kind](const KeyValue& kv) { Upsert(kind, kv); },
                                                [this](const std::string& key) { Remove(key); }};
      const bool last = i + 1 == followed_.size() && !pods_.open();
      PODFLOW_RETURN_IF_ERROR(followed_[i].informer->Poll(last ? wait : std::chrono::milliseconds(0), handlers));
    }
    const model::KindInfo& pod = model::Kind("Pod");
    const client::Informer::Handlers pod_handlers{[this, &pod](const KeyValue& kv) { Upsert(pod, kv); },
                                                  [this](const std::string& key) { Remove(key); }};
    PODFLOW_RETURN_IF_ERROR(FollowPods(pod_handlers));
    return pods_.Poll(wait, pod_handlers);
  }

  // The pods, the busiest kind, are followed only while the collector may
  // have something to do with them: once at the start (pods whose owners
  // went meanwhile), while it has work queued or an owner waits for its
  // dependents, while some object names a pod as its owner, and for a
  // while after any object goes (its dependent pods are then found). A
  // pipeline whose owners stay costs it no pod traffic; pods are dropped
  // from the graph when no longer followed.
  Status FollowPods(const client::Informer::Handlers& handlers) {
    const bool needed = !pods_listed_ || !queue_.empty() || graph_.Waiting() > 0 || graph_.LinksTo("Pod") > 0 ||
                        WallClockNow() < linger_until_;
    Result<bool> changed = pods_.Follow(needed, handlers);
    if (!changed.ok()) return changed.status();
    if (pods_.open()) pods_listed_ = true;
    if (*changed && !pods_.open()) {
      for (const std::string& key : pod_keys_) graph_.Forget(key);
      pod_keys_.clear();
    }
    return Status::Ok();
  }

  void Upsert(const model::KindInfo& kind, const KeyValue& kv) {
    std::optional<GcObject> object = ReadGcObject(kind, kv.value, kv.mod_revision.value());
    if (!object) {
      api_.log().warn("garbage collector: {}: not a valid {}; ignored", kv.key, kind.kind);
      return;
    }
    if (&kind == &model::Kind("Pod")) pod_keys_.insert(kv.key);
    Apply(graph_.Upsert(kv.key, std::move(*object)));
  }

  void Remove(const std::string& key) {
    if (pod_keys_.erase(key) == 0) linger_until_ = WallClockNow() + kPodsLinger;
    Apply(graph_.Remove(key));
  }

  // Whether every object made up to `revision` is in the graph: each
  // informer has seen it, the pods' included (opened if need be).
  bool CaughtUp(int64_t revision) const {
    if (!pods_.open() || pods_.revision().value() < revision) return false;
    return std::all_of(followed_.begin(), followed_.end(),
                       [&](const Followed& f) { return f.informer->revision().value() >= revision; });
  }

  void Apply(const OwnerGraph::Work& work) {
    const SimTime now = WallClockNow();
    for (const std::string& key : work.attempt) queue_.Add(std::string(kAttempt) + key, now);
    for (const std::string& key : work.orphan) queue_.Add(std::string(kOrphan) + key, now);
  }

  void Process(const std::string& work, SimTime now) {
    bool done = true;
    if (work.starts_with(kAttempt)) {
      done = AttemptToDelete(work.substr(kAttempt.size()), now);
    } else if (work.starts_with(kOrphan)) {
      done = Orphan(work.substr(kOrphan.size()), now);
    }
    if (done) {
      queue_.Forget(work);
    } else {
      queue_.AddRateLimited(work, now);
    }
  }

  // kube-controller-manager's attemptToDeleteItem. False: try again later.
  bool AttemptToDelete(const std::string& key, SimTime now) {
    const GcObject* found = graph_.Find(key);
    if (found == nullptr) return true;
    const GcObject item = *found;
    if (item.DeletingDependents()) return ProcessDeletingDependents(key, item, now);
    // Being deleted otherwise: its dependents are looked at once it is gone.
    if (item.deleting || item.owners.empty()) return true;
    std::vector<OwnerState> states;
    for (const OwnerLink& ref : item.owners) {
      Result<OwnerState> state = Classify(item, ref, now);
      if (!state.ok()) {
        api_.log().info("garbage collector: {}: looking up its owner {} {}: {}", PathOf(item), ref.kind, ref.name,
                        state.status().ToString());
        return false;
      }
      states.push_back(*state);
    }
    const GcDecision decision = DecideDependent(item, states, graph_.HasDependents(item.uid));
    switch (decision.action) {
      case GcDecision::Action::kKeep:
        return true;
      case GcDecision::Action::kRemoveOwners:
        return api_.PatchOwners(*item.kind, item.namespace_, item.name, ReleasePatch(decision.owner_uids, item.uid),
                                "garbage collector: dropping references to owners gone or going from") !=
               ControllerApi::Updated::kFailed;
      case GcDecision::Action::kDelete:
        // A dependent of it waiting for its own dependents: a cycle of
        // foreground deletions. It stops blocking its owners first, so that
        // they can go while it waits.
        if (decision.propagation == "Foreground" && std::ranges::any_of(item.owners, [](const OwnerLink& ref) {
              return ref.block_owner_deletion;
            })) {
          const std::vector<std::string> deps = graph_.Dependents(item.uid);
          const bool cycle = std::ranges::any_of(deps, [&](const std::string& dep) {
            const GcObject* d = graph_.Find(dep);
            return d != nullptr && d->DeletingDependents();
          });
          if (cycle && api_.PatchOwners(*item.kind, item.namespace_, item.name, UnblockOwnersPatch(item),
                                        "garbage collector: unblocking the owners of") != ControllerApi::Updated::kWritten) {
            return false;
          }
        }
        return Delete(item, decision.propagation);
    }
    return true;
  }

  // `ref` of `item`: from the graph when it holds the owner, else from the
  // API (the watch of the owner's kind may be behind); a reference that can
  // never resolve is reported once with OwnerRefInvalidNamespace.
  Result<OwnerState> Classify(const GcObject& item, const OwnerLink& ref, SimTime now) {
    if (std::optional<OwnerState> known = graph_.Classify(item, ref)) {
      if (*known == OwnerState::kUnresolvable && model::FindKind(ref.api_version, ref.kind) != nullptr) {
        ReportInvalidNamespace(item, ref, now);
      }
      return *known;
    }
    const model::KindInfo& kind = *model::FindKind(ref.api_version, ref.kind);
    // Remembered by everything the lookup named: a reference naming the
    // owner's uid in another namespace says nothing about the owner.
    const std::string absent_key = *OwnerKey(ref, item.namespace_) + "#" + ref.uid;
    if (absent_.contains(absent_key)) return OwnerState::kDangling;
    Result<client::ApiResponse> got = api_.Call({.verb = "get",
                                                 .resource = client::ResourceArg(kind),
                                                 .namespace_ = kind.namespaced ? item.namespace_ : std::string(),
                                                 .name = ref.name});
    if (!got.ok()) return got.status();
    std::optional<GcObject> owner;
    if (got->status.success() && !got->objects.empty()) {
      const KeyValue& kv = got->objects.front();
      owner = ReadGcObject(kind, kv.value, kv.mod_revision.value());
    } else if (got->status.code != 404) {
      return Status::Unavailable(got->status.message);
    }
    if (owner && owner->uid == ref.uid) {
      return owner->DeletingDependents() ? OwnerState::kWaiting : OwnerState::kSolid;
    }
    if (absent_.size() >= kMaxAbsentOwners) absent_.clear();
    absent_.insert(absent_key);
    // The owner is elsewhere: a namespaced dependent names an owner of
    // another namespace, which is taken as absent.
    if (const GcObject* elsewhere = graph_.FindUid(ref.uid);
        elsewhere != nullptr && elsewhere->namespace_ != item.namespace_) {
      ReportInvalidNamespace(item, ref, now);
    }
    return OwnerState::kDangling;
  }

  void ReportInvalidNamespace(const GcObject& item, const OwnerLink& ref, SimTime now) {
    if (!reported_.insert(item.uid).second) return;
    api_.RecordAs(kEventSource, RefOf(item), "Warning", "OwnerRefInvalidNamespace",
                  "ownerRef [" + ref.api_version + "/" + ref.kind + ", namespace: " + item.namespace_ +
                      ", name: " + ref.name + ", uid: " + ref.uid + "] does not exist in namespace \"" +
                      item.namespace_ + "\"",
                  now);
  }

  // An owner deleted in the foreground goes once no dependent blocks it;
  // until then each blocking one not itself waiting is looked at.
  bool ProcessDeletingDependents(const std::string& key, const GcObject& item, SimTime now) {
    if (!CaughtUp(item.revision)) {
      queue_.Add(std::string(kAttempt) + key, now + kMaxWait);
      return true;
    }
    const std::vector<std::string> blocking = graph_.BlockingDependents(item.uid);
    if (blocking.empty()) return RemoveFinalizer(item, model::kForegroundFinalizer);
    api_.log().debug("garbage collector: {} waits for {} dependent(s)", PathOf(item), blocking.size());
    for (const std::string& dep : blocking) {
      const GcObject* d = graph_.Find(dep);
      if (d != nullptr && !d->DeletingDependents() && dep != key) queue_.Add(std::string(kAttempt) + dep, now);
    }
    return true;
  }

  // kube-controller-manager's attemptToOrphan: every dependent's reference
  // to the owner removed, then its orphan finalizer. Only once every
  // informer has seen the revision the owner was marked at, so that no
  // dependent made before it is missed (and collected once the owner goes).
  bool Orphan(const std::string& key, SimTime now) {
    const GcObject* found = graph_.Find(key);
    if (found == nullptr || !found->Orphaning()) return true;
    const GcObject owner = *found;
    if (!CaughtUp(owner.revision)) {
      queue_.Add(std::string(kOrphan) + key, now + kMaxWait);
      return true;
    }
    for (const std::string& dep_key : graph_.Dependents(owner.uid)) {
      const GcObject* dep = graph_.Find(dep_key);
      if (dep == nullptr) continue;
      if (api_.PatchOwners(*dep->kind, dep->namespace_, dep->name, ReleasePatch(owner.uid, dep->uid),
                           "garbage collector: orphaning") == ControllerApi::Updated::kFailed) {
        return false;
      }
    }
    return RemoveFinalizer(owner, model::kOrphanFinalizer);
  }

  // A merge patch guarded by the revision seen: a conflict is tried again
  // (the watch brings the change meanwhile).
  bool RemoveFinalizer(const GcObject& item, std::string_view finalizer) {
    api_.log().debug("garbage collector: removing the {} finalizer of {}", finalizer, PathOf(item));
    return api_.Patch(*item.kind, item.namespace_, item.name,
                      RemoveFinalizerPatch(item.finalizers, finalizer, item.revision), "merge",
                      "garbage collector: removing the " + std::string(finalizer) + " finalizer of") ==
           ControllerApi::Updated::kWritten;
  }

  // Deleted on the condition that it is still the object decided on.
  bool Delete(const GcObject& item, const std::string& propagation) {
    api_.log().debug("garbage collector: deleting {} ({}): no owner of it is left", PathOf(item), propagation);
    Result<client::ApiResponse> deleted = api_.Call({.verb = "delete",
                                                     .resource = client::ResourceArg(*item.kind),
                                                     .namespace_ = item.namespace_,
                                                     .name = item.name,
                                                     .propagation_policy = propagation,
                                                     .precondition_uid = item.uid,
                                                     .precondition_resource_version = std::to_string(item.revision)});
    if (deleted.ok() && deleted->status.code == 404) return true;  // gone already
    return api_.Succeeded(deleted, "garbage collector: deleting " + PathOf(item));
  }

  ControllerApi api_;
  std::vector<Followed> followed_;
  OnDemandInformer pods_;
  bool pods_listed_ = false;
  std::set<std::string> pod_keys_;  // the pods in the graph
  SimTime linger_until_{};          // pods followed until then: an object went
  OwnerGraph graph_;
  WorkQueue queue_;
  std::set<std::string> absent_;    // owners the API said are gone: "KEY#UID"
  std::set<std::string> reported_;  // dependents' uids with OwnerRefInvalidNamespace recorded
};

}  // namespace

void RunGarbageCollector(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  GarbageCollectorLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
