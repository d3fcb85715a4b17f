// Service cluster IPs: the allocator and its use by Admit.
#include <cstdio>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

TEST_CASE("cluster IP allocator", "[admission][clusterip]") {
  auto range = ClusterIpAllocator::Create("10.96.0.0/12");
  REQUIRE(range.ok());
  std::mt19937_64 rng(7);
  // An address as a number, to compare.
  const auto n = [](const std::string& ip) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    REQUIRE(std::sscanf(ip.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) == 4);
    return (a << 24) | (b << 16) | (c << 8) | d;
  };
  SECTION("from above the lower band, 10.96.0.1-10.96.1.0 of a /12, which stays for addresses asked for") {
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
      Result<std::string> ip = range->Allocate(seen, rng);
      REQUIRE(ip.ok());
      CHECK(n(*ip) >= n("10.96.1.1"));
      CHECK(n(*ip) <= n("10.111.255.254"));
      CHECK(seen.insert(*ip).second);  // never one taken
    }
    // Random starts: not a run of neighbours from the bottom of the band.
    CHECK(n(*seen.rbegin()) - n(*seen.begin()) > 200);
  }
  SECTION("the default range is 10.96.0.0/12") {
    CHECK(ClusterIpAllocator().cidr() == "10.96.0.0/12");
    CHECK(n(*ClusterIpAllocator().Allocate({}, rng)) > n("10.96.1.0"));
  }
  SECTION("the lower band once the upper one is full; never the network or broadcast address") {
    // A /24: 254 usable, the first 16 (min(max(16, 256/16), 256)) the lower band.
    auto small = ClusterIpAllocator::Create("192.168.7.0/24");
    REQUIRE(small.ok());
    std::set<std::string> taken;
    for (int i = 0; i < 254 - 16; ++i) {
      Result<std::string> ip = small->Allocate(taken, rng);
      REQUIRE(ip.ok());
      CHECK(n(*ip) >= n("192.168.7.17"));
      CHECK(n(*ip) <= n("192.168.7.254"));
      taken.insert(*ip);
    }
    for (int i = 0; i < 16; ++i) {
      Result<std::string> ip = small->Allocate(taken, rng);
      REQUIRE(ip.ok());
      CHECK(n(*ip) >= n("192.168.7.1"));
      CHECK(n(*ip) <= n("192.168.7.16"));
      taken.insert(*ip);
    }
    Result<std::string> full = small->Allocate(taken, rng);
    REQUIRE_FALSE(full.ok());
    CHECK(full.status().message() == "range is full");
    auto tiny = ClusterIpAllocator::Create("192.168.0.0/30");  // .1 and .2 usable, both in the lower band
    REQUIRE(tiny.ok());
    CHECK(*tiny->Allocate({"192.168.0.1"}, rng) == "192.168.0.2");
    CHECK_FALSE(tiny->Allocate({"192.168.0.1", "192.168.0.2"}, rng).ok());
    CHECK_FALSE(ClusterIpAllocator::Create("10.0.0.7/32")->Allocate({}, rng).ok());
  }
  SECTION("a CIDR with host bits set is taken by its network") {
    const std::string ip = *ClusterIpAllocator::Create("10.0.0.7/24")->Allocate({}, rng);
    CHECK(n(ip) >= n("10.0.0.17"));
    CHECK(n(ip) <= n("10.0.0.254"));
  }
  SECTION("user-given addresses") {
    struct Case {
      std::string ip;
      std::set<std::string> taken;
      std::string error;  // empty: accepted
    };
    const std::vector<Case> cases = {
        {"10.96.0.10", {}, ""},
        {"10.111.255.254", {}, ""},
        {"10.96.0.10", {"10.96.0.10"}, "provided IP is already allocated"},
        {"1.1.1.1",
         {},
         "the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is "
         "10.96.0.0/12"},
        {"10.96.0.0",
         {},
         "the provided IP (10.96.0.0) is not in the valid range. The range of valid IPs is "
         "10.96.0.0/12"},
        {"10.111.255.255",
         {},
         "the provided IP (10.111.255.255) is not in the valid range. The range of valid IPs is "
         "10.96.0.0/12"},
    };
    for (const Case& c : cases) {
      SECTION(c.ip + (c.taken.empty() ? "" : " taken")) {
        Status s = range->Check(c.ip, c.taken);
        CHECK(s.message() == c.error);
        CHECK(s.ok() == c.error.empty());
      }
    }
  }
  SECTION("bad ranges") {
    for (std::string_view cidr : {"10.96.0.0", "10.96.0.0/33", "fd00::/108", "10.96.0/12", "x/1"}) {
      CHECK_FALSE(ClusterIpAllocator::Create(cidr).ok());
    }
  }
}

