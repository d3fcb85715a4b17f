#include "stages/proxy/rules/iptables.h"

#include <algorithm>
#include <cstdio>

#include "stages/proxy/rules/chain_names.h"

namespace podflow::proxy::rules {
namespace {

// kube-proxy's masquerade mark, as it writes it (Go's %#08x of 1<<14).
constexpr char kMark[] = "0x00004000";
constexpr char kNodePortsJump[] =
    "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this "
    "chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n";

// The jumps kube-proxy inserts into the built-in chains.
constexpr char kFilterJumps[] =
    "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j "
    "KUBE-PROXY-FIREWALL\n"
    "-A INPUT -m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS\n"
    "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j "
    "KUBE-EXTERNAL-SERVICES\n"
    "-A INPUT -j KUBE-FIREWALL\n"
    "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j "
    "KUBE-PROXY-FIREWALL\n"
    "-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD\n"
    "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
    "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j "
    "KUBE-EXTERNAL-SERVICES\n"
    "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j "
    "KUBE-PROXY-FIREWALL\n"
    "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
    "-A OUTPUT -j KUBE-FIREWALL\n";
constexpr char kNatJumps[] =
    "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
    "-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
    "-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n";

// A comment as kube-proxy writes it: quoted only when it holds a space.
std::string Comment(const std::string& text) {
  return "-m comment --comment " + (text.find(' ') == std::string::npos ? text : "\"" + text + "\"");
}

std::string IpPort(const Endpoint& e) { return e.ip + ":" + std::to_string(e.port); }

std::string Probability(size_t remaining) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%0.10f", 1.0 / static_cast<double>(remaining));
  return buffer;
}

// The endpoints a policy uses, as kube-proxy categorizes them: the ready
// ones, else (none ready) those serving while terminating.
std::vector<const Endpoint*> Usable(const std::vector<const Endpoint*>& candidates) {
  std::vector<const Endpoint*> ready, terminating;
  for (const Endpoint* e : candidates) {
    if (e->ready) {
      ready.push_back(e);
    } else if (e->serving && e->terminating) {
      terminating.push_back(e);
    }
  }
  return ready.empty() ? terminating : ready;
}

class PortRenderer {
 public:
  PortRenderer(const ServicePort& port, const NodeSettings& node) : port_(port), node_(node) {
    name_ = port.Name();
    const std::string hash = PortProtoHash(name_, port.protocol);
    svc_ = "KUBE-SVC-" + hash;
    svl_ = "KUBE-SVL-" + hash;
    ext_ = "KUBE-EXT-" + hash;
    match_ = "-m " + port.protocol + " -p " + port.protocol;
  }

