// The node lifecycle controller as plain logic (kube-controller-manager's
// nodelifecycle): a node whose agent has not been heard of within the grace
// period gets its kubelet's conditions marked Unknown; taints follow the
// conditions (NoSchedule for each, NoExecute for not-ready / unreachable);
// the pods of a node that stopped being Ready are marked not Ready. Time is
// passed in; the stage reads and writes the objects.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "cluster_generated.h"
#include "node_generated.h"
#include "pod_generated.h"

namespace podflow::controllers {

struct NodeLifecycleConfig {
  SimDuration monitor_period{5'000};          // --node-monitor-period
  SimDuration grace_period{50'000};           // --node-monitor-grace-period (50 s since 1.32)
  SimDuration startup_grace_period{60'000};   // --node-startup-grace-period
};

inline constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";
inline constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";

// When each node was last heard of, on this controller's own clock (as
// kube-controller-manager never compares its clock with a kubelet's): a
// change of the Ready condition's heartbeat or of the node lease's renewTime
// is a probe. A node first seen counts as heard of then. Not thread-safe.
class NodeHealth {
 public:
  explicit NodeHealth(NodeLifecycleConfig config) : config_(config) {}

  void ObserveNode(const std::string& name, const api::Node& node, SimTime now);
  void ObserveLease(const std::string& node, const api::Lease& lease, SimTime now);
  void Forget(const std::string& node);

  // Whether `node` has not been heard of for longer than its grace period
  // (the startup one while it has never posted a Ready condition).
  bool TimedOut(const std::string& name, const api::Node& node, SimTime now) const;

  const NodeLifecycleConfig& config() const { return config_; }

 private:
  struct Probe {
    std::string heartbeat;  // the Ready condition's lastHeartbeatTime
    std::string renewed;    // the lease's renewTime
    SimTime at{};
  };
  Probe& Touch(const std::string& node, SimTime now);

  NodeLifecycleConfig config_;
  std::map<std::string, Probe, std::less<>> probes_;
};

// The node with its kubelet's conditions (Ready, MemoryPressure,
// DiskPressure, PIDPressure) marked Unknown at `now`: an existing one
// "NodeStatusUnknown" / "Kubelet stopped posting node status." (its
// heartbeat kept), a missing one "NodeStatusNeverUpdated" / "Kubelet never
// posted node status.". nullopt when Ready is Unknown already (the
// controller writes the status only when Ready changes).
std::optional<api::NodeT> MarkedUnknown(const api::Node& node, SimTime now);

// The node with the taints its conditions call for, as the controller's
// tainting passes keep them: NoSchedule not-ready / unreachable /
// memory-pressure / disk-pressure / pid-pressure / network-unavailable /
// unschedulable, and NoExecute not-ready (Ready False) or unreachable
// (Ready Unknown), each added (a NoExecute one with timeAdded `now`) and
// removed once its condition is gone; other taints stay. nullopt when they
// are as they should be.
std::optional<api::NodeT> ConditionTaints(const api::Node& node, SimTime now);

// A strategic merge patch of the status subresource setting one pod
// condition (merged by type: the fields not named stay): MarkPodsNotReady's
// Ready False, taint eviction's DisruptionTarget.
std::string PodConditionPatch(std::string_view type, std::string_view status, std::string_view reason,
                              std::string_view message, SimTime now);

}  // namespace podflow::controllers
