#include "stages/proxy/rules/host_ports.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include "stages/proxy/rules/from_objects.h"

namespace podflow::proxy::rules {
namespace {

constexpr char kMark[] = "0x2000/0x2000";  // the portmap plugin's masquerade bit

void AddPorts(const flatbuffers::Vector<flatbuffers::Offset<api::ContainerPort>>* ports, PodHostPorts& out) {
  if (ports == nullptr) return;
  for (const api::ContainerPort* p : *ports) {
    if (p == nullptr || p->host_port() <= 0) continue;
    out.ports.push_back(
        {ProtocolName(p->protocol()), p->host_port(), p->container_port(), p->host_ip() ? p->host_ip()->str() : ""});
  }
}

}  // namespace

PodHostPorts HostPortsOf(const api::Pod& pod) {
  PodHostPorts out;
  const api::PodSpec* spec = pod.spec();
  const api::PodStatus* status = pod.status();
  if (spec == nullptr || status == nullptr || spec->host_network() || status->pod_ip() == nullptr ||
      status->pod_ip()->size() == 0 || status->phase() == api::PodPhase::Succeeded ||
      status->phase() == api::PodPhase::Failed || pod.metadata() == nullptr || pod.metadata()->uid() == nullptr) {
    return out;
  }
  // The sidecars' (init containers that keep running) count as the containers' do.
  if (spec->init_containers()) {
    for (const api::Container* c : *spec->init_containers()) {
      if (c && c->restart_policy() && c->restart_policy()->str() == "Always") AddPorts(c->ports(), out);
    }
  }
  if (spec->containers()) {
    for (const api::Container* c : *spec->containers()) {
      if (c) AddPorts(c->ports(), out);
    }
  }
  if (out.ports.empty()) return out;
  out.id = pod.metadata()->uid()->str();
  out.pod_ip = status->pod_ip()->str();
  return out;
}

std::string HostPortChain(const std::string& id) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(id.data(), id.size(), digest.data(), &length, EVP_sha512(), nullptr);
  std::string chain = "CNI-DN-";
  char hex[3];
  for (unsigned i = 0; chain.size() < 28 && i < length; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    chain += hex;
  }
  chain.resize(28);  // iptables' longest chain name
  return chain;
}

Fragment RenderHostPorts(const std::vector<PodHostPorts>& pods, const std::string& pod_cidr) {
  Fragment out;
  bool any = false;
  for (const PodHostPorts& pod : pods) any |= !pod.ports.empty();
  if (!any) return out;
  out.nat_chains = ":CNI-HOSTPORT-DNAT - [0:0]\n:CNI-HOSTPORT-SETMARK - [0:0]\n:CNI-HOSTPORT-MASQ - [0:0]\n";
  out.nat_rules =
      "-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n"
      "-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n"
      "-A POSTROUTING -m comment --comment \"CNI portfwd requiring masquerade\" -j CNI-HOSTPORT-MASQ\n"
      "-A CNI-HOSTPORT-SETMARK -m comment --comment \"CNI portfwd masquerade mark\" -j MARK --set-xmark " +
      std::string(kMark) + "\n" + "-A CNI-HOSTPORT-MASQ -m mark --mark " + kMark + " -j MASQUERADE\n";
  for (const PodHostPorts& pod : pods) {
    if (pod.ports.empty()) continue;
    const std::string chain = HostPortChain(pod.id);
    out.nat_chains += ":" + chain + " - [0:0]\n";
    // One jump per protocol and up to 15 of its ports (a multiport
    // match's most), as the plugin splits them.
    std::map<std::string, std::vector<std::string>> dports;
    for (const HostPortMapping& m : pod.ports) {
      std::vector<std::string>& lists = dports[m.protocol];
      if (lists.empty() || std::count(lists.back().begin(), lists.back().end(), ',') == 14) lists.emplace_back();
      lists.back() += (lists.back().empty() ? "" : ",") + std::to_string(m.host_port);
    }
    for (const auto& [protocol, lists] : dports) {
      for (const std::string& list : lists) {
        out.nat_rules += "-A CNI-HOSTPORT-DNAT -p " + protocol + " -m comment --comment \"dnat name: \\\"podflow\\\" id: \\\"" +
                         pod.id + "\\\"\" -m multiport --dports " + list + " -j " + chain + "\n";
      }
    }
    for (const HostPortMapping& m : pod.ports) {
      const std::string match = "-p " + m.protocol + " -m " + m.protocol + " --dport " + std::to_string(m.host_port);
      const std::string to = !m.host_ip.empty() && m.host_ip != "0.0.0.0" ? "-d " + m.host_ip + "/32 " : "";
      if (!pod_cidr.empty()) out.nat_rules += "-A " + chain + " -s " + pod_cidr + " " + to + match + " -j CNI-HOSTPORT-SETMARK\n";
      out.nat_rules += "-A " + chain + " -s 127.0.0.1/32 " + to + match + " -j CNI-HOSTPORT-SETMARK\n";
      out.nat_rules += "-A " + chain + " " + to + match + " -j DNAT --to-destination " + pod.pod_ip + ":" +
                       std::to_string(m.container_port) + "\n";
    }
  }
  return out;
}

}  // namespace podflow::proxy::rules
