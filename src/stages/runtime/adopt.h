// Adopting nodes the runtime was not configured with: a Node created with
// the publisher (as `kubectl create -f node.yaml` does for KWOK) becomes a
// simulated node of this runtime, as kubelet would run on a machine that
// registered it.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "node_generated.h"
#include "stages/runtime/config.h"

namespace podflow::runtime {

// What the stored Node says of itself as a node definition: labels, taints,
// capacity (status.capacity), spec.podCIDR and the InternalIP address when
// set (empty otherwise: assigned like a configured node's).
NodeDef NodeDefFromNode(const api::Node& node);

// The definition a resolved node would be configured with (its podCIDR and
// InternalIP spelled out), so that resolving it again gives the same node.
NodeDef NodeDefFromSim(const SimNode& node);

// Resolves `def` beside the nodes already hosted (`hosted`, as definitions
// with their addresses spelled out): it gets the next free podCIDR block and
// InternalIP when it names none. Invalid, naming the node, when a value is
// bad or clashes with a hosted node.
Result<SimNode> ResolveAdopted(const RuntimeConfig& config, const std::vector<NodeDef>& hosted, const NodeDef& def);

// The Node to write back once adopted, as a KWOK node is taken over: the
// stored object as the manifest gave it (metadata, spec, and the status
// fields it set: capacity, allocatable, addresses, images, nodeInfo,
// daemonEndpoints), plus what the simulated kubelet owns or the manifest
// left out: spec.podCIDR when absent; the heartbeat; its Ready and pressure
// conditions unless the manifest says the node is Ready (other condition
// types stay); an InternalIP address; a capacity for every resource (from
// allocatable, else the defaults) and allocatable = capacity where not
// given; its own addresses, nodeInfo and daemonEndpoints when none are given.
api::NodeT AdoptedNode(const api::Node& stored, const SimNode& node, const ImageCatalog& catalog, SimTime now);

// The names in `node`'s status.images that `catalog` knows, one per distinct
// image they resolve to: the adopted node has them already, and a pod using
// one starts without a pull.
std::vector<std::string> CachedImages(const api::Node& node, const ImageCatalog& catalog);

}  // namespace podflow::runtime
