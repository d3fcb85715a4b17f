// What the workload controllers keep of a pod and how they rank pods
// (kube-controller-manager's controller utilities): which count as active
// and available, which of too many go first, and how many to make at a
// time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "model/labels.h"
#include "pod_generated.h"

namespace podflow::controllers {

// The annotation that orders deletions: lower goes first.
inline constexpr char kPodDeletionCost[] = "controller.kubernetes.io/pod-deletion-cost";
// The annotation (and label) with an Indexed Job's pod's completion index.
inline constexpr char kJobCompletionIndex[] = "batch.kubernetes.io/job-completion-index";

// A stored time (RFC 3339); nullopt when absent, empty or malformed.
std::optional<SimTime> StoredTime(std::string_view text);
inline std::optional<SimTime> StoredTime(const flatbuffers::String* s) {
  return s != nullptr ? StoredTime(s->string_view()) : std::nullopt;
}

// What the controllers keep of a pod.
struct PodRecord {
  std::string key, namespace_, name, uid, node;
  std::string target_node;     // TargetNodeName: node, or the one its required affinity names
  model::Labels labels;
  std::string controller_uid;  // its controller ownerReference's uid; "" when it has none
  api::PodPhase phase = api::PodPhase::Unset;
  bool deleting = false;            // it has a deletionTimestamp
  bool ready = false;               // its Ready condition is True ...
  std::optional<SimTime> ready_at;  // ... since then (lastTransitionTime)
  std::optional<SimTime> created;
  int32_t restarts = 0;       // the most restarts of any of its containers
  int32_t restart_total = 0;  // the restarts of all its containers and init containers
  int32_t deletion_cost = 0;  // kPodDeletionCost (0 when absent or not an int32)
  std::vector<std::string> finalizers;
  std::optional<int32_t> completion_index;  // kJobCompletionIndex, when a valid index
  std::optional<SimTime> finished_at;       // the last of its containers' finishedAt
};

// The node a pod is for: its spec.nodeName or, before it is bound, the
// metadata.name that its required node affinity names (the one matchFields
// term a DaemonSet's pod carries); "" when neither.
std::string TargetNodeName(const api::Pod& pod);

// The pod stored at `key` as `bytes`; nullopt when it is not a valid Pod.
std::optional<PodRecord> ReadPod(const std::string& key, std::string_view bytes);

// A pod that counts towards replicas: not finished and not being deleted.
bool IsActive(const PodRecord& pod);
// Ready for at least `min_ready_seconds` at `now`.
bool IsAvailable(const PodRecord& pod, int32_t min_ready_seconds, SimTime now);
// The earliest time one of `pods`, ready but not yet for
// `min_ready_seconds` at `now`, becomes available (when its owner is to be
// looked at again); nullopt when there is none.
std::optional<SimTime> NextAvailable(const std::vector<const PodRecord*>& pods, int32_t min_ready_seconds,
                                     SimTime now);

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

}  // namespace podflow::controllers
