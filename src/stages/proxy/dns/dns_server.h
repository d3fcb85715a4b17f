// A DNS server for the cluster's records: UDP and TCP on one address, each
// query read and each reply written by ldns (the DNS library of NLnet Labs,
// Debian's libldns), answers from a lookup function (ClusterRecords'). One
// thread serves both; TCP connections are served one message at a time.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"
#include "stages/proxy/dns/cluster_records.h"

namespace podflow::proxy::dns {

using Lookup = std::function<Answer(std::string_view qname, RrType qtype)>;

// The reply to the DNS message `query` (wire format), at most `max_size`
// bytes (a UDP reply cut to fit is marked truncated, as RFC 1035 says);
// nullopt when `query` is not a message one can answer (too short to hold
// an id). A query ldns cannot read gets FORMERR, an opcode other than
// QUERY NOTIMP, a question count other than one FORMERR.
std::optional<std::string> Reply(std::string_view query, const Lookup& lookup, size_t max_size);

class DnsServer {
 public:
  // Binds `host`:`port` (IPv4; port 0 picks one) for UDP and TCP and
  // serves until destroyed.
  static Result<std::unique_ptr<DnsServer>> Start(const std::string& host, uint16_t port, Lookup lookup);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  DnsServer(int udp, int tcp, int wake, uint16_t port, Lookup lookup);
  void Serve();
  void ServeTcp(int connection);

  const int udp_, tcp_, wake_;  // sockets and the eventfd that stops Serve
  const uint16_t port_;
  const Lookup lookup_;
  std::thread thread_;
};

}  // namespace podflow::proxy::dns
