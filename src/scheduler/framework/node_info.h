// NodeInfo: a node and the pods the scheduler counts on it, with the sums
// kube-scheduler's framework.NodeInfo keeps (Requested, NonZeroRequested,
// UsedPorts), so that Filter and Score read numbers, not objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "node_generated.h"
#include "scheduler/framework/labels.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/resources.h"

namespace podflow::scheduler {

class NodeInfo {
 public:
  NodeInfo() = default;

  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  Resources allocatable;  // status.allocatable; allowed_pods from "pods"

  // Sums over pods(): requests as Kubernetes computes them, and the
  // non-zero view (100m / 200Mi for containers naming no cpu / memory).
  const Resources& requested() const { return requested_; }
  int64_t non_zero_milli_cpu() const { return non_zero_milli_cpu_; }
  int64_t non_zero_memory() const { return non_zero_memory_; }
  // Host ports of the pods' containers, one entry per use.
  const std::vector<HostPort>& used_ports() const { return used_ports_; }
  const std::vector<std::shared_ptr<const PodInfo>>& pods() const { return pods_; }

  // Counts `pod` on this node. Does not check that it fits.
  void AddPod(std::shared_ptr<const PodInfo> pod);
  // Uncounts the pod with `uid`; NotFound when it is not on this node.
  Status RemovePod(std::string_view uid);

  // Kubernetes' HostPortInfo.CheckConflict: a used (protocol, port) on the
  // same IP, or on 0.0.0.0, or any IP when `want` binds 0.0.0.0.
  bool HostPortConflicts(const HostPort& want) const;

 private:
  Resources requested_;
  int64_t non_zero_milli_cpu_ = 0;
  int64_t non_zero_memory_ = 0;
  std::vector<HostPort> used_ports_;
  std::vector<std::shared_ptr<const PodInfo>> pods_;
};

// Builds the NodeInfo of a verified stored node (no pods yet). Returns
// Invalid naming the entry when an allocatable quantity does not parse.
Result<NodeInfo> NodeInfoFromNode(const api::Node& node);

}  // namespace podflow::scheduler
