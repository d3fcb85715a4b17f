// The garbage collector as plain logic (kube-controller-manager's
// garbagecollector): what it keeps of every object, the graph of owners and
// dependents, what a change asks it to look at again, and what becomes of
// an object whose owners are gone or being deleted. The stage's loop
// (garbage_collector_loop) follows the log, asks the API when the graph
// cannot tell, and writes.
//
// Deletion propagates three ways (DeleteOptions.propagationPolicy):
// - Background: the owner goes at once; its dependents, their owners all
//   gone, are deleted after it.
// - Foreground: the owner stays, deleting with the `foregroundDeletion`
//   finalizer, while its dependents are deleted; it goes once no dependent
//   whose reference has blockOwnerDeletion is left.
// - Orphan: the owner stays with the `orphan` finalizer until every
//   dependent's reference to it is removed; then it goes, they stay.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/codec.h"
#include "stages/controllers/object_index.h"

namespace podflow::controllers {

// One entry of an object's metadata.ownerReferences.
struct OwnerLink {
  std::string api_version, kind, name, uid;
  bool block_owner_deletion = false;
};

// What the collector keeps of an object.
struct GcObject {
  const model::KindInfo* kind = nullptr;
  std::string namespace_, name, uid;
  int64_t revision = 0;  // the revision it was last changed at (its resourceVersion)
  std::vector<OwnerLink> owners;
  std::vector<std::string> finalizers;
  bool deleting = false;  // it has a deletionTimestamp

  // Being deleted in the foreground: waiting for its dependents to go.
  bool DeletingDependents() const;
  // Being deleted with its dependents orphaned: waiting for them to be released.
  bool Orphaning() const;
};

// The object of `kind` stored as `bytes` at `revision`; nullopt when the
// bytes are not a valid object of the kind.
std::optional<GcObject> ReadGcObject(const model::KindInfo& kind, std::string_view bytes, int64_t revision);

// Where an owner reference of a dependent leads.
enum class OwnerState {
  kSolid,         // the owner exists and is not deleting its dependents
  kDangling,      // no such owner (gone, never was, or another object by its name)
  kWaiting,       // the owner is being deleted in the foreground
  kUnresolvable,  // a kind podflow does not serve, or a namespaced owner of a cluster-scoped object
};

// What becomes of a dependent whose owners are as `states` says (one per
// entry of item.owners), kube-controller-manager's attemptToDeleteItem:
// - kKeep: a solid owner is left (and no reference to drop), it has no
//   owners, or one cannot be resolved;
// - kRemoveOwners: a solid owner is left, so the references to the gone
//   and the foreground-deleting owners (`owner_uids`) are dropped;
// - kDelete: no solid owner — in the foreground when an owner waits for it
//   and it has dependents of its own, else as its own finalizers ask
//   (orphan, foregroundDeletion), else in the background.
struct GcDecision {
  enum class Action { kKeep, kRemoveOwners, kDelete };
  Action action = Action::kKeep;
  std::vector<std::string> owner_uids;  // kRemoveOwners
  std::string propagation;              // kDelete: "Background", "Foreground" or "Orphan"
};
GcDecision DecideDependent(const GcObject& item, const std::vector<OwnerState>& states, bool has_dependents);

// Every object the collector follows, by key and by uid, and who names whom
// as an owner. Not thread-safe.
class OwnerGraph {
 public:
  // What a change asks the collector to look at (object keys).
  struct Work {
    std::vector<std::string> attempt;  // decide the object's fate, or whether it may go now
    std::vector<std::string> orphan;   // release its dependents
  };

  // The object at `key` is now `object` (another uid at the same key: the
  // old one went). Looked at: the object, when an owner of it is not known
  // here or is being deleted in the foreground, or when it starts being
  // deleted in the foreground (then with all its dependents); to be
  // orphaned when it starts being deleted with the orphan finalizer; an
  // owner deleting in the foreground that it stopped blocking.
  Work Upsert(const std::string& key, GcObject object);
  // The object at `key` is gone: its dependents are looked at, and its
  // owners that were waiting for it.
  Work Remove(const std::string& key);
  // Drops what the graph holds of the object at `key` without taking it
  // as gone (its kind is no longer followed).
  void Forget(const std::string& key);

  const GcObject* Find(const std::string& key) const;
  const GcObject* FindUid(const std::string& uid) const;
  const std::string* KeyOf(const std::string& uid) const { return objects_.KeyOf(uid); }
  // The keys of the objects that name `uid` as an owner (all of them, or
  // only those whose reference blocks its deletion).
  std::vector<std::string> Dependents(const std::string& uid) const;
  std::vector<std::string> BlockingDependents(const std::string& uid) const;
  bool HasDependents(const std::string& uid) const;
  // How many owner references name an owner of `kind` ("Pod").
  size_t LinksTo(std::string_view kind) const;
  // How many objects are deleting in the foreground or with orphan.
  size_t Waiting() const { return waiting_; }

  // `ref` of `item` as far as the graph knows it; nullopt when only the API
  // can tell (no object of the owner's uid at the key it names: the watch
  // may not have brought it yet).
  std::optional<OwnerState> Classify(const GcObject& item, const OwnerLink& ref) const;

  size_t size() const { return objects_.size(); }

 private:
  // Owners of `item` the graph does not hold where the reference says, or
  // that are deleting in the foreground.
  bool NeedsLook(const GcObject& item) const;

  // Keeps the counts below as `object` enters (+1) or leaves (-1).
  void Count(const GcObject& object, int sign);

  ObjectIndex<GcObject> objects_;
  std::map<std::string, std::set<std::string>> dependents_;  // owner uid -> dependent keys
  std::map<std::string, size_t, std::less<>> links_by_kind_;  // owner kind -> references to one
  size_t waiting_ = 0;                                         // DeletingDependents or Orphaning
};

// The key an owner reference of an object in `namespace_` names (the
// owner's kind's; a cluster-scoped kind's without the namespace); nullopt
// when it names a kind podflow does not serve.
std::optional<std::string> OwnerKey(const OwnerLink& ref, std::string_view namespace_);

// A strategic merge patch that sets blockOwnerDeletion false on every
// reference of `item` that blocks (so that an owner in a cycle of
// foreground deletions is not held up by it), on its uid.
std::string UnblockOwnersPatch(const GcObject& item);
// A merge patch that leaves `finalizers` without `finalizer`, on the
// condition that the object is still at `revision`.
std::string RemoveFinalizerPatch(const std::vector<std::string>& finalizers, std::string_view finalizer,
                                 int64_t revision);

}  // namespace podflow::controllers
