#include "stages/proxy/dns/dns_server.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

namespace podflow::proxy::dns {
namespace {

constexpr size_t kUdpDefault = 512;     // RFC 1035's limit without EDNS
constexpr size_t kTcpMax = 65535;
constexpr int kTcpTimeoutMs = 2000;     // a TCP client quiet that long is dropped
constexpr size_t kTcpConnections = 64;  // served at once

// An ldns object freed with its own function.
template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() {
    if (p != nullptr) Free(p);
  }
};
using Packet = Owned<ldns_pkt, ldns_pkt_free>;

std::string RcodeReply(std::string_view query, ldns_pkt_rcode rcode) {
  // The header alone: the query's id and opcode, QR set, the rcode.
  std::string out(query.substr(0, 12));
  out.resize(12, '\0');
  out[2] = static_cast<char>((static_cast<uint8_t>(out[2]) & 0x78) | 0x80);  // QR, keep opcode
  out[3] = static_cast<char>(rcode & 0x0f);
  std::memset(out.data() + 4, 0, 8);  // no records
  return out;
}

bool Push(ldns_pkt* pkt, ldns_pkt_section section, const Record& r) {
  const char* type = r.type == RrType::A       ? "A"
                     : r.type == RrType::NS    ? "NS"
                     : r.type == RrType::CNAME ? "CNAME"
                     : r.type == RrType::SOA   ? "SOA"
                     : r.type == RrType::PTR   ? "PTR"
                     : r.type == RrType::TXT   ? "TXT"
                     : r.type == RrType::AAAA  ? "AAAA"
                                               : "SRV";
  const std::string text = r.name + " " + std::to_string(r.ttl) + " IN " + type + " " + r.data;
  ldns_rr* rr = nullptr;
  if (ldns_rr_new_frm_str(&rr, text.c_str(), 0, nullptr, nullptr) != LDNS_STATUS_OK) return false;
  return ldns_pkt_push_rr(pkt, section, rr);
}

// `answer` as a reply to `query` in wire form; nullopt when ldns cannot
// write it.
std::optional<std::string> Encode(const ldns_pkt* query, const Answer& answer, bool truncate_all) {
  Packet reply{ldns_pkt_new()};
  if (reply.p == nullptr) return std::nullopt;
  ldns_pkt_set_id(reply.p, ldns_pkt_id(query));
  ldns_pkt_set_qr(reply.p, true);
  ldns_pkt_set_opcode(reply.p, LDNS_PACKET_QUERY);
  ldns_pkt_set_rd(reply.p, ldns_pkt_rd(query));
  ldns_pkt_set_aa(reply.p, answer.authoritative);
  ldns_pkt_set_rcode(reply.p, static_cast<uint8_t>(answer.rcode));
  ldns_pkt_push_rr(reply.p, LDNS_SECTION_QUESTION, ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(query), 0)));
  if (truncate_all) {
    ldns_pkt_set_tc(reply.p, true);
  } else {
    for (const Record& r : answer.answer) Push(reply.p, LDNS_SECTION_ANSWER, r);
    for (const Record& r : answer.authority) Push(reply.p, LDNS_SECTION_AUTHORITY, r);
    for (const Record& r : answer.additional) Push(reply.p, LDNS_SECTION_ADDITIONAL, r);
  }
  if (ldns_pkt_edns(query)) {
    ldns_pkt_set_edns_udp_size(reply.p, 4096);
    ldns_pkt_set_edns_data(reply.p, nullptr);
  }
  uint8_t* wire = nullptr;
  size_t size = 0;
  if (ldns_pkt2wire(&wire, reply.p, &size) != LDNS_STATUS_OK) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(wire), size);
  free(wire);
  return out;
}

}  // namespace

std::optional<std::string> Reply(std::string_view query, const Lookup& lookup, size_t max_size) {
  return Handle(query, lookup, max_size, false).reply;
}

std::string ServerFailure(std::string_view query) {
  // With the question, as resolvers match a reply to their query by it.
  Packet pkt;
  if (ldns_wire2pkt(&pkt.p, reinterpret_cast<const uint8_t*>(query.data()), query.size()) == LDNS_STATUS_OK &&
      ldns_pkt_qdcount(pkt.p) == 1) {
    Answer failed;
    failed.rcode = Rcode::kServFail;
    failed.authoritative = false;
    if (std::optional<std::string> out = Encode(pkt.p, failed, false)) return *out;
  }
  return RcodeReply(query, LDNS_RCODE_SERVFAIL);
}

