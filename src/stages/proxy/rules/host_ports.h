// The CNI portmap plugin's rules for the pods' hostPorts on a node, in the
// nat table beside kube-proxy's: PREROUTING and OUTPUT send what is for
// one of the node's own addresses to CNI-HOSTPORT-DNAT, which sends each
// pod's ports to its CNI-DN-… chain; that chain marks what comes from the
// node's pods or from localhost for masquerade (CNI-HOSTPORT-SETMARK,
// 0x2000, so that the reply comes back through the node) and DNATs to the
// pod's IP and containerPort; POSTROUTING masquerades what is marked
// (CNI-HOSTPORT-MASQ). A hostIP other than 0.0.0.0 narrows a port to that
// destination.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api_generated.h"
#include "stages/proxy/rules/iptables.h"

namespace podflow::proxy::rules {

struct HostPortMapping {
  std::string protocol = "tcp";  // lowercase
  int32_t host_port = 0;
  int32_t container_port = 0;
  std::string host_ip;  // "" or 0.0.0.0: every address of the node

  bool operator==(const HostPortMapping&) const = default;
};

// One pod's sandbox and its mappings.
struct PodHostPorts {
  std::string id;  // the pod's uid: names its chain
  std::string pod_ip;
  std::vector<HostPortMapping> ports;

  bool operator==(const PodHostPorts&) const = default;
};

// The mappings of `pod` (its containers' and its sidecars' ports with a
// hostPort) when it has a pod network of its own on a node: its IP
// assigned, not hostNetwork, not finished. Empty otherwise.
PodHostPorts HostPortsOf(const api::Pod& pod);

// The chain of one pod's mappings: "CNI-DN-" and 21 characters of a hash of its id.
std::string HostPortChain(const std::string& id);

// The nat rules for `pods` on a node whose podCIDR is `pod_cidr` (""
// leaves the pods' hairpin rule out), in pod order. Nothing without pods.
Fragment RenderHostPorts(const std::vector<PodHostPorts>& pods, const std::string& pod_cidr);

}  // namespace podflow::proxy::rules
