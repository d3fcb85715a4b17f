// Cluster DNS: the answers CoreDNS's kubernetes plugin gives, then the same
// asked of the server with dig over UDP and TCP.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "stages/proxy/dns/cluster_records.h"
#include "stages/proxy/dns/dns_server.h"
#include "stages/proxy/dns/forwarder.h"

namespace podflow::proxy::dns {
namespace {

ClusterRecords Cluster() {
  ClusterRecords records;
  records.SetSerial(1700000000);
  records.SetNamespace("default", true);
  records.SetNamespace("shop", true);
  records.SetService({"default", "kubernetes", "10.96.0.1", "", {{"https", "tcp", 443}}, {{"172.18.0.2", "", true}}});
  records.SetService({"shop", "web", "10.96.0.20", "", {{"http", "tcp", 80}, {"metrics", "tcp", 9090}},
                      {{"10.244.1.2", "", true}, {"10.244.2.3", "", true}}});
  records.SetService({"shop", "db", "None", "", {{"pg", "tcp", 5432}},
                      {{"10.244.1.7", "db-0", true}, {"10.244.2.8", "", true}, {"10.244.3.9", "", false}}});
  records.SetService({"shop", "empty", "None", "", {{"http", "tcp", 80}}, {}});
  records.SetService({"shop", "docs", "", "kubernetes.io", {}, {}});
  return records;
}

std::vector<std::string> Data(const std::vector<Record>& records) {
  std::vector<std::string> out;
  for (const Record& r : records) out.push_back(r.data);
  return out;
}

TEST_CASE("cluster DNS: A records of services, headless services and their endpoints", "[proxy][dns]") {
  const ClusterRecords records = Cluster();
  Answer a = records.Resolve("web.shop.svc.cluster.local.", RrType::A);
  CHECK(a.rcode == Rcode::kNoError);
  CHECK(a.authoritative);
  REQUIRE(a.answer.size() == 1);
  CHECK(a.answer[0] == Record{"web.shop.svc.cluster.local.", RrType::A, 30, "10.96.0.20"});
  CHECK(Data(records.Resolve("WEB.shop.svc.cluster.local", RrType::A).answer) ==
        std::vector<std::string>{"10.96.0.20"});  // names are case-insensitive
  // Headless: the ready endpoints.
  CHECK(Data(records.Resolve("db.shop.svc.cluster.local.", RrType::A).answer) ==
        std::vector<std::string>{"10.244.1.7", "10.244.2.8"});
  CHECK(Data(records.Resolve("db-0.db.shop.svc.cluster.local.", RrType::A).answer) ==
        std::vector<std::string>{"10.244.1.7"});
  CHECK(Data(records.Resolve("10-244-2-8.db.shop.svc.cluster.local.", RrType::A).answer) ==
        std::vector<std::string>{"10.244.2.8"});
  // ExternalName: a CNAME.
  Answer cname = records.Resolve("docs.shop.svc.cluster.local.", RrType::A);
  REQUIRE(cname.answer.size() == 1);
  CHECK(cname.answer[0].type == RrType::CNAME);
  CHECK(cname.answer[0].data == "kubernetes.io.");
  // Pods, `pods insecure`: any well-formed address in a namespace that exists.
  CHECK(Data(records.Resolve("10-244-1-2.shop.pod.cluster.local.", RrType::A).answer) ==
        std::vector<std::string>{"10.244.1.2"});
  CHECK(records.Resolve("10-244-1-2.nowhere.pod.cluster.local.", RrType::A).rcode == Rcode::kNxDomain);
  CHECK(records.Resolve("10-244-1.shop.pod.cluster.local.", RrType::A).rcode == Rcode::kNxDomain);
}

TEST_CASE("cluster DNS: SRV records of named ports", "[proxy][dns]") {
  const ClusterRecords records = Cluster();
  Answer srv = records.Resolve("_http._tcp.web.shop.svc.cluster.local.", RrType::SRV);
  REQUIRE(srv.answer.size() == 1);
  CHECK(srv.answer[0] ==
        Record{"_http._tcp.web.shop.svc.cluster.local.", RrType::SRV, 30, "0 100 80 web.shop.svc.cluster.local."});
  REQUIRE(srv.additional.size() == 1);
  CHECK(srv.additional[0].data == "10.96.0.20");
  // Headless: one per ready endpoint, its own name the target.
  Answer headless = records.Resolve("_pg._tcp.db.shop.svc.cluster.local.", RrType::SRV);
  CHECK(Data(headless.answer) == std::vector<std::string>{"0 50 5432 db-0.db.shop.svc.cluster.local.",
                                                          "0 50 5432 10-244-2-8.db.shop.svc.cluster.local."});
  CHECK(headless.additional.size() == 2);
  // Without a port: every port.
  CHECK(records.Resolve("web.shop.svc.cluster.local.", RrType::SRV).answer.size() == 2);
  CHECK(records.Resolve("_http._udp.web.shop.svc.cluster.local.", RrType::SRV).rcode == Rcode::kNxDomain);
  CHECK(records.Resolve("_nope._tcp.web.shop.svc.cluster.local.", RrType::SRV).rcode == Rcode::kNxDomain);
}

TEST_CASE("cluster DNS: NXDOMAIN and NODATA with the zone's SOA; PTR; names outside the zone refused",
          "[proxy][dns]") {
  const ClusterRecords records = Cluster();
  const std::string soa = "ns.dns.cluster.local. hostmaster.cluster.local. 1700000000 7200 1800 86400 30";
  Answer missing = records.Resolve("nope.shop.svc.cluster.local.", RrType::A);
  CHECK(missing.rcode == Rcode::kNxDomain);
  CHECK(missing.answer.empty());
  REQUIRE(missing.authority.size() == 1);
  CHECK(missing.authority[0] == Record{"cluster.local.", RrType::SOA, 30, soa});
  // A headless service without ready endpoints does not resolve.
  CHECK(records.Resolve("empty.shop.svc.cluster.local.", RrType::A).rcode == Rcode::kNxDomain);
  // The name exists, the type does not: NODATA.
  Answer aaaa = records.Resolve("web.shop.svc.cluster.local.", RrType::AAAA);
  CHECK(aaaa.rcode == Rcode::kNoError);
  CHECK(aaaa.answer.empty());
  CHECK(aaaa.authority.size() == 1);
  CHECK(records.Resolve("shop.svc.cluster.local.", RrType::A).rcode == Rcode::kNoError);
  CHECK(records.Resolve("nowhere.svc.cluster.local.", RrType::A).rcode == Rcode::kNxDomain);
  CHECK(records.Resolve("svc.cluster.local.", RrType::A).rcode == Rcode::kNoError);
  CHECK(records.Resolve("web.shop.other.cluster.local.", RrType::A).rcode == Rcode::kNxDomain);
  Answer apex = records.Resolve("cluster.local.", RrType::SOA);
  REQUIRE(apex.answer.size() == 1);
  CHECK(apex.answer[0].data == soa);
  // PTR: a cluster IP, then an endpoint.
  CHECK(Data(records.Resolve("20.0.96.10.in-addr.arpa.", RrType::PTR).answer) ==
        std::vector<std::string>{"web.shop.svc.cluster.local."});
  CHECK(Data(records.Resolve("7.1.244.10.in-addr.arpa.", RrType::PTR).answer) ==
        std::vector<std::string>{"db-0.db.shop.svc.cluster.local."});
  Answer unknown_ptr = records.Resolve("1.1.1.1.in-addr.arpa.", RrType::PTR);
  CHECK(unknown_ptr.rcode == Rcode::kNxDomain);
  CHECK(unknown_ptr.fallthrough);  // to the upstreams, where there are any
  CHECK_FALSE(records.Resolve("web.shop.other.cluster.local.", RrType::A).fallthrough);
  Answer outside = records.Resolve("example.com.", RrType::A);
  CHECK(outside.rcode == Rcode::kRefused);
  CHECK(outside.fallthrough);
  CHECK_FALSE(outside.authoritative);
}

// `dig` with `args`, its output.
std::string Dig(const std::string& args) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(("dig " + args + " 2>&1").c_str(), "r"), ::pclose);
  REQUIRE(pipe != nullptr);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) out += buffer;
  return out;
}