constexpr std::string_view kService = R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
)";

TEST_CASE("Admit allocates service cluster IPs", "[admission][clusterip]") {
  SECTION("a free address of the range, its only one in clusterIPs") {
    auto svc = testing::AdmittedObject<api::Service>(testing::AdmitOne(kService, {"10.96.0.1"}));
    CHECK_THAT(svc->spec->cluster_ip, Catch::StartsWith("10."));
    CHECK(svc->spec->cluster_ip != "10.96.0.1");
    REQUIRE(ClusterIpAllocator().Check(svc->spec->cluster_ip, {}).ok());  // in 10.96.0.0/12
    CHECK(svc->spec->cluster_ips == std::vector<std::string>{svc->spec->cluster_ip});
  }
  SECTION("addresses handed out earlier in the same request count as taken") {
    Admission admission = testing::TestAdmission();
    AdmitReply reply =
        admission.Admit(testing::kAdminToken, testing::ReadManifest("services.yaml"));
    REQUIRE(reply.results.size() == 2);
    auto web = testing::AdmittedObject<api::Service>(reply.results[0]);
    auto nodeport = testing::AdmittedObject<api::Service>(reply.results[1]);
    CHECK(ClusterIpAllocator().Check(web->spec->cluster_ip, {}).ok());
    CHECK(ClusterIpAllocator().Check(nodeport->spec->cluster_ip, {web->spec->cluster_ip}).ok());
  }
  SECTION("a user-given address that is taken") {
    std::string manifest = std::string(kService) + "  clusterIP: 10.96.0.10\n";
    AdmissionOutcome out = testing::AdmitOne(manifest, {"10.96.0.10"});
    CHECK(out.status.code == 422);
    CHECK(out.status.message ==
          "Service \"web\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: "
          "failed to allocate IP 10.96.0.10: provided IP is already allocated");
  }
  SECTION("a user-given address out of range") {
    std::string manifest = std::string(kService) + "  clusterIP: 1.1.1.1\n";
    CHECK(
        testing::RejectOne(manifest) ==
        "Service \"web\" is invalid: spec.clusterIPs: Invalid value: []string{\"1.1.1.1\"}: failed "
        "to allocate IP 1.1.1.1: the provided IP (1.1.1.1) is not in the valid range. The range of "
        "valid IPs is 10.96.0.0/12");
  }
  SECTION("headless") {
    std::string manifest = std::string(kService) + "  clusterIP: None\n";
    auto svc = testing::AdmittedObject<api::Service>(testing::AdmitOne(manifest));
    CHECK(svc->spec->cluster_ip == "None");
    CHECK(svc->spec->cluster_ips == std::vector<std::string>{"None"});
  }
  SECTION("range exhausted: InternalError") {
    AdmissionConfig config = testing::TestConfig();
    config.cluster_ips = *ClusterIpAllocator::Create("10.0.0.0/30");
    Admission admission = testing::TestAdmission(std::move(config));
    AdmitReply reply = admission.Admit(testing::kAdminToken, kService, {.taken_cluster_ips = {"10.0.0.1", "10.0.0.2"}});
    REQUIRE(reply.results.size() == 1);
    CHECK(KubectlMessage(reply.results[0].status) ==
          "Error from server (InternalError): Internal error occurred: failed to allocate a "
          "serviceIP: range is full");
  }
}

}  // namespace
}  // namespace podflow::admission
