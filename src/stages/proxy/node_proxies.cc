#include "stages/proxy/node_proxies.h"

#include <unistd.h>

#include "base/logging.h"
#include "netns/command.h"
#include "netns/pod_network.h"

namespace podflow::proxy {
namespace {

constexpr auto kScanPeriod = std::chrono::seconds(1);
constexpr auto kMinSyncPeriod = std::chrono::seconds(1);  // kube-proxy's --iptables-min-sync-period
constexpr uint16_t kDnsPort = 53;

}  // namespace

NodeProxies::NodeProxies(std::string prefix, std::string dns_address, dns::Lookup lookup, dns::Forwarder* forwarder)
    : prefix_(std::move(prefix)), dns_address_(std::move(dns_address)), lookup_(std::move(lookup)), forwarder_(forwarder) {}

NodeProxies::~NodeProxies() = default;

NodeProxies::Node::~Node() {
  dns.reset();
  if (fd >= 0) ::close(fd);
}

Status NodeProxies::StartDns(Node& served) {
  // The cluster DNS address is the node's own, on its loopback: a pod's
  // query goes to its gateway and is delivered here.
  PODFLOW_RETURN_IF_ERROR(
      netns::RunChecked({"ip", "-n", served.ns, "addr", "replace", dns_address_ + "/32", "dev", "lo"}));
  // Its sockets are made in the node's namespace and stay there.
  netns::ThreadInNamespace in(served.ns);
  PODFLOW_RETURN_IF_ERROR(in.status());
  Result<std::unique_ptr<dns::DnsServer>> server = dns::DnsServer::Start(dns_address_, kDnsPort, lookup_, forwarder_);
  if (!server.ok()) return server.status();
  served.dns = std::move(*server);
  return Status::Ok();
}

void NodeProxies::Round(const std::function<std::set<std::string>()>& known,
                        const std::function<std::string(const std::string& node)>& render) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_scan_) {
    next_scan_ = now + kScanPeriod;
    const std::set<std::string> nodes = known();
    // A node gone, or its namespace removed or made again (its runtime
    // restarted): its DNS goes with the old namespace.
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      const bool gone = !nodes.contains(it->first) || !netns::NamedNamespaceIs(it->second.ns, it->second.fd);
      it = gone ? nodes_.erase(it) : std::next(it);
    }
    for (const std::string& node : nodes) {
      auto served = nodes_.find(node);
      if (served == nodes_.end()) {
        const std::string ns = netns::NodeNamespaceName(prefix_, node);
        Result<int> fd = netns::OpenNamespace(ns);
        if (!fd.ok()) continue;  // not on the pod network (a simulated node), or not yet
        if (!note_.empty()) Logger("stage.proxy")->info("{}", std::exchange(note_, ""));
        served = nodes_.try_emplace(node).first;
        served->second.ns = ns;
        served->second.fd = *fd;
      }
      Node& here = served->second;
      if (dns_address_.empty() || here.dns) continue;
      // Tried again at each look; said once per reason.
      if (Status started = StartDns(here); started.ok()) {
        Logger("stage.proxy")->info("node {}: cluster DNS answers on {}:{} in {}", node, dns_address_, kDnsPort, here.ns);
      } else if (started.message() != here.dns_error) {
        here.dns_error = started.message();
        Logger("stage.proxy")->warn("node {}: no cluster DNS on its network yet: {}", node, here.dns_error);
      }
    }
  }
  if (changed_) {
    for (auto& [name, node] : nodes_) node.dirty = true;
    changed_ = false;
  }
  if (now < next_restore_) return;
  bool restored = false;
  for (auto& [name, node] : nodes_) {
    if (!node.dirty) continue;
    restored = true;
    Status applied = netns::RunChecked({"ip", "netns", "exec", node.ns, "iptables-restore"}, render(name));
    if (applied.ok()) {
      node.dirty = false;
    } else {
      Logger("stage.proxy")->warn("node {}: restoring its rules: {}; trying again", name, applied.ToString());
    }
  }
  if (restored) next_restore_ = now + kMinSyncPeriod;
}

}  // namespace podflow::proxy
