#include <catch2/catch.hpp>
#include <set>

#include "stages/runtime/runtime.h"

namespace podflow::runtime {
namespace {

TEST_CASE("cidr: parse, format and split") {
  Result<Cidr> c = ParseCidr("10.244.0.0/16");
  REQUIRE(c.ok());
  CHECK(c->ToString() == "10.244.0.0/16");
  CHECK(Subnet(*c, 24, 0)->ToString() == "10.244.0.0/24");
  CHECK(Subnet(*c, 24, 255)->ToString() == "10.244.255.0/24");
  CHECK_FALSE(Subnet(*c, 24, 256).ok());
  for (const char* bad : {"10.244.0.0", "10.244.0.1/16", "10.244.0.0/33", "300.1.1.0/24",
                          "10.244.0/24", "10.244.00.0/24"}) {
    INFO(bad);
    CHECK_FALSE(ParseCidr(bad).ok());
  }
}

TEST_CASE("pod IPs: distinct, from the node's CIDR, skipping network and gateway") {
  PodIpPool pool(*ParseCidr("10.244.3.0/24"));
  std::set<Ipv4> seen;
  for (int i = 0; i < 253; ++i) {  // .2 .. .254
    Result<Ipv4> ip = pool.Allocate();
    REQUIRE(ip.ok());
    CHECK(seen.insert(*ip).second);
    CHECK((*ip & 0xFFFFFF00u) == *ParseIpv4("10.244.3.0"));
  }
  CHECK(seen.count(*ParseIpv4("10.244.3.0")) == 0);
  CHECK(seen.count(*ParseIpv4("10.244.3.1")) == 0);
  CHECK(seen.count(*ParseIpv4("10.244.3.255")) == 0);
  CHECK(FormatIpv4(*seen.begin()) == "10.244.3.2");
  // Exhausted.
  Result<Ipv4> none = pool.Allocate();
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("no IP addresses available"));
  // A released address is reused.
  pool.Release(*ParseIpv4("10.244.3.77"));
  CHECK(FormatIpv4(*pool.Allocate()) == "10.244.3.77");
}

TEST_CASE("pod IPs: lowest released address first, then fresh ones") {
  PodIpPool pool(*ParseCidr("10.244.0.0/24"));
  const Ipv4 a = *pool.Allocate(), b = *pool.Allocate(), c = *pool.Allocate();
  pool.Release(c);
  pool.Release(a);
  pool.Release(a);  // twice: no-op
  CHECK(*pool.Allocate() == a);
  CHECK(*pool.Allocate() == c);
  CHECK(FormatIpv4(*pool.Allocate()) == "10.244.0.5");
  CHECK(pool.in_use() == 4);
  (void)b;
}

TEST_CASE("image references normalize as Docker does") {
  struct Case {
    const char* in;
    const char* canonical;
  };
  const Case cases[] = {
      {"nginx", "docker.io/library/nginx:latest"},
      {"nginx:1.14.2", "docker.io/library/nginx:1.14.2"},
      {"docker.io/library/nginx:1.14.2", "docker.io/library/nginx:1.14.2"},
      {"fluent/fluent-bit:3.0", "docker.io/fluent/fluent-bit:3.0"},
      {"registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9"},
      {"localhost:5000/app", "localhost:5000/app:latest"},
      {"nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"},
  };
  for (const Case& c : cases) {
    INFO(c.in);
    CHECK(NormalizeImageReference(c.in).Canonical() == c.canonical);
  }
}

TEST_CASE("catalog resolves known images and tags only") {
  ImageCatalog catalog({{"nginx", {"1.14.2", "latest"}, 44'000'000, SimDuration(500), {}}});
  auto a = catalog.Resolve("nginx:1.14.2");
  auto b = catalog.Resolve("docker.io/library/nginx:1.14.2");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->image_id == b->image_id);
  CHECK_THAT(a->image_id, Catch::StartsWith("docker.io/library/nginx@sha256:"));
  CHECK(a->image_id.size() == std::string("docker.io/library/nginx@sha256:").size() + 64);
  CHECK(catalog.Resolve("nginx")->canonical == "docker.io/library/nginx:latest");
  CHECK_FALSE(catalog.Resolve("nginx:nope"));
  CHECK_FALSE(catalog.Resolve("redis"));
}

}  // namespace
}  // namespace podflow::runtime
