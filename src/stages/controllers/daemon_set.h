// The DaemonSet controller as plain logic (kube-controller-manager's
// daemon controller): which nodes a DaemonSet's pod should run on, what
// each node needs done (manage), how a rolling update replaces the pods
// within maxUnavailable or maxSurge, and the status counts. The loop
// (daemon_set_loop) reads the objects and acts on what these decide.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps_generated.h"
#include "base/clock.h"
#include "model/taints.h"
#include "pod_generated.h"
#include "scheduler/framework/node_info.h"
#include "stages/controllers/pod_record.h"

namespace podflow::controllers {

// The label with the template's hash on every pod a DaemonSet makes.
inline constexpr char kControllerRevisionHashLabel[] = "controller-revision-hash";

// The tolerations every DaemonSet pod gets, whatever its template says
// (AddOrUpdateDaemonPodTolerations): it stays on a node that is not ready
// or unreachable, and is placed on one under memory, disk or PID pressure
// or cordoned; with hostNetwork, also on one whose network is unavailable.
std::vector<model::Toleration> DaemonPodTolerations(bool host_network);
// `tolerations` with each of DaemonPodTolerations' added or, when one of
// the same key and effect is there, put in its place.
std::vector<model::Toleration> WithDaemonPodTolerations(std::vector<model::Toleration> tolerations,
                                                        bool host_network);

// What decides where a DaemonSet's pods may run, read once from its
// template's spec.
struct DaemonPlacement {
  std::string node_name;                            // spec.nodeName; "" for any
  model::Labels node_selector;                      // spec.nodeSelector
  std::optional<scheduler::NodeSelector> required;  // the required node affinity
  std::vector<model::Toleration> tolerations;       // with DaemonPodTolerations
};
DaemonPlacement DaemonPlacementOf(const api::PodSpec* spec);

// NodeShouldRunDaemonPod: whether a pod should be made on the node
// (nodeName, nodeSelector and required node affinity match, and every
// NoSchedule and NoExecute taint is tolerated), and whether one there
// may go on running (the same, but only NoExecute taints count).
struct NodeFit {
  bool should_run = false;
  bool should_continue_running = false;
};
NodeFit NodeShouldRunDaemonPod(const DaemonPlacement& placement, const scheduler::NodeInfo& node);

// Scheduled before not, then oldest first, then by name
// (podByCreationTimestampAndPhase).
void SortDaemonPods(std::vector<const PodRecord*>& pods);
// Made from the template of hash `hash`.
bool IsUpdatedDaemonPod(const PodRecord& pod, const std::string& hash);

// One node as a DaemonSet sees it: whether it exists, what it fits, and
// the DaemonSet's pods meant for it (not finished-and-deleting ones),
// sorted by SortDaemonPods.
struct DaemonNode {
  std::string name;
  bool exists = false;
  NodeFit fit;
  std::vector<const PodRecord*> pods;
};

// What manage decides for one node (podsShouldBeOnNode). `failed` are
// Failed pods to delete once their back-off allows (FailedDaemonPod);
// `succeeded` Succeeded ones to delete (SucceededDaemonPod); `remove` the
// others to delete (misscheduled, extra, replaced).
struct NodeActions {
  bool create = false;
  std::vector<const PodRecord*> failed, succeeded, remove;
};
NodeActions PodsShouldBeOnNode(const DaemonNode& node, const std::string& hash, bool surge,
                               int32_t min_ready_seconds, SimTime now);

// maxSurge and maxUnavailable of `desired` (both rounded up); when both
// come to 0 with pods to run, maxUnavailable is 1.
struct DaemonFenceposts {
  int32_t max_surge = 0;
  int32_t max_unavailable = 0;
};
DaemonFenceposts ResolveDaemonFenceposts(const api::RollingUpdateDaemonSet* rolling,
                                         int32_t desired);

// A rolling update's step (rollingUpdate): the old pods to delete and the
// nodes to make a new pod on, given every node that has pods of the
// DaemonSet or should run one. Without surge, old pods go while at most
// maxUnavailable nodes are without an available pod (an old pod not
// available goes at once); with surge, a new pod is made beside an old one
// on at most maxSurge nodes at a time, the old one deleted once the new is
// available.
struct RollingPlan {
  std::vector<const PodRecord*> remove;
  std::vector<std::string> create_on;
};
RollingPlan PlanRollingUpdate(const std::vector<DaemonNode>& nodes, const std::string& hash,
                              const DaemonFenceposts& fenceposts, int32_t desired,
                              int32_t min_ready_seconds, SimTime now);

// The DaemonSet's status counts over the nodes that exist.
struct DaemonCounts {
  int32_t desired = 0, current = 0, misscheduled = 0, ready = 0, updated = 0, available = 0,
          unavailable = 0;
  friend bool operator==(const DaemonCounts&, const DaemonCounts&) = default;
};
DaemonCounts CountDaemonPods(const std::vector<DaemonNode>& nodes, const std::string& hash,
                             int32_t min_ready_seconds, SimTime now);

// The back-off between deletions of failed pods on one node
// (failedPodsBackoff): 1 s, doubled on each failure seen within it, up to
// 15 minutes; forgotten after twice that without one.
class FailedPodBackoff {
 public:
  static constexpr SimDuration kInitial{1000};
  static constexpr SimDuration kMax{15 * 60 * 1000};

  // Whether a failed pod under `key` must wait; when so, `wait` is how long.
  bool InBackoff(const std::string& key, SimTime now, SimDuration& wait) const;
  // A failed pod under `key` is deleted now.
  void Next(const std::string& key, SimTime now);
  // Drops the entries unused for 2 * kMax.
  void Collect(SimTime now);

 private:
  struct Entry {
    SimDuration delay;
    SimTime updated;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace podflow::controllers
