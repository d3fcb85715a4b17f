#include "stages/proxy/dns/forwarder.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <cstring>
#include <random>

namespace podflow::proxy::dns {
namespace {

constexpr size_t kMaxAsked = 3;  // upstreams asked per query (resolv.conf's MAXNS)

// "IP" or "IP:PORT" (IPv4) as a socket address; nullopt when it is neither.
std::optional<std::pair<sockaddr_storage, socklen_t>> ParseAddress(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string host = text.substr(0, colon);
  unsigned port = 53;
  if (colon != std::string::npos) {
    const char* begin = text.data() + colon + 1;
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(begin, end, port);
    if (begin == end || ec != std::errc() || stop != end || port == 0 || port > 65535) return std::nullopt;
  }
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &in.sin_addr) != 1) return std::nullopt;
  sockaddr_storage out{};
  std::memcpy(&out, &in, sizeof in);
  return std::pair{out, static_cast<socklen_t>(sizeof in)};
}

std::string AddressText(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
  inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

// The nameservers a resolv.conf-style file names, as a resolver reads it:
// `nameserver ADDRESS` lines, IPv4 or IPv6 (a scoped one is skipped), three
// at most; other lines, and addresses it cannot read, skipped.
Result<std::vector<std::pair<sockaddr_storage, socklen_t>>> ReadResolvConf(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Status::Invalid(path + ": cannot be read: " + std::strerror(errno));
  std::vector<std::pair<sockaddr_storage, socklen_t>> out;
  for (std::string line; std::getline(file, line) && out.size() < kMaxAsked;) {
    std::istringstream words(line);
    std::string keyword, address;
    if (!(words >> keyword >> address) || keyword != "nameserver") continue;
    sockaddr_storage storage{};
    if (auto* in = reinterpret_cast<sockaddr_in*>(&storage); inet_pton(AF_INET, address.c_str(), &in->sin_addr) == 1) {
      in->sin_family = AF_INET;
      in->sin_port = htons(53);
      out.emplace_back(storage, static_cast<socklen_t>(sizeof(sockaddr_in)));
    } else if (auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
               inet_pton(AF_INET6, address.c_str(), &in6->sin6_addr) == 1) {
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(53);
      out.emplace_back(storage, static_cast<socklen_t>(sizeof(sockaddr_in6)));
    }
  }
  return out;
}

// Whether `reply` is a reply to `query`: QR set, the same id and the same
// question (name, type, class), as CoreDNS's forward checks it.
bool RepliesTo(const uint8_t* reply, size_t size, const ldns_pkt* query) {
  ldns_pkt* pkt = nullptr;
  if (ldns_wire2pkt(&pkt, reply, size) != LDNS_STATUS_OK) return false;
  bool ok = ldns_pkt_qr(pkt) && ldns_pkt_id(pkt) == ldns_pkt_id(query) && ldns_pkt_qdcount(pkt) == 1 &&
            ldns_pkt_qdcount(query) == 1;
  if (ok) {
    const ldns_rr* got = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
    const ldns_rr* asked = ldns_rr_list_rr(ldns_pkt_question(query), 0);
    ok = ldns_dname_compare(ldns_rr_owner(got), ldns_rr_owner(asked)) == 0 &&
         ldns_rr_get_type(got) == ldns_rr_get_type(asked) && ldns_rr_get_class(got) == ldns_rr_get_class(asked);
  }
  ldns_pkt_free(pkt);
  return ok;
}

constexpr std::string_view kWhatUpstreamsAre = "is none of IP, IP:PORT (IPv4) or the path of a resolv.conf file";

}  // namespace

Status CheckUpstream(const std::string& entry) {
  if ((!entry.empty() && entry.front() == '/') || ParseAddress(entry)) return Status::Ok();
  return Status::Invalid("\"" + entry + "\" " + std::string(kWhatUpstreamsAre));
}

