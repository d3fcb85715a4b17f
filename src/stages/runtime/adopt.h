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
// stored object as the manifest gave it (metadata, spec, and every status
// field it set: capacity, allocatable, conditions, addresses, images,
// nodeInfo), plus what the simulated kubelet owns or the manifest left out:
// spec.podCIDR when absent, the conditions' heartbeat, an InternalIP address,
// and its own values for the status fields left empty (allocatable =
// capacity).
api::NodeT AdoptedNode(const api::Node& stored, const SimNode& node, const ImageCatalog& catalog, SimTime now);

// The images `node`'s status lists that `catalog` knows, one name each: the
// adopted node has them already, as a pod using them finds (no pull).
std::vector<std::string> CachedImages(const api::Node& node, const ImageCatalog& catalog);

}  // namespace podflow::runtime