  Fragment Render() {
    if (port_.cluster_ip.empty() || port_.cluster_ip == "None") return {};
    std::vector<const Endpoint*> all, local;
    for (const Endpoint& e : port_.endpoints) all.push_back(&e);
    std::sort(all.begin(), all.end(), [](const Endpoint* a, const Endpoint* b) { return IpPort(*a) < IpPort(*b); });
    for (const Endpoint* e : all) {
      if (!node_.node.empty() && e->node == node_.node) local.push_back(e);
    }
    const std::vector<const Endpoint*> cluster_eps = Usable(all), local_eps = Usable(local);
    const bool external = port_.ExternallyAccessible();
    const bool uses_cluster = !port_.internal_local || external;
    const bool uses_local = port_.internal_local || (external && port_.external_local);
    const bool has_endpoints = !cluster_eps.empty();  // any usable endpoint, anywhere
    const bool has_internal = port_.internal_local ? !local_eps.empty() : !cluster_eps.empty();
    const bool has_external = port_.external_local ? !local_eps.empty() : !cluster_eps.empty();
    const std::string& internal_chain = port_.internal_local ? svl_ : svc_;
    const std::string dport = " --dport " + std::to_string(port_.port);
    const std::string no_endpoints = Comment(name_ + " has no endpoints");
    const std::string no_local = Comment(name_ + " has no local endpoints");

    // Chains: external, cluster, local, then one per endpoint used.
    std::vector<const Endpoint*> used;
    if (has_endpoints && uses_cluster) used = cluster_eps;
    if (has_endpoints && uses_local) {
      for (const Endpoint* e : local_eps) {
        if (std::find(used.begin(), used.end(), e) == used.end()) used.push_back(e);
      }
    }
    if (has_endpoints) {
      if (external) Chain(ext_);
      if (uses_cluster) Chain(svc_);
      if (uses_local && !local_eps.empty()) Chain(svl_);
      for (const Endpoint* e : used) Chain(EndpointChain(name_, port_.protocol, IpPort(*e)));
    }

    // The cluster IP.
    if (has_internal) {
      Nat("-A KUBE-SERVICES " + Comment(name_ + " cluster IP") + " " + match_ + " -d " + port_.cluster_ip + dport +
          " -j " + internal_chain);
    } else {
      Filter("-A KUBE-SERVICES " + (has_endpoints ? no_local : no_endpoints) + " " + match_ + " -d " +
             port_.cluster_ip + dport + " -j " + (has_endpoints ? "DROP" : "REJECT"));
    }
    // External IPs and the node port.
    for (const std::string& ip : port_.external_ips) {
      if (has_endpoints) {
        Nat("-A KUBE-SERVICES " + Comment(name_ + " external IP") + " " + match_ + " -d " + ip + dport + " -j " + ext_);
      }
      if (!has_external) {
        Filter("-A KUBE-EXTERNAL-SERVICES " + (has_endpoints ? no_local : no_endpoints) + " " + match_ + " -d " + ip +
               dport + " -j " + (has_endpoints ? "DROP" : "REJECT"));
      }
    }
    if (port_.node_port != 0) {
      const std::string node_dport = " --dport " + std::to_string(port_.node_port);
      if (has_endpoints) Nat("-A KUBE-NODEPORTS " + Comment(name_) + " " + match_ + node_dport + " -j " + ext_);
      if (!has_external) {
        Filter("-A KUBE-EXTERNAL-SERVICES " + (has_endpoints ? no_local : no_endpoints) +
               " -m addrtype --dst-type LOCAL " + match_ + node_dport + " -j " + (has_endpoints ? "DROP" : "REJECT"));
      }
    }
    if (port_.health_check_node_port != 0) {
      Filter("-A KUBE-NODEPORTS " + Comment(name_ + " health check node port") + " -m tcp -p tcp --dport " +
             std::to_string(port_.health_check_node_port) + " -j ACCEPT");
    }
    if (!has_endpoints) return std::move(out_);

    // Traffic to the cluster IP from outside the cluster is masqueraded.
    if (has_internal && (node_.masquerade_all || !node_.cluster_cidr.empty())) {
      Nat("-A " + internal_chain + " " + Comment(name_ + " cluster IP") + " " + match_ + " -d " + port_.cluster_ip +
          dport + (node_.masquerade_all ? "" : " ! -s " + node_.cluster_cidr) + " -j KUBE-MARK-MASQ");
    }
    if (external) {
      if (port_.external_local) {
        if (!node_.cluster_cidr.empty()) {
          Nat("-A " + ext_ + " " + Comment("pod traffic for " + name_ + " external destinations") + " -s " +
              node_.cluster_cidr + " -j " + svc_);
        }
        Nat("-A " + ext_ + " " + Comment("masquerade LOCAL traffic for " + name_ + " external destinations") +
            " -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ");
        Nat("-A " + ext_ + " " + Comment("route LOCAL traffic for " + name_ + " external destinations") +
            " -m addrtype --src-type LOCAL -j " + svc_);
        if (!local_eps.empty()) Nat("-A " + ext_ + " -j " + svl_);
      } else {
        Nat("-A " + ext_ + " " + Comment("masquerade traffic for " + name_ + " external destinations") +
            " -j KUBE-MARK-MASQ");
        Nat("-A " + ext_ + " -j " + svc_);
      }
    }
    if (uses_cluster) Spread(svc_, cluster_eps);
    if (uses_local && !local_eps.empty()) Spread(svl_, local_eps);
    for (const Endpoint* e : used) {
      const std::string chain = EndpointChain(name_, port_.protocol, IpPort(*e));
      Nat("-A " + chain + " " + Comment(name_) + " -s " + e->ip + " -j KUBE-MARK-MASQ");
      const std::string affinity = port_.affinity_seconds ? " -m recent --name " + chain + " --set" : "";
      Nat("-A " + chain + " " + Comment(name_) + affinity + " " + match_ + " -j DNAT --to-destination " + IpPort(*e));
    }
    return std::move(out_);
  }

 private:
  // The rules of a KUBE-SVC or KUBE-SVL chain: affinity first, then an even
  // random spread, the last endpoint taking what is left.
  void Spread(const std::string& chain, const std::vector<const Endpoint*>& endpoints) {
    if (port_.affinity_seconds) {
      for (const Endpoint* e : endpoints) {
        const std::string sep = EndpointChain(name_, port_.protocol, IpPort(*e));
        Nat("-A " + chain + " " + Comment(name_ + " -> " + IpPort(*e)) + " -m recent --name " + sep +
            " --rcheck --seconds " + std::to_string(*port_.affinity_seconds) + " --reap -j " + sep);
      }
    }
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const Endpoint& e = *endpoints[i];
      const size_t remaining = endpoints.size() - i;
      Nat("-A " + chain + " " + Comment(name_ + " -> " + IpPort(e)) +
          (remaining > 1 ? " -m statistic --mode random --probability " + Probability(remaining) : "") + " -j " +
          EndpointChain(name_, port_.protocol, IpPort(e)));
    }
  }
  void Chain(const std::string& name) { out_.nat_chains += ":" + name + " - [0:0]\n"; }
  void Nat(const std::string& rule) { out_.nat_rules += rule + "\n"; }
  void Filter(const std::string& rule) { out_.filter_rules += rule + "\n"; }

