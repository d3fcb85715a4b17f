#include "stages/proxy/dns/cluster_records.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace podflow::proxy::dns {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t dot = s.find('.');
    out.emplace_back(s.substr(0, dot));
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "a-b-c-d" as the IPv4 address a.b.c.d; "" when it is not one.
std::string DashedIpv4(std::string_view label) {
  std::string out;
  int parts = 0;
  while (true) {
    const size_t dash = label.find('-');
    const std::string_view part = label.substr(0, dash);
    unsigned value = 256;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || part.size() > 3 || ec != std::errc() || end != part.data() + part.size() || value > 255) {
      return "";
    }
    out += (parts++ ? "." : "") + std::to_string(value);
    if (dash == std::string_view::npos) break;
    label.remove_prefix(dash + 1);
  }
  return parts == 4 ? out : "";
}

bool Wants(RrType qtype, RrType type) { return qtype == type || qtype == RrType::ANY; }

}  // namespace

std::string EndpointLabel(const DnsService::Endpoint& endpoint) {
  if (!endpoint.hostname.empty()) return endpoint.hostname;
  std::string label = endpoint.ip;
  std::replace(label.begin(), label.end(), '.', '-');
  std::replace(label.begin(), label.end(), ':', '-');
  return label;
}

ClusterRecords::ClusterRecords(std::string zone, uint32_t ttl) : zone_(Lower(zone)), ttl_(ttl) {}

void ClusterRecords::SetService(DnsService service) {
  std::string key = service.namespace_ + "/" + service.name;
  services_.insert_or_assign(std::move(key), std::move(service));
}

void ClusterRecords::RemoveService(const std::string& namespace_, const std::string& name) {
  services_.erase(namespace_ + "/" + name);
}

void ClusterRecords::SetNamespace(const std::string& name, bool exists) {
  if (exists) {
    namespaces_.insert(name);
  } else {
    namespaces_.erase(name);
  }
}

std::string ClusterRecords::ServiceName(const DnsService& svc) const {
  return svc.name + "." + svc.namespace_ + ".svc." + zone_ + ".";
}

Record ClusterRecords::Soa() const {
  // CoreDNS's: the SOA's own TTL and its minimum are the plugin's ttl.
  return Record{zone_ + ".", RrType::SOA, std::min<uint32_t>(ttl_, 300),
                "ns.dns." + zone_ + ". hostmaster." + zone_ + ". " + std::to_string(serial_) + " 7200 1800 86400 " +
                    std::to_string(ttl_)};
}

Answer ClusterRecords::NoData() const {
  Answer out;
  out.authority.push_back(Soa());
  return out;
}

Answer ClusterRecords::NxDomain() const {
  Answer out = NoData();
  out.rcode = Rcode::kNxDomain;
  return out;
}

Answer ClusterRecords::Resolve(std::string_view qname_in, RrType qtype) const {
  std::string qname = Lower(qname_in);
  if (!qname.empty() && qname.back() == '.') qname.pop_back();
  if (EndsWith(qname, "in-addr.arpa")) return Reverse(qname, qtype);
  if (qname != zone_ && !EndsWith(qname, "." + zone_)) {
    Answer refused;
    refused.rcode = Rcode::kRefused;
    refused.authoritative = false;
    refused.fallthrough = true;
    return refused;
  }
  const std::string fqdn = qname + ".";
  if (qtype == RrType::SOA) {  // the zone's SOA, for any name in it
    Answer out;
    out.answer.push_back(Soa());
    return out;
  }
  const std::vector<std::string> labels =
      qname == zone_ ? std::vector<std::string>{} : Split(qname.substr(0, qname.size() - zone_.size() - 1));
  const size_t n = labels.size();
  if (n == 0) {
    if (!Wants(qtype, RrType::NS)) return NoData();
    Answer out;
    const std::string server = "kube-dns.kube-system.svc." + zone_ + ".";
    out.answer.push_back(Record{zone_ + ".", RrType::NS, ttl_, server});
    auto dns = services_.find("kube-system/kube-dns");
    if (dns != services_.end() && !dns->second.cluster_ip.empty() && dns->second.cluster_ip != "None") {
      out.additional.push_back(Record{server, RrType::A, ttl_, dns->second.cluster_ip});
    }
    return out;
  }
  const std::string& kind = labels[n - 1];
  if (kind != "svc" && kind != "pod") return NxDomain();
  if (n == 1) return NoData();
  const std::string& ns = labels[n - 2];
  const auto first_in_ns = services_.lower_bound(ns + "/");
  const bool ns_exists = namespaces_.contains(ns) ||
                         (first_in_ns != services_.end() && first_in_ns->first.rfind(ns + "/", 0) == 0);
  if (n == 2) return ns_exists ? NoData() : NxDomain();
  if (kind == "pod") {
    if (n != 3 || !ns_exists) return NxDomain();
    const std::string ip = DashedIpv4(labels[0]);
    if (ip.empty()) return NxDomain();
    if (!Wants(qtype, RrType::A)) return NoData();
    Answer out;
    out.answer.push_back(Record{fqdn, RrType::A, ttl_, ip});
    return out;
  }
  // svc: SVC.NS, LABEL.SVC.NS, _PORT._PROTO.SVC.NS
  auto found = services_.find(ns + "/" + labels[n - 3]);
  if (found == services_.end()) return NxDomain();
  const DnsService& svc = found->second;
  if (n == 3) return Service(svc, fqdn, qtype);
  if (n == 5 && labels[0].starts_with("_") && labels[1].starts_with("_")) {
    return Srv(svc, std::string_view(labels[0]).substr(1), std::string_view(labels[1]).substr(1), qtype);
  }
  if (n != 4) return NxDomain();
  Answer out;
  for (const DnsService::Endpoint& e : svc.endpoints) {
    if (e.ready && Lower(EndpointLabel(e)) == labels[0]) out.answer.push_back(Record{fqdn, RrType::A, ttl_, e.ip});
  }
  if (out.answer.empty()) return NxDomain();
  return Wants(qtype, RrType::A) ? out : NoData();
}

