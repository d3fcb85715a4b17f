// The two files kubelet gives every container of a pod, as it writes them:
//  - /etc/hosts: "# Kubernetes-managed hosts file." with the localhost
//    boilerplate and a line per pod IP naming the pod's hostname (and
//    hostname.subdomain.namespace.svc.<clusterDomain> under a subdomain);
//    on the host network, the node's own /etc/hosts under "(host
//    network)"; either way the pod's hostAliases after "# Entries added by
//    HostAliases.";
//  - /etc/resolv.conf by its dnsPolicy: ClusterFirst (on the host network,
//    Default unless ClusterFirstWithHostNet) names the cluster DNS with the
//    namespace's, svc and cluster search domains before the node's and
//    ndots:5; Default is the node's resolv.conf; None only its dnsConfig,
//    which the others have appended (duplicates dropped, an option of the
//    same name replaced); at most 3 nameservers and 32 search domains
//    (2048 characters), the rest left out with kubelet's warning. Written
//    search, nameserver and options lines, as the container runtime does.
// Plain values in and out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"

namespace podflow::runtime {

// kubelet's clusterDNS and clusterDomain, and the node's resolv.conf.
struct DnsSettings {
  std::vector<std::string> cluster_dns = {"10.96.0.10"};
  std::string cluster_domain = "cluster.local";
  std::string node_resolv_conf;  // its text
};

// The pod's hostname as kubelet sets it: spec.hostname, else its name, at
// most 63 characters with no '-' or '.' left at the end.
std::string PodHostname(const api::PodT& pod);

// `on_host_network`: the pod shares the node's network (hostNetwork, or a
// node that gives pods no network of their own); `node_hosts`: the node's
// /etc/hosts text, read then.
std::string HostsFile(const api::PodT& pod, bool on_host_network, const std::vector<std::string>& pod_ips,
                      std::string_view node_hosts, std::string_view cluster_domain);

struct ResolvConf {
  std::string text;
  // kubelet's Warning events about it: (reason, message).
  std::vector<std::pair<std::string, std::string>> warnings;
};
ResolvConf PodResolvConf(const api::PodT& pod, bool on_host_network, const DnsSettings& settings);

}  // namespace podflow::runtime
