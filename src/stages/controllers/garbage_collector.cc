#include "stages/controllers/garbage_collector.h"

#include <algorithm>

#include "model/kind_types.h"
#include "model/objects.h"
#include "model/value.h"
#include "stages/controllers/owner_refs.h"

namespace podflow::controllers {
namespace {

bool Has(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

const OwnerLink* LinkTo(const GcObject& object, const std::string& owner_uid) {
  for (const OwnerLink& link : object.owners) {
    if (link.uid == owner_uid) return &link;
  }
  return nullptr;
}

}  // namespace

bool GcObject::DeletingDependents() const { return deleting && Has(finalizers, model::kForegroundFinalizer); }
bool GcObject::Orphaning() const { return deleting && Has(finalizers, model::kOrphanFinalizer); }

std::optional<GcObject> ReadGcObject(const model::KindInfo& kind, std::string_view bytes, int64_t revision) {
  if (!model::VerifyObject(kind, bytes).ok()) return std::nullopt;
  std::optional<GcObject> out;
  model::VisitKind(kind, [&]<typename T>() {
    const api::ObjectMeta* meta = flatbuffers::GetRoot<T>(bytes.data())->metadata();
    if (meta == nullptr) return;
    GcObject object;
    object.kind = &kind;
    object.namespace_ = Str(meta->namespace_());
    object.name = Str(meta->name());
    object.uid = Str(meta->uid());
    object.revision = revision;
    object.deleting = meta->deletion_timestamp() != nullptr && meta->deletion_timestamp()->size() > 0;
    if (meta->owner_references() != nullptr) {
      for (const api::OwnerReference* ref : *meta->owner_references()) {
        object.owners.push_back(OwnerLink{Str(ref->api_version()), Str(ref->kind()), Str(ref->name()),
                                          Str(ref->uid()), ref->block_owner_deletion().value_or(false)});
      }
    }
    if (meta->finalizers() != nullptr) {
      for (const flatbuffers::String* f : *meta->finalizers()) object.finalizers.push_back(f->str());
    }
    out = std::move(object);
  });
  return out;
}

GcDecision DecideDependent(const GcObject& item, const std::vector<OwnerState>& states, bool has_dependents) {
  GcDecision out;
  if (item.owners.empty() || states.size() != item.owners.size()) return out;
  bool solid = false, waiting = false;
  std::vector<std::string> dropped;
  for (size_t i = 0; i < states.size(); ++i) {
    switch (states[i]) {
      case OwnerState::kUnresolvable:
        return out;  // not the collector's to decide
      case OwnerState::kSolid:
        solid = true;
        break;
      case OwnerState::kWaiting:
        waiting = true;
        dropped.push_back(item.owners[i].uid);
        break;
      case OwnerState::kDangling:
        dropped.push_back(item.owners[i].uid);
        break;
    }
  }
  if (solid) {
    // Kept for the owner it still has; a reference to one gone, or to one
    // waiting for its dependents, would only hold that one up.
    if (!dropped.empty()) {
      out.action = GcDecision::Action::kRemoveOwners;
      out.owner_uids = std::move(dropped);
    }
    return out;
  }
  out.action = GcDecision::Action::kDelete;
  if (waiting && has_dependents) {
    out.propagation = "Foreground";  // so that its owner waits for its dependents too
  } else if (Has(item.finalizers, model::kOrphanFinalizer)) {
    out.propagation = "Orphan";
  } else if (Has(item.finalizers, model::kForegroundFinalizer)) {
    out.propagation = "Foreground";
  } else {
    out.propagation = "Background";
  }
  return out;
}

std::optional<std::string> OwnerKey(const OwnerLink& ref, std::string_view namespace_) {
  const model::KindInfo* kind = model::FindKind(ref.api_version, ref.kind);
  if (kind == nullptr) return std::nullopt;
  return model::ObjectKey(*kind, kind->namespaced ? namespace_ : std::string_view(), ref.name);
}

std::optional<OwnerState> OwnerGraph::Classify(const GcObject& item, const OwnerLink& ref) const {
  const model::KindInfo* kind = model::FindKind(ref.api_version, ref.kind);
  if (kind == nullptr || (kind->namespaced && !item.kind->namespaced)) return OwnerState::kUnresolvable;
  const GcObject* owner = Find(*OwnerKey(ref, item.namespace_));
  if (owner == nullptr || owner->uid != ref.uid) return std::nullopt;
  return owner->DeletingDependents() ? OwnerState::kWaiting : OwnerState::kSolid;
}

bool OwnerGraph::NeedsLook(const GcObject& item) const {
  return std::any_of(item.owners.begin(), item.owners.end(), [&](const OwnerLink& ref) {
    std::optional<OwnerState> state = Classify(item, ref);
    return !state.has_value() || *state == OwnerState::kWaiting;
  });
}

void OwnerGraph::Count(const GcObject& object, int sign) {
  for (const OwnerLink& ref : object.owners) links_by_kind_[ref.kind] += static_cast<size_t>(sign);
  if (object.DeletingDependents() || object.Orphaning()) waiting_ += static_cast<size_t>(sign);
}

size_t OwnerGraph::LinksTo(std::string_view kind) const {
  auto it = links_by_kind_.find(kind);
  return it == links_by_kind_.end() ? 0 : it->second;
}

void OwnerGraph::Forget(const std::string& key) {
  std::optional<GcObject> was = objects_.Erase(key);
  if (!was) return;
  Count(*was, -1);
  for (const OwnerLink& ref : was->owners) {
    auto deps = dependents_.find(ref.uid);
    if (deps == dependents_.end()) continue;
    deps->second.erase(key);
    if (deps->second.empty()) dependents_.erase(deps);
  }
}

OwnerGraph::Work OwnerGraph::Upsert(const std::string& key, GcObject object) {
  Work work;
  if (const GcObject* old = Find(key); old != nullptr && old->uid != object.uid) work = Remove(key);
  std::optional<GcObject> was = objects_.Erase(key);
  if (was) Count(*was, -1);
  Count(object, +1);
  if (was) {
    for (const OwnerLink& ref : was->owners) {
      const OwnerLink* now = LinkTo(object, ref.uid);
      if (now == nullptr) {
        auto deps = dependents_.find(ref.uid);
        if (deps != dependents_.end()) {
          deps->second.erase(key);
          if (deps->second.empty()) dependents_.erase(deps);
        }
      }
      // An owner waiting for its dependents that this one no longer holds up.
      const bool unblocked = ref.block_owner_deletion && (now == nullptr || !now->block_owner_deletion);
      const GcObject* owner = FindUid(ref.uid);
      if (unblocked && owner != nullptr && owner->DeletingDependents()) work.attempt.push_back(*KeyOf(ref.uid));
    }
  }
  for (const OwnerLink& ref : object.owners) dependents_[ref.uid].insert(key);
  const bool started_foreground = object.DeletingDependents() && !(was && was->DeletingDependents());
  const bool started_orphaning = object.Orphaning() && !(was && was->Orphaning());
  const std::string uid = object.uid;
  objects_.Put(key, std::move(object));
  const GcObject& now = *Find(key);
  if (started_foreground) {
    std::vector<std::string> deps = Dependents(uid);
    work.attempt.insert(work.attempt.end(), deps.begin(), deps.end());
  }
  if (started_foreground || NeedsLook(now)) work.attempt.push_back(key);
  if (started_orphaning) work.orphan.push_back(key);
  return work;
}

OwnerGraph::Work OwnerGraph::Remove(const std::string& key) {
  Work work;
  const GcObject* found = Find(key);
  if (found == nullptr) return work;
  const GcObject was = *found;
  Forget(key);
  for (const OwnerLink& ref : was.owners) {
    const GcObject* owner = FindUid(ref.uid);
    if (owner != nullptr && owner->DeletingDependents()) work.attempt.push_back(*KeyOf(ref.uid));
  }
  std::vector<std::string> deps = Dependents(was.uid);
  work.attempt.insert(work.attempt.end(), deps.begin(), deps.end());
  return work;
}

const GcObject* OwnerGraph::Find(const std::string& key) const {
  auto it = objects_.records().find(key);
  return it == objects_.records().end() ? nullptr : &it->second;
}

const GcObject* OwnerGraph::FindUid(const std::string& uid) const {
  const std::string* key = objects_.KeyOf(uid);
  return key != nullptr ? Find(*key) : nullptr;
}

std::vector<std::string> OwnerGraph::Dependents(const std::string& uid) const {
  auto it = dependents_.find(uid);
  if (it == dependents_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

std::vector<std::string> OwnerGraph::BlockingDependents(const std::string& uid) const {
  std::vector<std::string> out;
  for (const std::string& key : Dependents(uid)) {
    const GcObject* dep = Find(key);
    if (dep != nullptr && dep->uid == uid) continue;  // an object that names itself does not hold itself up
    const OwnerLink* link = dep != nullptr ? LinkTo(*dep, uid) : nullptr;
    if (link != nullptr && link->block_owner_deletion) out.push_back(key);
  }
  return out;
}

bool OwnerGraph::HasDependents(const std::string& uid) const { return dependents_.contains(uid); }

std::string UnblockOwnersPatch(const GcObject& item) {
  using model::Value;
  Value refs = Value::Array();
  for (const OwnerLink& ref : item.owners) {
    if (!ref.block_owner_deletion) continue;
    Value entry = Value::Object();
    entry.Set("apiVersion", Value::String(ref.api_version));
    entry.Set("kind", Value::String(ref.kind));
    entry.Set("name", Value::String(ref.name));
    entry.Set("uid", Value::String(ref.uid));
    entry.Set("blockOwnerDeletion", Value::Bool(false));
    refs.Append(std::move(entry));
  }
  return OwnerRefsPatch(std::move(refs), item.uid);
}

std::string RemoveFinalizerPatch(const std::vector<std::string>& finalizers, std::string_view finalizer,
                                 int64_t revision) {
  using model::Value;
  Value left = Value::Array();
  for (const std::string& f : finalizers) {
    if (f != finalizer) left.Append(Value::String(f));
  }
  Value meta = Value::Object();
  meta.Set("resourceVersion", Value::String(std::to_string(revision)));
  meta.Set("finalizers", left.items().empty() ? Value() : std::move(left));
  Value patch = Value::Object();
  patch.Set("metadata", std::move(meta));
  return model::ToJson(patch);
}

}  // namespace podflow::controllers