// A DNS server on a loopback port answering from `records` (which it
// must not outlive), forwarding what falls through to `forwarder`.
Result<std::unique_ptr<DnsServer>> Serve(const ClusterRecords& records, Forwarder* forwarder = nullptr) {
  return DnsServer::Start(
      "127.0.0.1", 0, [&records](std::string_view name, RrType type) { return records.Resolve(name, type); },
      forwarder);
}

bool HasDig() {
  if (std::system("command -v dig >/dev/null 2>&1") == 0) return true;
  WARN("skipped: dig is not installed (Debian's bind9-dnsutils, which tools/setup installs)");
  return false;
}

TEST_CASE("the DNS server answers dig over UDP and TCP", "[proxy][dns]") {
  if (!HasDig()) return;
  const ClusterRecords records = Cluster();
  Result<std::unique_ptr<DnsServer>> server = Serve(records);
  REQUIRE(server.ok());
  const std::string at = "@127.0.0.1 -p " + std::to_string((*server)->port()) + " +time=2 +tries=1 ";
  CHECK(Dig(at + "+short web.shop.svc.cluster.local A") == "10.96.0.20\n");
  CHECK(Dig(at + "+short +tcp web.shop.svc.cluster.local A") == "10.96.0.20\n");
  CHECK(Dig(at + "+short _pg._tcp.db.shop.svc.cluster.local SRV") ==
        "0 50 5432 db-0.db.shop.svc.cluster.local.\n0 50 5432 10-244-2-8.db.shop.svc.cluster.local.\n");
  CHECK(Dig(at + "+short -x 10.96.0.20") == "web.shop.svc.cluster.local.\n");
  CHECK(Dig(at + "+short 10-244-9-9.shop.pod.cluster.local") == "10.244.9.9\n");
  const std::string nx = Dig(at + "nope.shop.svc.cluster.local A");
  CHECK(nx.find("status: NXDOMAIN") != std::string::npos);
  CHECK(nx.find("flags: qr aa") != std::string::npos);
  CHECK(nx.find("cluster.local.\t\t30\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local.") != std::string::npos);
  CHECK(Dig(at + "example.com A").find("status: REFUSED") != std::string::npos);
}