  const ServicePort& port_;
  const NodeSettings& node_;
  std::string name_, svc_, svl_, ext_, match_;
  Fragment out_;
};

}  // namespace

std::string ServicePort::Name() const { return ServicePortName(namespace_, service, port_name); }

bool NodeDependent(const ServicePort& port) {
  return port.internal_local || (port.ExternallyAccessible() && port.external_local);
}

Fragment RenderServicePort(const ServicePort& port, const NodeSettings& node) { return PortRenderer(port, node).Render(); }

void Ruleset::Set(ServicePort port) {
  std::string key = port.Name() + " " + port.protocol;
  Entry entry{std::move(port), std::nullopt};
  if (!NodeDependent(entry.port)) entry.fragment = RenderServicePort(entry.port, settings_);
  ports_.insert_or_assign(std::move(key), std::move(entry));
}

void Ruleset::RemoveService(const std::string& namespace_, const std::string& service) {
  // Keys of one service share the "ns/name" prefix, then ":" or " ".
  const std::string prefix = namespace_ + "/" + service;
  for (auto it = ports_.lower_bound(prefix); it != ports_.end() && it->first.rfind(prefix, 0) == 0;) {
    const char next = it->first[prefix.size()];
    it = next == ':' || next == ' ' ? ports_.erase(it) : std::next(it);
  }
}

std::string Ruleset::Render(const std::string& node) const { return RenderDocument(node, false, nullptr); }

std::string Ruleset::RenderOwned(const std::string& node, const Fragment* beside) const {
  return RenderDocument(node, true, beside);
}

std::string Ruleset::RenderDocument(const std::string& node, bool owned, const Fragment* beside) const {
  NodeSettings here = settings_;
  here.node = node;
  std::vector<Fragment> rendered;  // the node-dependent ones
  std::vector<const Fragment*> fragments;
  fragments.reserve(ports_.size());
  rendered.reserve(ports_.size());
  for (const auto& [key, entry] : ports_) {
    if (entry.fragment) {
      fragments.push_back(&*entry.fragment);
    } else {
      rendered.push_back(RenderServicePort(entry.port, here));
      fragments.push_back(&rendered.back());
    }
  }
  size_t bytes = 1024;
  for (const Fragment* f : fragments) bytes += f->filter_rules.size() + f->nat_chains.size() + f->nat_rules.size();
  std::string out;
  out.reserve(bytes);
  out += "*filter\n";
  if (owned) out += ":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n";
  out +=
      ":KUBE-SERVICES - [0:0]\n"
      ":KUBE-EXTERNAL-SERVICES - [0:0]\n"
      ":KUBE-FORWARD - [0:0]\n"
      ":KUBE-NODEPORTS - [0:0]\n"
      ":KUBE-PROXY-FIREWALL - [0:0]\n"
      ":KUBE-FIREWALL - [0:0]\n"
      "-A KUBE-FIREWALL -m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s "
      "127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n";
  for (const Fragment* f : fragments) out += f->filter_rules;
  out += "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n";
  out += std::string("-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding rules\" -m mark --mark ") + kMark +
         "/" + kMark + " -j ACCEPT\n";
  out +=
      "-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate "
      "RELATED,ESTABLISHED -j ACCEPT\n";
  if (owned) out += kFilterJumps;
  if (beside != nullptr) out += beside->filter_rules;
  out += "COMMIT\n*nat\n";
  if (owned) out += ":PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n";
  out +=
      ":KUBE-SERVICES - [0:0]\n"
      ":KUBE-NODEPORTS - [0:0]\n"
      ":KUBE-POSTROUTING - [0:0]\n"
      ":KUBE-MARK-MASQ - [0:0]\n";
  for (const Fragment* f : fragments) out += f->nat_chains;
  if (beside != nullptr) out += beside->nat_chains;
  out += std::string("-A KUBE-POSTROUTING -m mark ! --mark ") + kMark + "/" + kMark + " -j RETURN\n";
  out += std::string("-A KUBE-POSTROUTING -j MARK --xor-mark ") + kMark + "\n";
  out +=
      "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE "
      "--random-fully\n";
  out += std::string("-A KUBE-MARK-MASQ -j MARK --or-mark ") + kMark + "\n";
  for (const Fragment* f : fragments) out += f->nat_rules;
  out += kNodePortsJump;
  if (owned) out += kNatJumps;
  if (beside != nullptr) out += beside->nat_rules;
  out += "COMMIT\n";
  return out;
}

}  // namespace podflow::proxy::rules
