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

// One image a node holds (status.images), under one of its names.
struct ImageState {
  std::string name;  // NormalizedImageName of a reported name
  int64_t size_bytes = 0;
};

// A controller a node asks pods of to stay away (the
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation).
struct AvoidedController {
  std::string kind;
  std::string uid;
};

inline constexpr std::string_view kPreferAvoidPodsAnnotationKey =
    "scheduler.alpha.kubernetes.io/preferAvoidPods";

class NodeInfo {
 public:
  NodeInfo() = default;

  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  Resources allocatable;  // status.allocatable; allowed_pods from "pods"
  // status.images, one entry per distinct normalized name (the first image
  // reporting a name wins), sorted by name.
  std::vector<ImageState> images;
  // status.conditions MemoryPressure / DiskPressure / PIDPressure with
  // status True.
  bool memory_pressure = false;
  bool disk_pressure = false;
  bool pid_pressure = false;
  // preferAvoidPods[].podSignature.podController of the annotation; empty
  // when absent or not valid JSON (the node is then avoided by no one).
  std::vector<AvoidedController> prefer_avoid_pods;

  // The image of that normalized name, or nullptr.
  const ImageState* FindImage(std::string_view name) const;

  // Sums over pods(): requests as Kubernetes computes them, and the
  // non-zero view (100m / 200Mi for containers naming no cpu / memory).
  const Resources& requested() const { return requested_; }
  int64_t non_zero_milli_cpu() const { return non_zero_milli_cpu_; }
  int64_t non_zero_memory() const { return non_zero_memory_; }
  // Host ports of the pods' containers, one entry per use.
  const std::vector<HostPort>& used_ports() const { return used_ports_; }
  const std::vector<std::shared_ptr<const PodInfo>>& pods() const { return pods_; }
  // The pods of pods() declaring podAffinity or podAntiAffinity (InterPodAffinity
  // scoring walks only these), in pods() order.
  const std::vector<std::shared_ptr<const PodInfo>>& pods_with_affinity() const {
    return pods_with_affinity_;
  }

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
  std::vector<std::shared_ptr<const PodInfo>> pods_with_affinity_;
};

// Builds the NodeInfo of a verified stored node (no pods yet). Returns
// Invalid naming the entry when an allocatable quantity does not parse.
Result<NodeInfo> NodeInfoFromNode(const api::Node& node);

}  // namespace podflow::scheduler
