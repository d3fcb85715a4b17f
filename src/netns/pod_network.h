// The pod network on this machine, as a CNI bridge plugin and host-gateway
// routing make it, in network namespaces of its own (this machine's own
// namespace is never changed):
//
//   <prefix>-fabric     a bridge `br0` joining the nodes (the node network)
//   <prefix>-node-<N>   one per node: `eth0` on the fabric with the node's
//                       address; a bridge `cbr0` holding the first address
//                       of the node's podCIDR (the pods' gateway); routes
//                       to the other nodes' podCIDRs through their
//                       addresses; forwarding on; where the kernel has
//                       it, bridged traffic through iptables (as
//                       kube-proxy requires); the node's kube-proxy rules
//   <prefix>-pod-<id>   one per pod: `eth0` (a veth whose peer is on its
//                       node's `cbr0`, hairpin on) with the pod's address,
//                       the default route through the gateway
//
// Every namespace is named `<prefix>-…` (`ip netns list` shows them);
// Create removes the ones an earlier run left, the destructor the ones
// this run made (and with them every veth and bridge inside). Needs root
// and iproute2 (`ip`); iptables for the rules. One thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/result.h"

namespace podflow::netns {

// Why a pod network cannot be made here (not root, no `ip`, no network
// namespaces), or nothing.
std::optional<std::string> Unavailable();

// The prefix of the pod network of the pipeline whose data directory is
// `data_dir` ("podflow-" and a short hash of its absolute path): the
// runtime makes the network under it, kube-proxy's rules and the cluster
// DNS find the nodes' namespaces by it; two pipelines on one machine keep
// apart.
std::string PrefixFor(const std::string& data_dir);

// The names a pod network with `prefix` gives its namespaces (what
// PodNetwork's NodeNamespace and PodNamespace return): for whoever works in
// them without owning the network (kube-proxy's rules, the cluster DNS).
std::string NodeNamespaceName(const std::string& prefix, const std::string& node);
std::string PodNamespaceName(const std::string& prefix, const std::string& pod);
// Whether the named namespace exists (under /run/netns).
bool NamespaceExists(const std::string& name);
// Whether the name still holds the namespace `fd` (OpenNamespace's) is
// open on: false once it was removed, or removed and made again (holding
// the descriptor keeps its identity from being reused).
bool NamedNamespaceIs(const std::string& name, int fd);

// Opens the named namespace (O_CLOEXEC), for setns(fd, CLONE_NEWNET).
Result<int> OpenNamespace(const std::string& name);

// The calling thread in the named network namespace while this lives
// (sockets it makes stay in that namespace), then back in its own. Other
// threads are not moved.
class ThreadInNamespace {
 public:
  explicit ThreadInNamespace(const std::string& name);
  ~ThreadInNamespace();
  ThreadInNamespace(const ThreadInNamespace&) = delete;
  ThreadInNamespace& operator=(const ThreadInNamespace&) = delete;
  // Why it could not enter (the thread stayed where it was).
  const Status& status() const { return status_; }

 private:
  int own_ = -1;
  Status status_;
};

struct NodeAddresses {
  std::string address;   // on the node network, with its prefix: "172.30.0.2/16"
  std::string pod_cidr;  // "10.244.1.0/24"
  std::string gateway;   // the pods' gateway on cbr0, with the podCIDR's prefix: "10.244.1.1/24"
};

class PodNetwork {
 public:
  // Removes what an earlier run with `prefix` left, then makes the fabric.
  static Result<std::unique_ptr<PodNetwork>> Create(std::string prefix = "podflow");
  ~PodNetwork();
  PodNetwork(const PodNetwork&) = delete;
  PodNetwork& operator=(const PodNetwork&) = delete;

  // The namespaces removed: every `<prefix>-…` one. What Create does first,
  // for a caller that only cleans up.
  static Status RemoveAll(const std::string& prefix);

  Status AddNode(const std::string& node, const NodeAddresses& addresses);
  Status RemoveNode(const std::string& node);  // with its pods
  // `address` with the podCIDR's prefix: "10.244.1.5/24". `pod` is any
  // stable id (the pod's uid).
  Status AddPod(const std::string& node, const std::string& pod, const std::string& address);
  Status RemovePod(const std::string& pod);

  // Installs a whole `iptables-restore` document in the node's namespace.
  Status ApplyRules(const std::string& node, const std::string& document);

  // The namespace's name (for `ip netns exec`, or /run/netns/<name>).
  std::string NodeNamespace(const std::string& node) const;
  std::string PodNamespace(const std::string& pod) const;
  const std::string& FabricNamespace() const { return fabric_; }

 private:
  explicit PodNetwork(std::string prefix);

  struct Node {
    NodeAddresses addresses;
    std::set<std::string> pods;
  };
  const std::string prefix_;
  const std::string fabric_;
  std::map<std::string, Node> nodes_;
  std::map<std::string, std::string> pod_nodes_;  // pod -> its node
};

}  // namespace podflow::netns
