// The ReplicaSet controller as plain logic (kube-controller-manager's
// replicaset): the counts its status reports (what it keeps of a pod,
// which to delete first and how many to create at a time: pod_record.h;
// its expectations: expectations.h). Time is passed in; the
// stage's loop (replica_set_loop) reads and writes the objects.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/labels.h"
#include "stages/controllers/expectations.h"
#include "stages/controllers/pod_record.h"

namespace podflow::controllers {

// At most this many pods created or deleted by one sync of a ReplicaSet
// (kube-controller-manager's burstReplicas).
inline constexpr int kBurstReplicas = 500;

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

}  // namespace podflow::controllers
