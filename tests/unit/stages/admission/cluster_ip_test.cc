// Service cluster IPs: the allocator and its use by Admit.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

TEST_CASE("cluster IP allocator", "[admission][clusterip]") {
  auto range = ClusterIpAllocator::Create("10.96.0.0/12");
  REQUIRE(range.ok());
  SECTION("sequential from the first address after the network address") {
    CHECK(*range->Allocate({}) == "10.96.0.1");
    CHECK(*range->Allocate({"10.96.0.1"}) == "10.96.0.2");
  }
  SECTION("skips taken addresses") {
    CHECK(*range->Allocate({"10.96.0.1", "10.96.0.2", "10.96.0.4"}) == "10.96.0.3");
  }
  SECTION("the default range is 10.96.0.0/12") {
    CHECK(ClusterIpAllocator().cidr() == "10.96.0.0/12");
    CHECK(*ClusterIpAllocator().Allocate({}) == "10.96.0.1");
  }
  SECTION("exhausted range; never the broadcast address") {
    auto small = ClusterIpAllocator::Create("192.168.0.0/30");  // .1 and .2 usable
    REQUIRE(small.ok());
    CHECK(*small->Allocate({"192.168.0.1"}) == "192.168.0.2");
    auto full = small->Allocate({"192.168.0.1", "192.168.0.2"});
    REQUIRE_FALSE(full.ok());
    CHECK(full.status().message() == "range is full");
    CHECK_FALSE(ClusterIpAllocator::Create("10.0.0.7/32")->Allocate({}).ok());
  }
  SECTION("a CIDR with host bits set is taken by its network") {
    CHECK(*ClusterIpAllocator::Create("10.0.0.7/24")->Allocate({}) == "10.0.0.1");
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
  SECTION("lowest free address") {
    auto svc = testing::AdmittedObject<api::Service>(testing::AdmitOne(kService, {"10.96.0.1"}));
    CHECK(svc->spec->cluster_ip == "10.96.0.2");
    CHECK(svc->spec->cluster_ips == std::vector<std::string>{"10.96.0.2"});
  }
  SECTION("addresses handed out earlier in the same request count as taken") {
    Admission admission = testing::TestAdmission();
    AdmitReply reply =
        admission.Admit(testing::kAdminToken, testing::ReadManifest("services.yaml"));
    REQUIRE(reply.results.size() == 2);
    auto web = testing::AdmittedObject<api::Service>(reply.results[0]);
    auto nodeport = testing::AdmittedObject<api::Service>(reply.results[1]);
    CHECK(web->spec->cluster_ip == "10.96.0.1");
    CHECK(nodeport->spec->cluster_ip == "10.96.0.2");
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
