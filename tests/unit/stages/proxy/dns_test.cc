// Cluster DNS: the answers CoreDNS's kubernetes plugin gives, then the same
// asked of the server with dig over UDP and TCP.
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>

#include "stages/proxy/dns/cluster_records.h"
#include "stages/proxy/dns/dns_server.h"

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
  CHECK(records.Resolve("1.1.1.1.in-addr.arpa.", RrType::PTR).rcode == Rcode::kNxDomain);
  Answer outside = records.Resolve("example.com.", RrType::A);
  CHECK(outside.rcode == Rcode::kRefused);
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

TEST_CASE("the DNS server answers dig over UDP and TCP", "[proxy][dns]") {
  if (std::system("command -v dig >/dev/null 2>&1") != 0) {
    WARN("skipped: dig is not installed (Debian's bind9-dnsutils, which tools/setup installs)");
    return;
  }
  const ClusterRecords records = Cluster();
  Result<std::unique_ptr<DnsServer>> server = DnsServer::Start(
      "127.0.0.1", 0, [&](std::string_view name, RrType type) { return records.Resolve(name, type); });
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
