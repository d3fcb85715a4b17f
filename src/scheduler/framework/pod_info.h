// PodInfo: what the scheduler needs of a pod, computed once from the stored
// api::Pod so that plugins never parse strings or quantities per node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "pod_generated.h"
#include "scheduler/framework/labels.h"
#include "scheduler/framework/resources.h"

namespace podflow::scheduler {

inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
inline constexpr std::string_view kDefaultBindAllHostIp = "0.0.0.0";

// A container's host port, sanitized as Kubernetes' HostPortInfo does: an
// empty hostIP is 0.0.0.0, an unset protocol is TCP. Only ports with
// hostPort > 0 are kept.
struct HostPort {
  api::Protocol protocol = api::Protocol::TCP;
  std::string host_ip{kDefaultBindAllHostIp};
  int32_t port = 0;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

// One NodeSelectorRequirement; for match_fields only "metadata.name" exists.
struct NodeSelectorRequirement {
  std::string key;
  api::NodeSelectorOperator op = api::NodeSelectorOperator::Unset;
  std::vector<std::string> values;
};

// Requirements ANDed; a term with no requirement at all matches no node.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
};

// Terms ORed; zero terms match no node.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
};

// What a pod volume's data is, as far as the volume plugins tell sources
// apart (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone).
// kCsi occurs for persistent volumes only.
enum class VolumeSourceKind {
  kOther,
  kGcePersistentDisk,
  kAwsElasticBlockStore,
  kAzureDisk,
  kCinder,
  kRbd,
  kIscsi,
  kCsi,
  kPersistentVolumeClaim,
  kEphemeral,
};

// One entry of spec.volumes, reduced to what the volume plugins compare.
struct PodVolume {
  std::string name;
  VolumeSourceKind kind = VolumeSourceKind::kOther;
  // The disk's identity: GCE pdName, EBS volumeID, Azure diskName, Cinder
  // volumeID, RBD image, iSCSI IQN; empty for other kinds.
  std::string id;
  std::string rbd_pool;
  std::vector<std::string> rbd_monitors;
  bool read_only = false;
  // The claim a kPersistentVolumeClaim volume names; for kEphemeral the
  // claim the ephemeral volume controller creates, "<pod name>-<volume name>".
  std::string claim_name;
};

struct PodInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  Labels labels;
  std::string node_name;       // spec.nodeName: set once bound (or asked for)
  std::string scheduler_name;  // empty means kDefaultSchedulerName
  int32_t priority = 0;
  api::PreemptionPolicy preemption_policy = api::PreemptionPolicy::Unset;

  Labels node_selector;
  // requiredDuringSchedulingIgnoredDuringExecution; nullopt when the pod has none.
  std::optional<NodeSelector> required_node_affinity;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;  // regular containers only, as Kubernetes counts them

  // Kubernetes' PodRequests: max(sum of containers and sidecars, max over
  // init containers of (that init container + sidecars started before it)),
  // plus overhead.
  Resources requests;
  // The same with 100m cpu / 200Mi memory for each container naming no cpu /
  // memory request (the scoring view, NodeInfo.NonZeroRequested).
  int64_t non_zero_milli_cpu = 0;
  int64_t non_zero_memory = 0;

  std::vector<PodVolume> volumes;  // spec.volumes in order

  std::string FullName() const { return namespace_ + "/" + name; }
};

// A stored NodeSelector (terms ORed, requirements ANDed) as a plain value.
NodeSelector NodeSelectorFromApi(const api::NodeSelector& selector);

// Builds the PodInfo of a verified stored pod. Returns Invalid naming the
// field when a quantity does not parse (admission should have refused it).
Result<PodInfo> PodInfoFromPod(const api::Pod& pod);

}  // namespace podflow::scheduler
