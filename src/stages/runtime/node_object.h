// The Node object a simulated kubelet registers: labels (configured plus the
// well-known kubernetes.io/hostname, os, arch), taints, capacity (=
// allocatable), podCIDR, the Ready / pressure conditions, addresses,
// nodeInfo and the images it has pre-pulled.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "node_generated.h"
#include "model/image_catalog.h"
#include "stages/runtime/config.h"
#include "stages/runtime/node_runtime.h"

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

// kubelet's nodeStatusMaxImages: how many images Node.status.images lists.
inline constexpr size_t kNodeStatusMaxImages = 50;

// Node.status.images as kubelet lists a node's image store: largest first
// (ties by name), at most kNodeStatusMaxImages, each image (digest) once,
// named by its digest reference and, when it was pulled by one, its tag
// reference.
std::vector<std::unique_ptr<api::ContainerImageT>> NodeStatusImages(std::vector<CachedImage> images);

// The first InternalIP address the node's status.addresses lists; "" none.
std::string InternalIpOf(const api::Node& node);

// The stored Node as kubelet's periodic status update posts it:
// status.images listing `present` (NodeStatusImages) and its InternalIP
// `internal_ip` (where the node is now: a node the pod network took or
// refused since it was stored); nullopt when the stored node says both
// already.
std::optional<api::NodeT> NodeStatusUpdate(const api::Node& stored, const std::vector<CachedImage>& present,
                                           Ipv4 internal_ip);

// "3f2a...-....": a UUID-shaped deterministic id.
std::string DeterministicUid(std::string_view seed);

}  // namespace podflow::runtime
