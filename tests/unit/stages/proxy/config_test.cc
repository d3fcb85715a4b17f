// The `proxy:` section: defaults, each key, and errors that name the key.
#include "stages/proxy/config.h"

#include <catch2/catch.hpp>

namespace podflow::proxy {
namespace {

Result<ProxyConfig> Parse(const std::string& yaml) { return ParseProxyConfig(YAML::Load(yaml)); }

TEST_CASE("proxy config: the defaults, and each key read") {
  Result<ProxyConfig> defaults = ParseProxyConfig(YAML::Node());
  REQUIRE(defaults.ok());
  CHECK(defaults->cluster_domain == "cluster.local");
  CHECK(defaults->dns);
  CHECK(defaults->dns_host == "127.0.0.1");
  CHECK(defaults->dns_port == 10053);
  CHECK(defaults->cluster_dns == "10.96.0.10");
  CHECK(defaults->cluster_cidr.empty());
  CHECK(defaults->dns_forward == std::vector<std::string>{"/etc/resolv.conf"});
  CHECK(defaults->dns_forward_default);

  Result<ProxyConfig> set = Parse(
      "{clusterDomain: example.org., dnsListen: \"127.0.0.2:5353\", dnsTTL: 5, clusterDNS: 10.100.0.10, "
      "clusterCIDR: 10.8.0.0/14}");
  REQUIRE(set.ok());
  CHECK(set->cluster_domain == "example.org");
  CHECK(set->dns_host == "127.0.0.2");
  CHECK(set->dns_port == 5353);
  CHECK(set->dns_ttl == 5);
  CHECK(set->cluster_dns == "10.100.0.10");
  CHECK(set->cluster_cidr == "10.8.0.0/14");

  Result<ProxyConfig> forward = Parse("{dnsForward: [1.1.1.1, \"10.0.0.2:5353\", /run/resolv.conf]}");
  REQUIRE(forward.ok());
  CHECK(forward->dns_forward == std::vector<std::string>{"1.1.1.1", "10.0.0.2:5353", "/run/resolv.conf"});
  CHECK_FALSE(forward->dns_forward_default);
  Result<ProxyConfig> nowhere = Parse("{dnsForward: []}");
  REQUIRE(nowhere.ok());
  CHECK(nowhere->dns_forward.empty());

  Result<ProxyConfig> off = Parse("{dnsListen: \"\", clusterDNS: \"\"}");
  REQUIRE(off.ok());
  CHECK_FALSE(off->dns);
  CHECK(off->cluster_dns.empty());
}

TEST_CASE("proxy config: a bad value is refused, naming its key") {
  const std::pair<const char*, const char*> cases[] = {
      {"{dnsListen: localhost}", "proxy.dnsListen: must be an IPv4 HOST:PORT such as 127.0.0.1:10053"},
      {"{clusterDNS: 10.96.0}", "proxy.clusterDNS: must be an IPv4 address such as 10.96.0.10, not \"10.96.0\""},
      {"{clusterCIDR: 10.244.0.0}", "proxy.clusterCIDR: must be an IPv4 CIDR such as 10.244.0.0/16"},
      {"{clusterCIDR: 10.244.0.0/33}", "proxy.clusterCIDR: must be an IPv4 CIDR"},
      {"{clusterCIDR: 10.244.0.0/16x}", "proxy.clusterCIDR: must be an IPv4 CIDR"},
      {"{dnsTTL: 4000}", "proxy.dnsTTL: must be between 0 and 3600"},
      {"{clusterDns: 10.96.0.10}", "proxy.clusterDns: unknown field"},
      {"{dnsForward: 1.1.1.1}", "proxy.dnsForward: must be a list"},
      {"{dnsForward: [1.1.1.1, dns.google]}",
       "proxy.dnsForward[1]: \"dns.google\" is none of IP, IP:PORT (IPv4) or the path of a resolv.conf file"},
      {"{dnsForward: [\"1.1.1.1:0\"]}", "proxy.dnsForward[0]: \"1.1.1.1:0\" is none of"},
      {"{dnsForward: [resolv.conf]}", "proxy.dnsForward[0]: \"resolv.conf\" is none of"},
      {"{dnsForward: [\"127.0.0.1:10053\"]}",
       "proxy.dnsForward[0]: 127.0.0.1:10053 is where this DNS answers (proxy.dnsListen)"},
      {"{dnsListen: \"127.0.0.3:53\", dnsForward: [127.0.0.3]}", "proxy.dnsForward[0]: 127.0.0.3 is where this DNS answers"},
      {"{dnsListen: \"0.0.0.0:5353\", dnsForward: [\"127.0.0.1:5353\"]}",
       "proxy.dnsForward[0]: 127.0.0.1:5353 is where this DNS answers"},
  };
  for (const auto& [yaml, message] : cases) {
    INFO(yaml);
    Result<ProxyConfig> parsed = Parse(yaml);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.status().message(), Catch::StartsWith(message));
  }
}

TEST_CASE("proxy config: the cluster CIDR, DNS address and domain are the runtime's unless the proxy says") {
  Result<ProxyConfig> from_runtime = LoadProxyConfig(
      YAML::Node(), YAML::Load("{clusterCIDR: 10.32.0.0/12, clusterDNS: [10.32.0.10, 10.32.0.11], clusterDomain: corp.local}"));
  REQUIRE(from_runtime.ok());
  CHECK(from_runtime->cluster_cidr == "10.32.0.0/12");
  CHECK(from_runtime->cluster_dns == "10.32.0.10");
  CHECK(from_runtime->cluster_domain == "corp.local");
  Result<ProxyConfig> own = LoadProxyConfig(YAML::Load("{clusterCIDR: 10.8.0.0/16, clusterDNS: 10.8.0.53}"),
                                            YAML::Load("{clusterCIDR: 10.32.0.0/12, clusterDNS: [10.32.0.10]}"));
  REQUIRE(own.ok());
  CHECK(own->cluster_cidr == "10.8.0.0/16");
  CHECK(own->cluster_dns == "10.8.0.53");
  CHECK(own->cluster_domain == "cluster.local");
  Result<ProxyConfig> neither = LoadProxyConfig(YAML::Node(), YAML::Load("{nodes: []}"));
  REQUIRE(neither.ok());
  CHECK(neither->cluster_cidr == "10.244.0.0/16");
  CHECK(neither->cluster_dns == "10.96.0.10");
  CHECK_FALSE(LoadProxyConfig(YAML::Load("{dnsTTL: -1}"), YAML::Node()).ok());
}

}  // namespace
}  // namespace podflow::proxy
