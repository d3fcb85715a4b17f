// The ruleset kube-proxy's iptables mode installs on a node, rendered as
// the iptables-restore document it feeds `iptables-restore --noflush`:
// *filter then *nat, each table's chain lines, then its rules, then COMMIT.
// Per service port: KUBE-SERVICES captures the cluster IP (and external
// IPs) into KUBE-SVC-… (KUBE-SVL-… under internalTrafficPolicy Local),
// KUBE-NODEPORTS the node port into KUBE-EXT-…, which spreads over one
// KUBE-SEP-… per endpoint with `statistic --mode random --probability`
// (1/n, 1/(n-1), … 10 decimals), each of which DNATs to its endpoint and
// marks hairpin traffic for masquerade (KUBE-MARK-MASQ, 0x4000);
// sessionAffinity ClientIP with `recent`; externalTrafficPolicy Local with
// kube-proxy's short circuits; services without endpoints REJECTed (and
// DROPped without local ones) in the filter table. Chains are named as
// kube-proxy names them (chain_names.h). The built-in chains' jumps are not
// in the document: kube-proxy inserts them apart.
//
// Services come in the order of their service port names (kube-proxy's
// order is a map's: random from sync to sync); endpoints in the order of
// their "ip:port" text, as kube-proxy sorts them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace podflow::proxy::rules {

// One endpoint of a service port, from an EndpointSlice: its conditions as
// kube-proxy reads them (an unset ready or serving counts as true, an unset
// terminating as false).
struct Endpoint {
  std::string ip;
  int32_t port = 0;
  std::string node;  // nodeName; "" when the slice does not say
  bool ready = true;
  bool serving = true;
  bool terminating = false;
};

// One port of a Service, with its endpoints: what kube-proxy renders.
struct ServicePort {
  std::string namespace_, service, port_name;
  std::string protocol = "tcp";  // lowercase: tcp, udp, sctp
  std::string cluster_ip;        // a headless or ExternalName service has no rules
  int32_t port = 0;
  int32_t node_port = 0;  // 0: none
  std::vector<std::string> external_ips;
  std::optional<int32_t> affinity_seconds;  // sessionAffinity ClientIP's timeout
  bool internal_local = false;              // internalTrafficPolicy: Local
  bool external_local = false;              // externalTrafficPolicy: Local
  int32_t health_check_node_port = 0;
  std::vector<Endpoint> endpoints;

  std::string Name() const;  // ServicePortName: "ns/name:port"
  bool ExternallyAccessible() const { return node_port != 0 || !external_ips.empty(); }
};

// The node a ruleset is for, and kube-proxy's settings that shape it.
struct NodeSettings {
  std::string node;          // whose endpoints are local
  std::string cluster_cidr;  // --cluster-cidr: masquerade what comes from outside it ("": no such rule)
  bool masquerade_all = false;
};

// One service port's share of the document on one node.
struct Fragment {
  std::string filter_rules;
  std::string nat_chains;  // ":KUBE-… - [0:0]" lines
  std::string nat_rules;
};

// Renders `port` for `node`. A port that renders nothing (headless,
// ExternalName) gives an empty fragment.
Fragment RenderServicePort(const ServicePort& port, const NodeSettings& node);

// Whether `port`'s rules differ from node to node (it uses node-local
// endpoints: a Local traffic policy).
bool NodeDependent(const ServicePort& port);

// The service ports of a cluster and their rendered fragments, kept so
// that a change re-renders only the service port it touches. Not thread-safe.
class Ruleset {
 public:
  explicit Ruleset(NodeSettings settings) : settings_(std::move(settings)) {}

  // Adds or replaces the service port `port.Name()` + protocol.
  void Set(ServicePort port);
  // Removes every port of the service `namespace_/service`.
  void RemoveService(const std::string& namespace_, const std::string& service);
  // The whole document for `node` (settings' cluster CIDR, this node's
  // local endpoints).
  std::string Render(const std::string& node) const;
  // Render, with the built-in chains' jumps into kube-proxy's chains that
  // kube-proxy inserts beside its document: for a namespace whose tables
  // hold nothing else (a node of the pod network), restored whole. Rules
  // of others for the same tables (the hostPorts', host_ports.h) come
  // after kube-proxy's, as `beside`.
  std::string RenderOwned(const std::string& node, const Fragment* beside = nullptr) const;
  size_t size() const { return ports_.size(); }

 private:
  std::string RenderDocument(const std::string& node, bool owned, const Fragment* beside) const;

  struct Entry {
    ServicePort port;
    std::optional<Fragment> fragment;  // set when the same on every node
  };
  NodeSettings settings_;
  std::map<std::string, Entry> ports_;  // by "ns/name:port" + " " + protocol
};

}  // namespace podflow::proxy::rules