Handling Handle(std::string_view query, const Lookup& lookup, size_t max_size, bool can_forward) {
  if (query.size() < 12) return {};
  Packet pkt;
  if (ldns_wire2pkt(&pkt.p, reinterpret_cast<const uint8_t*>(query.data()), query.size()) != LDNS_STATUS_OK) {
    return {RcodeReply(query, LDNS_RCODE_FORMERR)};
  }
  if (ldns_pkt_qr(pkt.p)) return {};  // a reply, not a question
  if (ldns_pkt_get_opcode(pkt.p) != LDNS_PACKET_QUERY) return {RcodeReply(query, LDNS_RCODE_NOTIMPL)};
  if (ldns_pkt_qdcount(pkt.p) != 1) return {RcodeReply(query, LDNS_RCODE_FORMERR)};
  const ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(pkt.p), 0);
  char* owner = ldns_rdf2str(ldns_rr_owner(question));
  if (owner == nullptr) return {RcodeReply(query, LDNS_RCODE_SERVFAIL)};
  const std::string qname = owner;
  free(owner);
  if (ldns_rr_get_class(question) != LDNS_RR_CLASS_IN && ldns_rr_get_class(question) != LDNS_RR_CLASS_ANY) {
    return {RcodeReply(query, LDNS_RCODE_REFUSED)};
  }
  const Answer answer = lookup(qname, static_cast<RrType>(ldns_rr_get_type(question)));
  if (can_forward && answer.fallthrough) return {.forward = true};
  size_t limit = max_size;
  if (limit < kTcpMax && ldns_pkt_edns(pkt.p)) limit = std::max<size_t>(kUdpDefault, ldns_pkt_edns_udp_size(pkt.p));
  std::optional<std::string> out = Encode(pkt.p, answer, false);
  if (!out) return {ServerFailure(query)};
  if (out->size() > limit) out = Encode(pkt.p, answer, true);  // the client asks again over TCP
  return {std::move(out)};
}

namespace {

// An fd closed when its last holder lets go (a reply still to be sent from
// the forwarder's thread holds it).
std::shared_ptr<const int> Held(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* held) {
    ::close(*held);
    delete held;
  });
}

}  // namespace

Result<std::unique_ptr<DnsServer>> DnsServer::Start(const std::string& host, uint16_t port, Lookup lookup,
                                                    Forwarder* forwarder) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status::Invalid("DNS server address \"" + host + "\" is not an IPv4 address");
  }
  auto fail = [&](const std::string& what, std::initializer_list<int> fds) {
    const std::string why = std::strerror(errno);
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
    return Status::IOError("DNS server on " + host + ":" + std::to_string(port) + ": " + what + ": " + why);
  };
  const int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (udp < 0) return fail("socket", {});
  if (::bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return fail("bind (udp)", {udp});
  socklen_t length = sizeof addr;
  ::getsockname(udp, reinterpret_cast<sockaddr*>(&addr), &length);  // the port picked, for TCP too
  const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (tcp < 0) return fail("socket", {udp});
  const int one = 1;
  ::setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(tcp, 16) != 0) {
    return fail("bind (tcp)", {udp, tcp});
  }
  const int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) return fail("eventfd", {udp, tcp});
  return std::unique_ptr<DnsServer>(
      new DnsServer(udp, tcp, wake, ntohs(addr.sin_port), std::move(lookup), forwarder));
}

DnsServer::DnsServer(int udp, int tcp, int wake, uint16_t port, Lookup lookup, Forwarder* forwarder)
    : udp_(Held(udp)),
      tcp_(tcp),
      wake_(wake),
      port_(port),
      lookup_(std::move(lookup)),
      forwarder_(forwarder) {
  thread_ = std::thread([this] { Serve(); });
}

DnsServer::~DnsServer() {
  const uint64_t one = 1;
  (void)!::write(wake_, &one, sizeof one);
  thread_.join();
  ::close(tcp_);
  ::close(wake_);
}

// A TCP client's connection, written by the server's thread and the
// forwarder's under one lock and never waited on: a client that does not
// read what it asked for is cut off, so no reply goes out half.
struct DnsServer::TcpPeer {
  explicit TcpPeer(int socket) : fd(socket) {}
  ~TcpPeer() { ::close(fd); }
  TcpPeer(const TcpPeer&) = delete;
  TcpPeer& operator=(const TcpPeer&) = delete;

  // Sends `message` with its two-byte length (RFC 1035 4.2.2), whole or not
  // at all; false once the connection is cut.
  bool Send(const std::string& message) {
    std::string framed;
    framed += static_cast<char>(message.size() >> 8);
    framed += static_cast<char>(message.size() & 0xff);
    framed += message;
    std::lock_guard lock(mu);
    if (broken) return false;
    if (::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(framed.size())) {
      broken = true;
      ::shutdown(fd, SHUT_RDWR);
      return false;
    }
    return true;
  }

  const int fd;
  std::mutex mu;
  std::atomic<bool> broken = false;
  std::atomic<int> waiting = 0;  // forwarded queries whose replies are still to go
};