TEST_CASE("names the cluster does not hold go to the upstreams and come back unchanged, as CoreDNS's forward plugin "
          "sends them; the cluster's own are answered here, misses too",
          "[proxy][dns]") {
  if (!HasDig()) return;
  // The upstream: another zone, with a service the cluster does not know.
  ClusterRecords elsewhere("example.test");
  elsewhere.SetSerial(1700000000);
  elsewhere.SetNamespace("default", true);
  elsewhere.SetService({"default", "web", "10.0.0.5", "", {{"http", "tcp", 80}}, {}});
  Result<std::unique_ptr<DnsServer>> upstream = Serve(elsewhere);
  REQUIRE(upstream.ok());
  Result<std::unique_ptr<Forwarder>> forwarder =
      Forwarder::Start({"127.0.0.1:" + std::to_string((*upstream)->port())});
  REQUIRE(forwarder.ok());
  CHECK((*forwarder)->upstreams() == std::vector<std::string>{"127.0.0.1:" + std::to_string((*upstream)->port())});

  const ClusterRecords records = Cluster();
  Result<std::unique_ptr<DnsServer>> server = Serve(records, forwarder->get());
  REQUIRE(server.ok());
  const std::string at = "@127.0.0.1 -p " + std::to_string((*server)->port()) + " +time=2 +tries=1 ";
  CHECK(Dig(at + "+short web.default.svc.example.test A") == "10.0.0.5\n");
  CHECK(Dig(at + "+short +tcp web.default.svc.example.test A") == "10.0.0.5\n");
  // The upstream's NXDOMAIN, with its own SOA and its authority flag.
  const std::string nx = Dig(at + "nope.default.svc.example.test A");
  INFO(nx);
  CHECK(nx.find("status: NXDOMAIN") != std::string::npos);
  CHECK(nx.find("flags: qr aa") != std::string::npos);
  CHECK(nx.find("ns.dns.example.test.") != std::string::npos);
  // A reverse name the cluster has no record for falls through (`fallthrough in-addr.arpa`).
  CHECK(Dig(at + "+short -x 10.0.0.5") == "web.default.svc.example.test.\n");
  // The cluster's own names and misses stay here.
  CHECK(Dig(at + "+short web.shop.svc.cluster.local A") == "10.96.0.20\n");
  CHECK(Dig(at + "+short -x 10.96.0.20") == "web.shop.svc.cluster.local.\n");
  const std::string here = Dig(at + "nope.shop.svc.cluster.local A");
  CHECK(here.find("status: NXDOMAIN") != std::string::npos);
  CHECK(here.find("ns.dns.cluster.local.") != std::string::npos);
  // What neither holds: the upstream's REFUSED, passed on.
  CHECK(Dig(at + "example.com A").find("status: REFUSED") != std::string::npos);
}

