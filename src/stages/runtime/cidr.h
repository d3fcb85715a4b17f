// IPv4 addresses and CIDR blocks: enough to split a cluster CIDR into node
// podCIDRs and hand out pod and node addresses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace podflow::runtime {

using Ipv4 = uint32_t;  // host byte order

Result<Ipv4> ParseIpv4(std::string_view text);
std::string FormatIpv4(Ipv4 ip);

struct Cidr {
  Ipv4 base = 0;   // network address (host bits zero)
  int prefix = 0;  // 0..32

  uint64_t size() const { return uint64_t{1} << (32 - prefix); }
  std::string ToString() const;
};

// "10.244.0.0/16". Host bits must be zero, as Kubernetes' ParseCIDR checks
// for podCIDR and clusterCIDR.
Result<Cidr> ParseCidr(std::string_view text);

// The `index`-th block of prefix length `mask` inside `parent`:
// Subnet(10.244.0.0/16, 24, 3) = 10.244.3.0/24. Invalid when it does not fit.
Result<Cidr> Subnet(const Cidr& parent, int mask, uint64_t index);

}  // namespace podflow::runtime
