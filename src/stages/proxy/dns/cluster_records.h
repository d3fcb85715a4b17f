// The answers of cluster DNS, as CoreDNS's kubernetes plugin gives them
// (`kubernetes cluster.local in-addr.arpa { pods insecure; ttl 30 }`):
//   SVC.NS.svc.ZONE            A: the cluster IP; a headless service's
//                              ready endpoints; CNAME for ExternalName
//   _PORT._PROTO.SVC.NS.svc.ZONE, SVC.NS.svc.ZONE
//                              SRV per named port (priority 0, weight
//                              100/N), the targets' A records as additional
//   LABEL.SVC.NS.svc.ZONE      A of a headless service's endpoint (its
//                              hostname, else its dashed IP)
//   A-B-C-D.NS.pod.ZONE        A A.B.C.D when NS exists
//   D.C.B.A.in-addr.arpa       PTR of a cluster IP or an endpoint
//   ZONE                       SOA, NS
// A name that exists without the type asked is NODATA, anything else in the
// zone NXDOMAIN, both with the zone's SOA in the authority section. A name
// outside the zone is Refused and a reverse name without a record NXDOMAIN,
// both marked to fall through to the upstreams (`forward .`). Plain values
// in and out: no sockets, no packets.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace podflow::proxy::dns {

// DNS record types, by their numbers.
enum class RrType : uint16_t { A = 1, NS = 2, CNAME = 5, SOA = 6, PTR = 12, TXT = 16, AAAA = 28, SRV = 33, ANY = 255 };

// One resource record, its data in presentation form ("10.96.0.10",
// "0 100 80 web.default.svc.cluster.local.").
struct Record {
  std::string name;  // fully qualified, with the final dot
  RrType type = RrType::A;
  uint32_t ttl = 0;
  std::string data;
  bool operator==(const Record&) const = default;
};

enum class Rcode { kNoError = 0, kServFail = 2, kNxDomain = 3, kRefused = 5 };

struct Answer {
  Rcode rcode = Rcode::kNoError;
  bool authoritative = true;
  // Not the cluster's to answer: a name outside its zones (Refused), or a
  // reverse name it holds no record for (CoreDNS's `fallthrough in-addr.arpa
  // ip6.arpa`). A server with upstreams forwards such a query.
  bool fallthrough = false;
  std::vector<Record> answer, authority, additional;
};

// A Service as DNS sees it, with the endpoints of its EndpointSlices.
struct DnsService {
  struct Port {
    std::string name, protocol;  // protocol lowercase: tcp, udp, sctp
    int32_t port = 0;
  };
  struct Endpoint {
    std::string ip;
    std::string hostname;  // the slice's (a pod's spec.hostname under the service's subdomain)
    bool ready = true;     // the slice's ready condition (publishNotReadyAddresses makes every one ready)
  };
  std::string namespace_, name;
  std::string cluster_ip;     // "" or "None": headless
  std::string external_name;  // set for ExternalName
  std::vector<Port> ports;
  std::vector<Endpoint> endpoints;
};

class ClusterRecords {
 public:
  explicit ClusterRecords(std::string zone = "cluster.local", uint32_t ttl = 30);

  void SetService(DnsService service);
  void RemoveService(const std::string& namespace_, const std::string& name);
  void SetNamespace(const std::string& name, bool exists);
  // The SOA's serial: the Unix time of the last change, as CoreDNS's.
  void SetSerial(uint32_t serial) { serial_ = serial; }

  // The answer to a question for `qname` (any case, with or without the
  // final dot) of type `qtype`; Refused for a name outside the zone and
  // in-addr.arpa (marked fallthrough, as is a reverse name it has no record for).
  Answer Resolve(std::string_view qname, RrType qtype) const;

  const std::string& zone() const { return zone_; }

 private:
  Record Soa() const;
  Answer NoData() const;
  Answer NxDomain() const;
  Answer Service(const DnsService& svc, const std::string& fqdn, RrType qtype) const;
  Answer Srv(const DnsService& svc, std::string_view port, std::string_view protocol, RrType qtype) const;
  Answer Reverse(std::string_view labels, RrType qtype) const;
  std::string ServiceName(const DnsService& svc) const;  // "svc.ns.svc.zone."

  std::string zone_;
  uint32_t ttl_;
  uint32_t serial_ = 1;
  std::map<std::string, DnsService> services_;  // "ns/name"
  std::set<std::string> namespaces_;
};

// The label of a headless service's endpoint: its hostname, else its
// address with dashes ("10-244-1-2").
std::string EndpointLabel(const DnsService::Endpoint& endpoint);

}  // namespace podflow::proxy::dns
