// The `proxy:` section of the cluster config: what kube-proxy and the
// cluster DNS are told.
#pragma once

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace podflow::proxy {

struct ProxyConfig {
  std::string cluster_domain = "cluster.local";  // kubelet's and CoreDNS's cluster domain
  std::string dns_host = "127.0.0.1";           // where the cluster DNS answers ...
  uint16_t dns_port = 10053;                    // ... (port 0: one the system picks)
  bool dns = true;                              // dnsListen: "" turns it off
  uint32_t dns_ttl = 30;                        // CoreDNS's `ttl`
};

// Reads `section` (absent: the defaults). Keys: clusterDomain
// (cluster.local), dnsListen (HOST:PORT, 127.0.0.1:10053; "" for none),
// dnsTTL (30, 0..3600). Invalid, naming the key, on an unknown key or a
// value that is not one.
Result<ProxyConfig> ParseProxyConfig(const YAML::Node& section);

}  // namespace podflow::proxy
