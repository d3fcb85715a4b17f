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
#include "scheduler/framework/pod_affinity.h"
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

// One preferredDuringSchedulingIgnoredDuringExecution term.
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
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

// One entry of spec.topologySpreadConstraints with Kubernetes' defaults
// applied (PodTopologySpread reads it; nothing is parsed per cycle).
struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  // Unset counts as DoNotSchedule, the API's documented default.
  api::UnsatisfiableConstraintAction when_unsatisfiable = api::UnsatisfiableConstraintAction::DoNotSchedule;
  // labelSelector (null: matches nothing) ANDed with "key In (value)" for
  // each matchLabelKeys key the pod has a label for; with such keys a null
  // labelSelector becomes just those requirements.
  LabelSelector selector;
  int32_t min_domains = 1;  // unset: 1
  api::NodeInclusionPolicy node_affinity_policy = api::NodeInclusionPolicy::Honor;  // unset: Honor
  api::NodeInclusionPolicy node_taints_policy = api::NodeInclusionPolicy::Ignore;   // unset: Ignore
  std::vector<std::string> match_label_keys;
};

// Parses spec.topologySpreadConstraints (nullptr: none) of a pod with
// `pod_labels`. Invalid, naming the entry, when a labelSelector is malformed
// (admission should have refused it). Defined in spread_constraints.cc.
Result<std::vector<TopologySpreadConstraint>> TopologySpreadConstraintsFromApi(
    const flatbuffers::Vector<flatbuffers::Offset<api::TopologySpreadConstraint>>* constraints,
    const Labels& pod_labels);

struct PodInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  Labels labels;
  // metadata.deletionTimestamp is set: topology spreading does not count
  // it. Kept beside labels: both are read for every pod a spread counts.
  bool deleting = false;
  std::string node_name;       // spec.nodeName: set once bound (or asked for)
  std::string scheduler_name;  // empty means kDefaultSchedulerName
  int32_t priority = 0;
  api::PreemptionPolicy preemption_policy = api::PreemptionPolicy::Unset;
  // status.nominatedNodeName: the node preemption made room on.
  std::string nominated_node_name;
  // status.startTime (RFC 3339 at second precision, so it sorts as text);
  // empty until the pod starts. Preemption's tie rules read it.
  std::string start_time;

  Labels node_selector;
  // requiredDuringSchedulingIgnoredDuringExecution; nullopt when the pod has none.
  std::optional<NodeSelector> required_node_affinity;
  // preferredDuringSchedulingIgnoredDuringExecution, terms of weight 0 left
  // out (they never add to a score).
  std::vector<PreferredSchedulingTerm> preferred_node_affinity;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;  // app containers and sidecars: those that run together

  // Kubernetes' PodRequests: max(sum of containers and sidecars, max over
  // init containers of (that init container + sidecars started before it)),
  // plus overhead.
  Resources requests;
  // The same with 100m cpu / 200Mi memory for each container naming no cpu /
  // memory request (the scoring view, NodeInfo.NonZeroRequested).
  int64_t non_zero_milli_cpu = 0;
  int64_t non_zero_memory = 0;

  std::vector<PodVolume> volumes;  // spec.volumes in order

  std::vector<TopologySpreadConstraint> topology_spread_constraints;

  // Container images, init containers first, as NormalizedImageName gives
  // them (containers naming no image are left out); num_containers counts
  // init and regular containers (ImageLocality's per-container bound).
  std::vector<std::string> images;
  int32_t num_containers = 0;
  // The controller ownerReference (controller: true), if any:
  // NodePreferAvoidPods compares it with a node's preferAvoidPods.
  std::string controller_kind;
  std::string controller_uid;
  // QoS class BestEffort: no init or regular container names a cpu or
  // memory request or limit above 0 (v1qos.GetPodQOS).
  bool best_effort = false;

  // spec.affinity.podAffinity / podAntiAffinity, parsed (InterPodAffinity).
  PodAffinityTerms pod_affinity;

  std::string FullName() const { return namespace_ + "/" + name; }
};

// A stored NodeSelector (terms ORed, requirements ANDed) as a plain value.
NodeSelector NodeSelectorFromApi(const api::NodeSelector& selector);

// Builds the PodInfo of a verified stored pod. Returns Invalid naming the
// field when a quantity does not parse (admission should have refused it).
Result<PodInfo> PodInfoFromPod(const api::Pod& pod);

// An image reference in full: the registry docker.io when the first path
// component names no host ("nginx", "library/nginx", "bitnami/redis";
// index.docker.io is docker.io too), "library/" for a one-component
// docker.io name, and ":latest" when there is neither tag nor digest:
// "nginx" -> "docker.io/library/nginx:latest", "quay.io/a/b" ->
// "quay.io/a/b:latest", "registry:5000/x@sha256:..." unchanged. Applied to
// pod images and to the names nodes report alike. "" stays "".
std::string NormalizedImageName(std::string_view image);

}  // namespace podflow::scheduler
