// The `proxy:` section of the cluster config: what kube-proxy and the
// cluster DNS are told.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace podflow::proxy {

struct ProxyConfig {
  std::string cluster_domain = "cluster.local";  // kubelet's and CoreDNS's cluster domain
  std::string dns_host = "127.0.0.1";           // where the cluster DNS answers ...
  uint16_t dns_port = 10053;                    // ... (port 0: one the system picks)
  bool dns = true;                              // dnsListen: "" turns it off
  uint32_t dns_ttl = 30;                        // CoreDNS's `ttl`
  // On the pod network (the process runtime's): where the DNS answers in
  // every node's namespace, port 53 (kubelet's clusterDNS; "" for none) ...
  std::string cluster_dns = "10.96.0.10";
  // ... and kube-proxy's --cluster-cidr (LoadProxyConfig: the runtime's clusterCIDR).
  std::string cluster_cidr;
  // Where names outside the cluster's zones go (CoreDNS's `forward .`): IP,
  // IP:PORT or a resolv.conf file; empty: nowhere (REFUSED). The default
  // is this machine's resolvers, and a machine without that file simply
  // has no forwarding.
  std::vector<std::string> dns_forward = {"/etc/resolv.conf"};
  bool dns_forward_default = true;

  // Where this DNS answers, as "IP:PORT" (with 127.0.0.1 for 0.0.0.0):
  // never an upstream, or its queries would come back to it.
  std::vector<std::string> OwnDnsAddresses() const;
};

// Reads `section` (absent: the defaults). Keys: clusterDomain
// (cluster.local), dnsListen (HOST:PORT, 127.0.0.1:10053; "" for none),
// dnsTTL (30, 0..3600), clusterDNS (10.96.0.10; "" for none), clusterCIDR
// (the runtime's), dnsForward ([/etc/resolv.conf]; each IP, IP:PORT or an
// absolute path, never dnsListen itself). Invalid, naming the key, on an
// unknown key or a value that is not one.
Result<ProxyConfig> ParseProxyConfig(const YAML::Node& section);

// The `proxy:` section as the stage reads it: what it leaves out of
// clusterDomain, clusterDNS (the first of the list) and clusterCIDR is the
// `runtime:` section's (kubelet's settings, the pods' addresses), so that
// kube-proxy, the DNS and kubelet agree; clusterCIDR 10.244.0.0/16 when
// neither says.
Result<ProxyConfig> LoadProxyConfig(const YAML::Node& proxy, const YAML::Node& runtime);

}  // namespace podflow::proxy
