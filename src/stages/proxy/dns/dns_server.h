// A DNS server for the cluster's records: UDP and TCP on one address, each
// query read and each reply written by ldns (the DNS library of NLnet Labs,
// Debian's libldns), answers from a lookup function (ClusterRecords'). One
// thread serves both, TCP connections from the same poll. A name the
// lookup marks as falling through goes to the forwarder, when the server
// has one (forwarder.h), and is answered from the forwarder's thread: the
// server's own never waits for an upstream.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <sys/socket.h>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"
#include "stages/proxy/dns/cluster_records.h"
#include "stages/proxy/dns/forwarder.h"

namespace podflow::proxy::dns {

using Lookup = std::function<Answer(std::string_view qname, RrType qtype)>;

// The reply to the DNS message `query` (wire format), at most `max_size`
// bytes (a UDP reply cut to fit is marked truncated, as RFC 1035 says);
// nullopt when `query` is not a message one can answer (too short to hold
// an id). A query ldns cannot read gets FORMERR, an opcode other than
// QUERY NOTIMP, a question count other than one FORMERR.
std::optional<std::string> Reply(std::string_view query, const Lookup& lookup, size_t max_size);

// What a server does with one message: Reply's reply, or (`can_forward`
// and the lookup's answer falls through) nothing yet and `forward` set.
struct Handling {
  std::optional<std::string> reply;
  bool forward = false;
};
Handling Handle(std::string_view query, const Lookup& lookup, size_t max_size, bool can_forward);

// SERVFAIL for `query`: its id and opcode, no records.
std::string ServerFailure(std::string_view query);

class DnsServer {
 public:
  // Binds `host`:`port` (IPv4; port 0 picks one) for UDP and TCP and
  // serves until destroyed. `forwarder` (none: what falls through is
  // answered as the lookup says) must outlive the server.
  static Result<std::unique_ptr<DnsServer>> Start(const std::string& host, uint16_t port, Lookup lookup,
                                                  Forwarder* forwarder = nullptr);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  DnsServer(int udp, int tcp, int wake, uint16_t port, Lookup lookup, Forwarder* forwarder);
  void Serve();
  void ServeUdp(std::string_view query, const sockaddr_storage& peer, socklen_t length);
  struct TcpPeer;
  // Answers each whole message in `in` (taking it out; `whole` set when
  // there was one); false when the connection is to be closed.
  bool ServeTcp(const std::shared_ptr<TcpPeer>& peer, std::string& in, bool& whole);

  // The UDP socket is held by the forwarded queries' replies too, so it
  // stays open (and its number not reused) until the last one is sent.
  const std::shared_ptr<const int> udp_;
  const int tcp_, wake_;  // the TCP socket and the eventfd that stops Serve
  const uint16_t port_;
  const Lookup lookup_;
  Forwarder* const forwarder_;
  std::thread thread_;
};

}  // namespace podflow::proxy::dns