Answer ClusterRecords::Service(const DnsService& svc, const std::string& fqdn, RrType qtype) const {
  Answer out;
  if (!svc.external_name.empty()) {
    if (qtype == RrType::A || qtype == RrType::AAAA || qtype == RrType::CNAME || qtype == RrType::ANY) {
      std::string target = Lower(svc.external_name);
      if (target.back() != '.') target += '.';
      out.answer.push_back(Record{fqdn, RrType::CNAME, ttl_, target});
      return out;
    }
    return NoData();
  }
  const bool headless = svc.cluster_ip.empty() || svc.cluster_ip == "None";
  if (headless && std::none_of(svc.endpoints.begin(), svc.endpoints.end(), [](const auto& e) { return e.ready; })) {
    return NxDomain();
  }
  if (qtype == RrType::SRV) return Srv(svc, "", "", qtype);
  if (!Wants(qtype, RrType::A)) return NoData();
  if (!headless) {
    out.answer.push_back(Record{fqdn, RrType::A, ttl_, svc.cluster_ip});
    return out;
  }
  std::set<std::string> seen;
  for (const DnsService::Endpoint& e : svc.endpoints) {
    if (e.ready && seen.insert(e.ip).second) out.answer.push_back(Record{fqdn, RrType::A, ttl_, e.ip});
  }
  return out;
}

Answer ClusterRecords::Srv(const DnsService& svc, std::string_view port, std::string_view protocol,
                           RrType qtype) const {
  // Candidates: (target, port, address), every port when none is named.
  struct Candidate {
    std::string target;
    int32_t port;
    std::string ip;
  };
  std::vector<Candidate> candidates;
  const bool headless = svc.cluster_ip.empty() || svc.cluster_ip == "None";
  for (const DnsService::Port& p : svc.ports) {
    if (!port.empty() && (Lower(p.name) != port || p.protocol != protocol)) continue;
    if (!headless) {
      candidates.push_back({ServiceName(svc), p.port, svc.cluster_ip});
      continue;
    }
    for (const DnsService::Endpoint& e : svc.endpoints) {
      if (e.ready) candidates.push_back({EndpointLabel(e) + "." + ServiceName(svc), p.port, e.ip});
    }
  }
  if (candidates.empty()) return port.empty() ? NoData() : NxDomain();
  if (!Wants(qtype, RrType::SRV)) return NoData();
  const uint32_t weight = std::max<uint32_t>(1, 100 / static_cast<uint32_t>(candidates.size()));
  Answer out;
  const std::string name = port.empty() ? ServiceName(svc)
                                        : "_" + std::string(port) + "._" + std::string(protocol) + "." + ServiceName(svc);
  std::set<std::pair<std::string, int32_t>> seen;
  std::set<std::pair<std::string, std::string>> addresses;
  for (const Candidate& c : candidates) {
    if (!seen.emplace(c.target, c.port).second) continue;
    out.answer.push_back(
        Record{name, RrType::SRV, ttl_, "0 " + std::to_string(weight) + " " + std::to_string(c.port) + " " + c.target});
    if (addresses.emplace(c.target, c.ip).second) out.additional.push_back(Record{c.target, RrType::A, ttl_, c.ip});
  }
  return out;
}

Answer ClusterRecords::Reverse(std::string_view qname, RrType qtype) const {
  // d.c.b.a.in-addr.arpa -> a.b.c.d
  std::vector<std::string> labels = Split(qname.substr(0, qname.size() - std::string_view("in-addr.arpa").size()));
  if (!labels.empty() && labels.back().empty()) labels.pop_back();
  Answer nx = NxDomain();
  nx.fallthrough = true;
  if (labels.size() != 4) return nx;
  const std::string ip = DashedIpv4(labels[3] + "-" + labels[2] + "-" + labels[1] + "-" + labels[0]);
  if (ip.empty()) return nx;
  const std::string fqdn = std::string(qname) + ".";
  Answer out;
  for (const auto& [key, svc] : services_) {
    if (svc.cluster_ip == ip) out.answer.push_back(Record{fqdn, RrType::PTR, ttl_, ServiceName(svc)});
  }
  if (out.answer.empty()) {
    for (const auto& [key, svc] : services_) {
      for (const DnsService::Endpoint& e : svc.endpoints) {
        if (e.ip == ip) {
          out.answer.push_back(Record{fqdn, RrType::PTR, ttl_, EndpointLabel(e) + "." + ServiceName(svc)});
          break;
        }
      }
    }
  }
  if (out.answer.empty()) return nx;
  if (!Wants(qtype, RrType::PTR)) return NoData();
  return out;
}

}  // namespace podflow::proxy::dns
