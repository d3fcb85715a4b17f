// Names the cluster DNS does not hold, sent on to upstream servers as
// CoreDNS's `forward . /etc/resolv.conf` does: the client's message as it
// came, to one upstream after another (a random one first), over the
// transport the client used, within one deadline for them all; the first
// reply to that question (same id, name, type and class) goes back
// unchanged (a truncated one too: the client asks again over TCP); none in
// time, SERVFAIL (the caller's part).
//
// The exchanges run on the forwarder's own threads, so their sockets are
// made in the network namespace the forwarder was started in: the proxy
// stage starts one in this machine's namespace, and the DNS servers it runs
// inside the pod network's node namespaces hand it their queries, which
// then reach the machine's resolvers although the pods' network has no way
// out. Messages are read and written by ldns (ldns_udp_send, ldns_tcp_send,
// ldns_wire2pkt).
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"

namespace podflow::proxy::dns {

// Whether `entry` could be an upstream: "IP" or "IP:PORT" (IPv4), or an
// absolute path (read when a Forwarder starts). Invalid, saying why.
Status CheckUpstream(const std::string& entry);

class Forwarder {
 public:
  struct Options {
    std::chrono::milliseconds timeout{2000};   // per upstream asked ...
    std::chrono::milliseconds deadline{4000};  // ... and for them all (a resolver gives up at 5 s)
    size_t threads = 4;                        // exchanges at once
    size_t queue = 256;  // waiting beyond that, or past the deadline: answered at once, unanswered
  };
  using Done = std::function<void(std::optional<std::string> reply)>;

  // `to`: each "IP" (port 53), "IP:PORT" (IPv4) or the path of a
  // resolv.conf file, whose `nameserver` lines name them as a resolver reads
  // them (IPv4 or IPv6; other lines and ones it cannot read skipped; three
  // at most). At most three upstreams are asked per query. `not_to`:
  // addresses ("IP:PORT") to leave out wherever they are named — the
  // server's own, whose queries would come back to it. Invalid, naming the
  // entry, when one is none of these or the whole list names no upstream.
  static Result<std::unique_ptr<Forwarder>> Start(const std::vector<std::string>& to, Options options,
                                                  const std::vector<std::string>& not_to = {});
  static Result<std::unique_ptr<Forwarder>> Start(const std::vector<std::string>& to) { return Start(to, Options{}); }
  ~Forwarder();  // waits for the exchanges under way; those still waiting get nullopt
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Sends `query` (a DNS message, wire form) upstream on one of the
  // forwarder's threads, which then calls `done` with the reply, or nullopt
  // when no upstream gave one. `over_tcp`: the client asked over TCP.
  void Forward(std::string query, bool over_tcp, Done done);

  // The upstreams, as "IP:PORT".
  std::vector<std::string> upstreams() const;

 private:
  struct Upstream {
    sockaddr_storage address{};
    socklen_t length = 0;
    std::string text;
  };
  struct Job {
    std::string query;
    bool over_tcp = false;
    Done done;
    std::chrono::steady_clock::time_point queued;
  };
  Forwarder(std::vector<Upstream> upstreams, Options options);
  void Work();
  std::optional<std::string> Ask(const std::string& query, bool over_tcp,
                                 std::chrono::steady_clock::time_point deadline);

  const std::vector<Upstream> upstreams_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace podflow::proxy::dns
