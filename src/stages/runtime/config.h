// What the simulated runtime is configured with: the registry catalog, the
// simulated nodes (an explicit list and/or a template) and timings. Plain
// structs; ParseRuntimeConfig reads them from the `runtime:` section of the
// cluster config (config/README.md documents every key).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "model/image_catalog.h"
#include "stages/runtime/cidr.h"
#include "stages/runtime/container_host.h"

namespace podflow::runtime {

// The registry catalog is the model's: admission's ImagePolicy reads it too.
using model::CatalogImage;
using model::ImageCatalog;
using model::ImageReference;
using model::NormalizeImageReference;
using model::RegistryConfig;
using model::ResolvedImage;

struct TaintDef {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

// Labels, taints and capacity shared by explicit nodes and the template.
struct NodeShape {
  std::map<std::string, std::string> labels;
  std::vector<TaintDef> taints;
  // Resource name -> quantity text ("4", "8Gi"); kCapacityDefaults fill gaps.
  std::map<std::string, std::string> capacity;
  std::vector<std::string> images;  // pre-pulled image references
  // "simulated" or "process"; empty: the runtime's `type`.
  std::string type;
};

struct NodeDef {
  std::string name;
  NodeShape shape;
  std::string pod_cidr;     // empty: the next free block of the cluster CIDR
  std::string internal_ip;  // empty: the next address of nodeIPRange
};

// `count` nodes named <name_prefix>1 .. <name_prefix>N.
struct NodeTemplate {
  int64_t count = 0;
  std::string name_prefix = "node-";
  NodeShape shape;
};

// How long simulated things take.
struct RuntimeTiming {
  SimDuration container_start{0};       // Created -> running
  SimDuration init_run{5};              // an init container's run to exit 0
  SimDuration failed_pull{0};           // Pulling -> ErrImagePull
  SimDuration backoff_notice{1000};     // ErrImagePull -> ImagePullBackOff shown
  // Pulls at a time per node: 1 is kubelet's serializeImagePulls (the
  // default); 0 is no limit (serializeImagePulls false without
  // maxParallelImagePulls).
  int max_parallel_pulls = 1;
  // kubelet's back-off, for image pulls and container restarts alike.
  SimDuration backoff_initial{10'000};  // 10s ...
  SimDuration backoff_max{300'000};     // ... doubling up to 300s
  // kubelet's pod worker after a failed sync (a container whose config
  // cannot be made): it syncs the pod again this much later.
  SimDuration sync_retry{10'000};
  // kubelet's nodeLeaseDurationSeconds: each node's Lease is renewed every
  // quarter of it.
  int node_lease_seconds = 40;
  // kubelet's nodeStatusUpdateFrequency: how often each node's status is
  // looked at and posted when it changed (its image store).
  SimDuration node_status_update{10'000};
};

// What runs a node's containers: simulated (their behaviours, on the
// pipeline's clock) or real processes on this machine (process/process_engine.h).
enum class RuntimeType { kSimulated, kProcess };

struct RuntimeConfig {
  RuntimeType type = RuntimeType::kSimulated;  // every node's unless its own says otherwise
  std::string cluster_cidr = "10.244.0.0/16";
  int node_cidr_mask_size = 24;
  std::string node_ip_range = "192.168.0.0/16";
  std::vector<NodeDef> nodes;
  std::optional<NodeTemplate> node_template;
  RegistryConfig registry;
  RuntimeTiming timing;
  // The resource limits of a process node's containers (`ulimits:`), as
  // CRI-O's default_ulimits; none: they inherit podflow's own, as a CRI
  // runtime's containers inherit the runtime's.
  std::vector<ResourceLimit> ulimits;
  // `podNetwork:` a process node's pods get a network of their own (a
  // namespace each on their node's bridge, netns/pod_network.h) where this
  // machine allows one; false: they run on this machine's network.
  bool pod_network = true;
  // kubelet's clusterDNS and clusterDomain: what a ClusterFirst pod's
  // resolv.conf names (the proxy stage answers there unless told otherwise).
  std::vector<std::string> cluster_dns = {"10.96.0.10"};
  std::string cluster_domain = "cluster.local";
};

// Capacity a node reports for resources its definition leaves out.
inline const std::map<std::string, std::string>& CapacityDefaults() {
  static const std::map<std::string, std::string> kDefaults = {
      {"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}, {"ephemeral-storage", "100Gi"}};
  return kDefaults;
}

// A node with everything decided: the list the runtime registers.
struct SimNode {
  std::string name;
  std::map<std::string, std::string> labels;  // as configured (no well-known ones)
  std::vector<TaintDef> taints;
  std::map<std::string, std::string> capacity;  // canonical quantities, defaults filled
  Cidr pod_cidr;
  Ipv4 internal_ip = 0;
  // Its InternalIP was configured (or stored), not handed out.
  bool internal_ip_given = false;
  // The node network its InternalIP is on (runtime.nodeIPRange): the
  // prefix its address has on a pod network.
  Cidr node_network;
  std::vector<std::string> images;
  RuntimeType type = RuntimeType::kSimulated;
};

// Expands the template after the explicit nodes, fills capacity defaults,
// assigns podCIDRs (blocks of node_cidr_mask_size from cluster_cidr, in node
// order, skipping explicitly claimed ones) and InternalIPs (nodeIPRange .2,
// .3, ...). Invalid, naming the `runtime.` path, on bad or duplicate values.
Result<std::vector<SimNode>> ResolveNodes(const RuntimeConfig& config);

// Reads "name=soft:hard" (or "name=both") as CRI-O's default_ulimits and
// Docker's --ulimit write it: name one of core, cpu, data, fsize, locks,
// memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending,
// stack; -1 or "unlimited" for no limit; soft at most hard.
Result<ResourceLimit> ParseUlimit(const std::string& text);

// Reads the `runtime:` section. Unknown keys are errors (typos should not
// pass silently). Errors name the path: "runtime.nodes[1].capacity.cpu: ...".
// Also runs ResolveNodes so that a config that parses also resolves.
Result<RuntimeConfig> ParseRuntimeConfig(const YAML::Node& runtime);

}  // namespace podflow::runtime
