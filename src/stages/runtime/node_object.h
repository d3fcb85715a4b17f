// The Node object a simulated kubelet registers: labels (configured plus the
// well-known kubernetes.io/hostname, os, arch), taints, capacity (=
// allocatable), podCIDR, the Ready / pressure conditions, addresses,
// nodeInfo and the images it has pre-pulled.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "node_generated.h"
#include "model/image_catalog.h"
#include "stages/runtime/config.h"

namespace podflow::runtime {

inline constexpr char kKubeletVersion[] = "v1.32.0-podflow";
inline constexpr char kContainerRuntimeVersion[] = "podflow-sim://1";
inline constexpr char kProcessRuntimeVersion[] = "podflow-process://1";  // a process node's
inline constexpr int kKubeletPort = 10250;

// The node as registered at `now` (creationTimestamp, condition times).
// metadata.uid is a deterministic UUID-shaped id derived from the name.
// REQUIRES: node.images resolve in `catalog` (ResolveNodes checks it).
api::NodeT BuildNode(const SimNode& node, const ImageCatalog& catalog, SimTime now);

// BuildNode packed into the bytes the log stores (model::Pack).
std::string BuildNodeBytes(const SimNode& node, const ImageCatalog& catalog, SimTime now);

// The stored Node with the conditions a healthy kubelet posts (Ready and the
// pressures; a status it had keeps its lastTransitionTime), when its Ready
// condition is not True: the node lifecycle controller marked it Unknown
// while this agent was away, or it was registered so. nullopt when it is
// Ready already (the lease is the heartbeat then; nothing to write).
std::optional<api::NodeT> RepostedNodeStatus(const api::Node& stored, SimTime now);

// "3f2a...-....": a UUID-shaped deterministic id.
std::string DeterministicUid(std::string_view seed);

}  // namespace podflow::runtime
