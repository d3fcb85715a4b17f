// The ReplicaSet controller as plain logic (kube-controller-manager's
// replicaset): what it keeps of a pod, which pods count, which to delete
// first when there are too many, how many to create at a time, the counts
// its status reports, and the expectations that keep a slow watch from
// causing a second round of creations. Time is passed in; the stage's loop
// (replica_set_loop) reads and writes the objects.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/labels.h"
#include "pod_generated.h"

namespace podflow::controllers {

// At most this many pods created or deleted by one sync of a ReplicaSet
// (kube-controller-manager's burstReplicas).
inline constexpr int kBurstReplicas = 500;
// The annotation that orders deletions: lower goes first.
inline constexpr char kPodDeletionCost[] = "controller.kubernetes.io/pod-deletion-cost";

// What the controllers keep of a pod.
struct PodRecord {
  std::string key, namespace_, name, uid, node;
  model::Labels labels;
  std::string controller_uid;  // its controller ownerReference's uid; "" when it has none
  api::PodPhase phase = api::PodPhase::Unset;
  bool deleting = false;            // it has a deletionTimestamp
  bool ready = false;               // its Ready condition is True ...
  std::optional<SimTime> ready_at;  // ... since then (lastTransitionTime)
  std::optional<SimTime> created;
  int32_t restarts = 0;       // the most restarts of any of its containers
  int32_t deletion_cost = 0;  // kPodDeletionCost (0 when absent or not an int32)
};

// The pod stored at `key` as `bytes`; nullopt when it is not a valid Pod.
std::optional<PodRecord> ReadPod(const std::string& key, std::string_view bytes);

// A pod that counts towards replicas: not finished and not being deleted.
bool IsActive(const PodRecord& pod);
// Ready for at least `min_ready_seconds` at `now`.
bool IsAvailable(const PodRecord& pod, int32_t min_ready_seconds, SimTime now);

// The `count` pods of `active` (a ReplicaSet's) to delete first, in the
// order kube-controller-manager ranks them: unscheduled before scheduled;
// Pending, Unknown, then Running; not ready before ready; lower deletion
// cost first; more pods of `related` (the ReplicaSet's and its siblings',
// those of the same owner) on its node first; ready for less time first;
// more restarts first; newer first. Ready and creation times are compared
// in powers of two of their age at `now` (LogarithmicScaleDown), equal
// ones by UID.
std::vector<const PodRecord*> PodsToDelete(std::vector<const PodRecord*> active,
                                           const std::vector<const PodRecord*>& related, int count, SimTime now);

// How many pods to create in each round, slow start: 1, 2, 4, ... adding
// up to `count`. A round with a failure ends the creations.
std::vector<int> SlowStartBatches(int count);

// The counts of a ReplicaSet's status from its active pods.
struct ReplicaCounts {
  int32_t replicas = 0;       // active pods
  int32_t fully_labeled = 0;  // ... whose labels include every template label
  int32_t ready = 0;
  int32_t available = 0;      // ready for minReadySeconds
  friend bool operator==(const ReplicaCounts&, const ReplicaCounts&) = default;
};
ReplicaCounts CountReplicas(const std::vector<const PodRecord*>& active, const model::Labels& template_labels,
                            int32_t min_ready_seconds, SimTime now);

// The creations and deletions a controller has asked for and not yet seen
// by watch, per owner: until they are seen (or kExpectationsTimeout has
// passed since the oldest was asked for), the owner's pods are not counted
// again, so the same pods are not created twice.
class Expectations {
 public:
  static constexpr SimDuration kTimeout{5 * 60 * 1000};

  void ExpectCreate(const std::string& owner, const std::string& pod_key, SimTime now);
  void ExpectDelete(const std::string& owner, const std::string& pod_key, SimTime now);
  // The pod was seen: present (a creation done), or deleting or gone (a
  // deletion done). Returns the owner it was expected for, if any.
  std::optional<std::string> Observe(const std::string& pod_key, bool present);
  // A creation that got no answer: it may have been made, under a name not
  // known. Met by the next pod of the owner seen new (ObserveNew).
  void ExpectUnnamedCreate(const std::string& owner, SimTime now);
  // A pod of `owner` seen for the first time; whether it met an unnamed
  // creation.
  bool ObserveNew(const std::string& owner);
  // A creation or deletion asked for that failed: not to be waited for.
  void Drop(const std::string& pod_key);
  bool Satisfied(const std::string& owner, SimTime now) const;
  // When the owner's oldest pending expectation lapses; nullopt when none.
  std::optional<SimTime> Lapses(const std::string& owner) const;
  void Forget(const std::string& owner);
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::string owner;
    bool create;
    SimTime since;
  };
  std::map<std::string, Pending> pending_;                 // by pod key
  std::map<std::string, std::map<std::string, SimTime>> by_owner_;  // owner -> pod key -> since
  uint64_t unnamed_ = 0;  // the names given to unnamed creations ("?1", "?2", ...)
};

}  // namespace podflow::controllers