Result<std::unique_ptr<Forwarder>> Forwarder::Start(const std::vector<std::string>& to, Options options,
                                                    const std::vector<std::string>& not_to) {
  std::vector<Upstream> upstreams;
  const auto add = [&](const sockaddr_storage& address, socklen_t length) {
    Upstream upstream{address, length, AddressText(address)};
    if (std::ranges::find(not_to, upstream.text) != not_to.end()) return;
    if (std::ranges::find(upstreams, upstream.text, &Upstream::text) != upstreams.end()) return;
    upstreams.push_back(std::move(upstream));
  };
  for (size_t i = 0; i < to.size(); ++i) {
    const std::string& entry = to[i];
    const std::string where = "dnsForward[" + std::to_string(i) + "]";
    if (!entry.empty() && entry.front() == '/') {
      Result<std::vector<std::pair<sockaddr_storage, socklen_t>>> named = ReadResolvConf(entry);
      if (!named.ok()) return Status::Invalid(where + ": " + named.status().message());
      for (const auto& [address, length] : *named) add(address, length);
      continue;
    }
    std::optional<std::pair<sockaddr_storage, socklen_t>> address = ParseAddress(entry);
    if (!address) return Status::Invalid(where + ": " + CheckUpstream(entry).message());
    add(address->first, address->second);
  }
  if (upstreams.empty()) return Status::Invalid("dnsForward: names no upstream server");
  options.threads = std::max<size_t>(1, options.threads);
  return std::unique_ptr<Forwarder>(new Forwarder(std::move(upstreams), options));
}

Forwarder::Forwarder(std::vector<Upstream> upstreams, Options options)
    : upstreams_(std::move(upstreams)), options_(options) {
  for (size_t i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Work(); });
}

Forwarder::~Forwarder() {
  std::deque<Job> left;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    left.swap(jobs_);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  for (Job& job : left) job.done(std::nullopt);
}

std::vector<std::string> Forwarder::upstreams() const {
  std::vector<std::string> out;
  for (const Upstream& u : upstreams_) out.push_back(u.text);
  return out;
}

void Forwarder::Forward(std::string query, bool over_tcp, Done done) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_ && jobs_.size() < options_.queue) {
      jobs_.push_back({std::move(query), over_tcp, std::move(done), std::chrono::steady_clock::now()});
      wake_.notify_one();
      return;
    }
  }
  done(std::nullopt);  // stopping, or too much waiting already
}

void Forwarder::Work() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    // Past the deadline its client has given up (or asked again).
    const auto deadline = job.queued + options_.deadline;
    job.done(std::chrono::steady_clock::now() < deadline ? Ask(job.query, job.over_tcp, deadline) : std::nullopt);
  }
}

std::optional<std::string> Forwarder::Ask(const std::string& query, bool over_tcp,
                                          std::chrono::steady_clock::time_point deadline) {
  ldns_pkt* asked = nullptr;
  if (ldns_wire2pkt(&asked, reinterpret_cast<const uint8_t*>(query.data()), query.size()) != LDNS_STATUS_OK) {
    return std::nullopt;
  }
  thread_local std::minstd_rand pick(std::random_device{}());
  const size_t first = pick() % upstreams_.size();
  const size_t tries = std::min(upstreams_.size(), kMaxAsked);
  std::optional<std::string> out;
  for (size_t i = 0; i < tries && !out; ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto wait = std::min(options_.timeout, left);
    if (wait.count() <= 0) break;
    const timeval timeout{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
    const Upstream& upstream = upstreams_[(first + i) % upstreams_.size()];
    ldns_buffer* message = ldns_buffer_new(query.size());
    if (message == nullptr) break;
    ldns_buffer_write(message, query.data(), query.size());  // ldns sends up to the position
    uint8_t* reply = nullptr;
    size_t size = 0;
    const ldns_status sent =
        over_tcp ? ldns_tcp_send(&reply, message, &upstream.address, upstream.length, timeout, &size)
                 : ldns_udp_send(&reply, message, &upstream.address, upstream.length, timeout, &size);
    ldns_buffer_free(message);
    if (sent != LDNS_STATUS_OK || reply == nullptr) continue;
    if (RepliesTo(reply, size, asked)) out.emplace(reinterpret_cast<const char*>(reply), size);
    free(reply);
  }
  ldns_pkt_free(asked);
  return out;
}

}  // namespace podflow::proxy::dns