void DnsServer::Serve() {
  // TCP connections are served beside UDP from the same poll: each reads
  // what has come and answers every whole message in it (forwarded ones
  // from the forwarder's thread, in any order, as RFC 7766 allows); one
  // whose client closes, is cut off, or sends no whole message for a while
  // with nothing of its own still to come is closed.
  struct Connection {
    std::shared_ptr<TcpPeer> peer;
    std::string in;
    std::chrono::steady_clock::time_point heard;  // its last whole message (or its accept)
  };
  std::vector<Connection> connections;
  std::vector<pollfd> fds;
  std::string buffer(kTcpMax, '\0');
  const auto idle = std::chrono::milliseconds(kTcpTimeoutMs);
  const auto recheck = std::chrono::milliseconds(100);  // a connection waiting on the forwarder
  while (true) {
    fds = {{*udp_, POLLIN, 0}, {tcp_, POLLIN, 0}, {wake_, POLLIN, 0}};
    std::optional<std::chrono::milliseconds> timeout;
    const auto now = std::chrono::steady_clock::now();
    for (const Connection& c : connections) {
      fds.push_back({c.peer->fd, POLLIN, 0});
      const auto left = c.peer->waiting > 0
                            ? recheck
                            : std::max(std::chrono::ceil<std::chrono::milliseconds>(c.heard + idle - now),
                                       std::chrono::milliseconds(0));
      timeout = timeout ? std::min(*timeout, left) : left;
    }
    if (::poll(fds.data(), fds.size(), timeout ? static_cast<int>(timeout->count()) : -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[2].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      sockaddr_storage peer{};
      socklen_t length = sizeof peer;
      const ssize_t n = ::recvfrom(*udp_, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&peer), &length);
      if (n > 0) ServeUdp(std::string_view(buffer.data(), static_cast<size_t>(n)), peer, length);
    }
    const auto heard = std::chrono::steady_clock::now();
    std::vector<Connection> kept;
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      bool open = !c.peer->broken && (heard < c.heard + idle || c.peer->waiting > 0);
      if (open && fds[3 + i].revents != 0) {
        const ssize_t n = ::read(c.peer->fd, buffer.data(), buffer.size());
        open = n > 0;
        if (open) {
          c.in.append(buffer.data(), static_cast<size_t>(n));
          bool whole = false;
          open = ServeTcp(c.peer, c.in, whole);
          if (whole) c.heard = heard;
        }
      }
      if (open) kept.push_back(std::move(c));
    }
    connections = std::move(kept);
    if (fds[1].revents & POLLIN) {
      const int connection = ::accept4(tcp_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection >= 0 && connections.size() >= kTcpConnections) {
        ::close(connection);  // as many as it serves at once
      } else if (connection >= 0) {
        connections.push_back({std::make_shared<TcpPeer>(connection), "", heard});
      }
    }
  }
}

void DnsServer::ServeUdp(std::string_view query, const sockaddr_storage& peer, socklen_t length) {
  Handling handled = Handle(query, lookup_, kUdpDefault, forwarder_ != nullptr);
  if (handled.forward) {
    forwarder_->Forward(std::string(query), false,
                        [udp = udp_, peer, length, failure = ServerFailure(query)](std::optional<std::string> reply) {
                          const std::string& out = reply ? *reply : failure;
                          ::sendto(*udp, out.data(), out.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&peer),
                                   length);
                        });
    return;
  }
  if (handled.reply) {
    ::sendto(*udp_, handled.reply->data(), handled.reply->size(), MSG_DONTWAIT,
             reinterpret_cast<const sockaddr*>(&peer), length);
  }
}

bool DnsServer::ServeTcp(const std::shared_ptr<TcpPeer>& peer, std::string& in, bool& whole) {
  // Each message is preceded by its length in two bytes (RFC 1035 4.2.2).
  while (in.size() >= 2) {
    const size_t size = static_cast<size_t>(static_cast<uint8_t>(in[0])) << 8 | static_cast<uint8_t>(in[1]);
    if (in.size() < 2 + size) return true;  // the rest to come
    const std::string message = in.substr(2, size);
    in.erase(0, 2 + size);
    whole = true;
    Handling handled = Handle(message, lookup_, kTcpMax, forwarder_ != nullptr);
    if (handled.forward) {
      ++peer->waiting;
      forwarder_->Forward(message, true, [peer, failure = ServerFailure(message)](std::optional<std::string> reply) {
        peer->Send(reply ? *reply : failure);
        --peer->waiting;
      });
      continue;
    }
    if (!handled.reply || !peer->Send(*handled.reply)) return false;
  }
  return true;
}

}  // namespace podflow::proxy::dns
