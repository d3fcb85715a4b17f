// kube-proxy and the cluster DNS on the nodes of the pod network (the
// namespaces the process runtime makes, netns/pod_network.h): a node's
// ruleset restored whole in its namespace (`iptables-restore`) when it
// changed, at most once a second (kube-proxy's minSyncPeriod); and the
// cluster DNS answering on the cluster DNS address (10.96.0.10, added to
// the namespace's loopback) port 53, where the pods' resolv.conf sends
// them. A node is found by its namespace: one without (a simulated node)
// gets neither. The loop's thread only; the DNS servers have threads of
// their own.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "stages/proxy/dns/dns_server.h"

namespace podflow::proxy {

class NodeProxies {
 public:
  // `prefix`: the pod network's (netns::PrefixFor). `dns_address`: where the
  // DNS answers in each node's namespace ("" for no DNS there). `forwarder`
  // (may be null; outlives this): where the DNS sends other names; started
  // outside the node namespaces, it reaches this machine's resolvers.
  NodeProxies(std::string prefix, std::string dns_address, dns::Lookup lookup, dns::Forwarder* forwarder);
  ~NodeProxies();
  NodeProxies(const NodeProxies&) = delete;
  NodeProxies& operator=(const NodeProxies&) = delete;

  // The rules changed (a Service's, its endpoints', a pod's hostPorts):
  // every node's are restored again.
  void RulesChanged() { changed_ = true; }

  // One round: once a second, the namespaces of the nodes `nodes()` names
  // looked for (a new one gets its DNS and its rules; a gone one is
  // forgotten); then, when the rules changed and a second has passed since
  // the last restore, each node's ruleset restored. A failed restore is
  // tried again a second later.
  // `render` gives a node's whole document.
  void Round(const std::function<std::set<std::string>()>& nodes,
             const std::function<std::string(const std::string& node)>& render);

  // Logged when the first node is found (what applies to the pod network only).
  void NoteOnce(std::string note) { note_ = std::move(note); }

 private:
  struct Node {
    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node();
    std::string ns;
    int fd = -1;  // the namespace found: one removed and made again under its name is another
    std::unique_ptr<dns::DnsServer> dns;  // none: not yet (tried again at the next look)
    std::string dns_error;                // why not, as last said
    bool dirty = true;                    // its rules are to be restored
  };
  // Starts the node's DNS inside its namespace.
  Status StartDns(Node& served);

  const std::string prefix_;
  const std::string dns_address_;
  const dns::Lookup lookup_;
  dns::Forwarder* const forwarder_;
  std::map<std::string, Node> nodes_;
  std::string note_;
  bool changed_ = true;
  std::chrono::steady_clock::time_point next_scan_{}, next_restore_{};
};

}  // namespace podflow::proxy