TEST_CASE("an upstream that does not answer in time: SERVFAIL with the question, over UDP and TCP; the server "
          "answers others meanwhile",
          "[proxy][dns]") {
  if (!HasDig()) return;
  // A UDP socket nobody reads and a TCP listener nobody accepts from, on one port.
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int silent_udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(::bind(silent_udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t length = sizeof addr;
  REQUIRE(::getsockname(silent_udp, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
  const int silent_tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(::bind(silent_tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(silent_tcp, 4) == 0);
  Result<std::unique_ptr<Forwarder>> forwarder =
      Forwarder::Start({"127.0.0.1:" + std::to_string(ntohs(addr.sin_port))},
                       {.timeout = std::chrono::milliseconds(6000), .deadline = std::chrono::milliseconds(6000)});
  REQUIRE(forwarder.ok());
  const ClusterRecords records = Cluster();
  Result<std::unique_ptr<DnsServer>> server = Serve(records, forwarder->get());
  REQUIRE(server.ok());
  const std::string at = "@127.0.0.1 -p " + std::to_string((*server)->port()) + " +tries=1 ";
  // A TCP query waits on the upstream; the server answers UDP meanwhile.
  std::atomic<bool> tcp_answered = false;
  std::string over_tcp;
  std::thread waiting([&] {
    over_tcp = Dig(at + "+time=10 +tcp example.com A");
    tcp_answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(Dig(at + "+time=2 +short web.shop.svc.cluster.local A") == "10.96.0.20\n");
  CHECK(Dig(at + "+time=2 +short +tcp web.shop.svc.cluster.local A") == "10.96.0.20\n");
  CHECK_FALSE(tcp_answered);
  waiting.join();
  INFO(over_tcp);
  CHECK(over_tcp.find("status: SERVFAIL") != std::string::npos);
  CHECK(over_tcp.find("QUERY: 1,") != std::string::npos);  // the question kept, so a resolver takes it
  const std::string over_udp = Dig(at + "+time=10 example.com A");
  INFO(over_udp);
  CHECK(over_udp.find("status: SERVFAIL") != std::string::npos);
  CHECK(over_udp.find("QUERY: 1,") != std::string::npos);
  ::close(silent_udp);
  ::close(silent_tcp);
}

TEST_CASE("the forwarder's upstreams: addresses, and the nameservers of resolv.conf files", "[proxy][dns]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("podflow-forward-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/resolv.conf") << "search example.test\nnameserver 10.1.2.3\nnameserver 10.1.2.4\noptions ndots:2\n";
  Result<std::unique_ptr<Forwarder>> read = Forwarder::Start({"192.0.2.1:5353", dir + "/resolv.conf"});
  REQUIRE(read.ok());
  CHECK((*read)->upstreams() == std::vector<std::string>{"192.0.2.1:5353", "10.1.2.3:53", "10.1.2.4:53"});

  // A resolver's reading: lines it cannot read skipped, IPv6 too, three at most.
  std::ofstream(dir + "/mixed.conf") << "nameserver not-an-address\n# nameserver 10.9.9.9\nnameserver ::1\n"
                                     << "nameserver 10.1.2.5\nnameserver 10.1.2.6\nnameserver 10.1.2.7\n";
  Result<std::unique_ptr<Forwarder>> mixed = Forwarder::Start({dir + "/mixed.conf"});
  REQUIRE(mixed.ok());
  CHECK((*mixed)->upstreams() == std::vector<std::string>{"[::1]:53", "10.1.2.5:53", "10.1.2.6:53"});
  // The server's own address is left out wherever it is named.
  Result<std::unique_ptr<Forwarder>> not_itself =
      Forwarder::Start({dir + "/resolv.conf", "127.0.0.1:53"}, {}, {"10.1.2.3:53", "127.0.0.1:53"});
  REQUIRE(not_itself.ok());
  CHECK((*not_itself)->upstreams() == std::vector<std::string>{"10.1.2.4:53"});
  Result<std::unique_ptr<Forwarder>> only_itself = Forwarder::Start({"127.0.0.1:10053"}, {}, {"127.0.0.1:10053"});
  REQUIRE_FALSE(only_itself.ok());
  CHECK(only_itself.status().message() == "dnsForward: names no upstream server");

  Result<std::unique_ptr<Forwarder>> missing = Forwarder::Start({"1.1.1.1", dir + "/nope.conf"});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::StartsWith("dnsForward[1]: " + dir + "/nope.conf: "));
  Result<std::unique_ptr<Forwarder>> bad = Forwarder::Start({"localhost"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "dnsForward[0]: \"localhost\" is none of IP, IP:PORT (IPv4) or the path of a resolv.conf file");
  std::ofstream(dir + "/empty.conf") << "search example.test\n";
  Result<std::unique_ptr<Forwarder>> none = Forwarder::Start({dir + "/empty.conf"});
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::StartsWith("dnsForward"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the DNS server refuses what is not a query it can read", "[proxy][dns]") {
  const Lookup lookup = [](std::string_view, RrType) { return Answer{}; };
  CHECK_FALSE(Reply("short", lookup, 512).has_value());
  // A header claiming a question that is not there: FORMERR, same id.
  const std::string bad("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  std::optional<std::string> reply = Reply(bad, lookup, 512);
  REQUIRE(reply.has_value());
  REQUIRE(reply->size() >= 12);
  CHECK(reply->substr(0, 2) == "\x12\x34");
  CHECK((static_cast<uint8_t>((*reply)[2]) & 0x80) != 0);  // a reply
  CHECK((static_cast<uint8_t>((*reply)[3]) & 0x0f) == 1);   // FORMERR
}

}  // namespace
}  // namespace podflow::proxy::dns
