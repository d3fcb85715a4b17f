#include "stages/proxy/dns/forwarder.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <future>
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

// The nameservers a resolv.conf-style file names, read by ldns's resolver.
Result<std::vector<std::pair<sockaddr_storage, socklen_t>>> ReadResolvConf(const std::string& path) {
  ldns_resolver* resolver = nullptr;
  const ldns_status status = ldns_resolver_new_frm_file(&resolver, path.c_str());
  if (status != LDNS_STATUS_OK) return Status::Invalid(path + ": " + ldns_get_errorstr_by_id(status));
  std::vector<std::pair<sockaddr_storage, socklen_t>> out;
  ldns_rdf** servers = ldns_resolver_nameservers(resolver);
  for (size_t i = 0; i < ldns_resolver_nameserver_count(resolver); ++i) {
    size_t size = 0;
    sockaddr_storage* address = ldns_rdf2native_sockaddr_storage(servers[i], 53, &size);
    if (address == nullptr) continue;
    out.emplace_back(*address, static_cast<socklen_t>(size));
    free(address);
  }
  ldns_resolver_deep_free(resolver);
  return out;
}

// Whether `reply` is a well-formed reply to `query` (same id, QR set).
bool RepliesTo(const uint8_t* reply, size_t size, const std::string& query) {
  ldns_pkt* pkt = nullptr;
  if (ldns_wire2pkt(&pkt, reply, size) != LDNS_STATUS_OK) return false;
  const bool ok = ldns_pkt_qr(pkt) && size >= 2 && std::memcmp(reply, query.data(), 2) == 0;
  ldns_pkt_free(pkt);
  return ok;
}

constexpr std::string_view kWhatUpstreamsAre = "is none of IP, IP:PORT (IPv4) or the path of a resolv.conf file";

}  // namespace

Status CheckUpstream(const std::string& entry) {
  if ((!entry.empty() && entry.front() == '/') || ParseAddress(entry)) return Status::Ok();
  return Status::Invalid("\"" + entry + "\" " + std::string(kWhatUpstreamsAre));
}

Result<std::unique_ptr<Forwarder>> Forwarder::Start(const std::vector<std::string>& to, Options options) {
  std::vector<Upstream> upstreams;
  for (size_t i = 0; i < to.size(); ++i) {
    const std::string& entry = to[i];
    const std::string where = "dnsForward[" + std::to_string(i) + "]";
    if (!entry.empty() && entry.front() == '/') {
      Result<std::vector<std::pair<sockaddr_storage, socklen_t>>> named = ReadResolvConf(entry);
      if (!named.ok()) return Status::Invalid(where + ": " + named.status().message());
      for (const auto& [address, length] : *named) upstreams.push_back({address, length, AddressText(address)});
      continue;
    }
    std::optional<std::pair<sockaddr_storage, socklen_t>> address = ParseAddress(entry);
    if (!address) return Status::Invalid(where + ": " + CheckUpstream(entry).message());
    upstreams.push_back({address->first, address->second, AddressText(address->first)});
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
      jobs_.push_back({std::move(query), over_tcp, std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(std::nullopt);  // stopping, or too much waiting already
}

std::optional<std::string> Forwarder::Exchange(std::string query, bool over_tcp) {
  auto reply = std::make_shared<std::promise<std::optional<std::string>>>();
  std::future<std::optional<std::string>> answered = reply->get_future();
  Forward(std::move(query), over_tcp, [reply](std::optional<std::string> r) { reply->set_value(std::move(r)); });
  return answered.get();
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
    job.done(Ask(job.query, job.over_tcp));
  }
}

std::optional<std::string> Forwarder::Ask(const std::string& query, bool over_tcp) {
  thread_local std::minstd_rand pick(std::random_device{}());
  const size_t first = pick() % upstreams_.size();
  const size_t asked = std::min(upstreams_.size(), kMaxAsked);
  const timeval timeout{static_cast<time_t>(options_.timeout.count() / 1000),
                        static_cast<suseconds_t>(options_.timeout.count() % 1000 * 1000)};
  for (size_t i = 0; i < asked; ++i) {
    const Upstream& upstream = upstreams_[(first + i) % upstreams_.size()];
    ldns_buffer* message = ldns_buffer_new(query.size());
    if (message == nullptr) return std::nullopt;
    ldns_buffer_write(message, query.data(), query.size());  // ldns sends up to the position
    uint8_t* reply = nullptr;
    size_t size = 0;
    const ldns_status sent =
        over_tcp ? ldns_tcp_send(&reply, message, &upstream.address, upstream.length, timeout, &size)
                 : ldns_udp_send(&reply, message, &upstream.address, upstream.length, timeout, &size);
    ldns_buffer_free(message);
    if (sent != LDNS_STATUS_OK || reply == nullptr) continue;
    std::optional<std::string> out;
    if (RepliesTo(reply, size, query)) out.emplace(reinterpret_cast<const char*>(reply), size);
    free(reply);
    if (out) return out;
  }
  return std::nullopt;
}

}  // namespace podflow::proxy::dns
