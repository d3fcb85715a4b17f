// The Deployment controller as plain logic (kube-controller-manager's
// deployment): the pod-template-hash, maxSurge and maxUnavailable as
// numbers, how far a rolling update may scale the new ReplicaSet up and the
// old ones down, proportional scaling of a Deployment resized mid-rollout,
// and the status with its Available and Progressing conditions. The
// ReplicaSets are values here; the stage's loop (deployment_loop) reads and
// writes the objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps_generated.h"
#include "base/clock.h"

namespace podflow::controllers {

inline constexpr char kRevisionAnnotation[] = "deployment.kubernetes.io/revision";
inline constexpr char kRevisionHistoryAnnotation[] = "deployment.kubernetes.io/revision-history";
inline constexpr char kDesiredReplicasAnnotation[] = "deployment.kubernetes.io/desired-replicas";
inline constexpr char kMaxReplicasAnnotation[] = "deployment.kubernetes.io/max-replicas";

// The pod-template-hash of a template (`canonical`: its canonical JSON)
// and the Deployment's collisionCount: FNV-1a (32 bits) of both, its
// decimal digits spelled in the alphabet "bcdfghjklmnpqrstvwxz2456789" as
// Kubernetes spells them ("5d59d67564"). The same template always gives
// the same hash; another collisionCount gives another.
std::string PodTemplateHash(std::string_view canonical, std::optional<int32_t> collision_count);

// An int-or-percent (maxSurge, maxUnavailable) of `total`: a number as it
// is, "N%" of total rounded up or down; nullopt when it is neither.
std::optional<int32_t> ScaledValue(const api::IntOrString* value, int32_t total, bool round_up);

// maxSurge (rounded up) and maxUnavailable (rounded down) of a rolling
// update to `replicas`; both 0 makes maxUnavailable 1, and maxUnavailable
// never exceeds replicas. Recreate, or 0 replicas: {0, 0}.
struct Fenceposts {
  int32_t max_surge = 0;
  int32_t max_unavailable = 0;
  friend bool operator==(const Fenceposts&, const Fenceposts&) = default;
};
Fenceposts ResolveFenceposts(const api::DeploymentSpec& spec);

// A ReplicaSet of a Deployment, as its controller weighs it.
struct SetState {
  std::string name;
  int32_t replicas = 0;    // spec.replicas: what it is asked for ...
  int32_t current = 0;     // status.replicas: what it has ...
  int32_t ready = 0;       // ... ready ...
  int32_t available = 0;   // ... and available
  std::optional<int32_t> max_replicas;  // kMaxReplicasAnnotation, when readable
  int64_t revision = 0;                 // kRevisionAnnotation, 0 when none
  SimTime created{};
  bool deleting = false;
};

// Oldest first (then by name): the order old ReplicaSets are scaled down in.
void SortOldestFirst(std::vector<SetState*>& sets);

// Rolling update: the replicas the new ReplicaSet may have now — up to
// `desired`, within desired + maxSurge pods asked of all (`all_replicas`).
int32_t RollingNewReplicas(int32_t desired, const Fenceposts& f, int32_t all_replicas, int32_t new_replicas);

// Rolling update: scales the old ReplicaSets down (their `replicas`
// lowered in place) as far as maxUnavailable allows — first the pods that
// are not available, then available ones, oldest ReplicaSets first.
// Returns how many were scaled away in all.
int32_t ScaleDownOld(int32_t desired, const Fenceposts& f, const SetState* new_set, std::vector<SetState*> old_sets);

// A Deployment resized while it has more than one active ReplicaSet: the
// difference spread over them in proportion to their sizes (from what each
// was sized for, kMaxReplicasAnnotation), the rounding left to the largest.
// Sets each one's `replicas` in place. `status_replicas`: the Deployment's
// status.replicas, for a ReplicaSet without the annotation.
void ScaleProportionally(int32_t desired, const Fenceposts& f, int32_t status_replicas, std::vector<SetState*> active);

// Whether the Deployment has reached what its spec asks for.
struct DeploymentCounts {
  int32_t replicas = 0, updated = 0, ready = 0, available = 0, unavailable = 0;
  friend bool operator==(const DeploymentCounts&, const DeploymentCounts&) = default;
};
// Its status counts from its ReplicaSets (`new_set` may be null).
DeploymentCounts CountDeployment(const std::vector<const SetState*>& all, const SetState* new_set);
bool DeploymentComplete(int32_t desired, const DeploymentCounts& counts);
// Progress since `before`: more updated, ready or available pods, or fewer old ones.
bool DeploymentProgressed(const DeploymentCounts& before, const DeploymentCounts& now);

// Sets `condition` (by type) in `status`, as Kubernetes does: unchanged
// when status and reason are; its lastTransitionTime kept while its
// status is. Returns whether it changed.
bool SetDeploymentCondition(api::DeploymentStatusT& status, const api::DeploymentConditionT& condition);
api::DeploymentConditionT DeploymentCondition(std::string type, api::ConditionStatus status, std::string reason,
                                              std::string message, SimTime now);

}  // namespace podflow::controllers
