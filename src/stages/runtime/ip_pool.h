// Pod IP allocation from one node's podCIDR, as the host-local IPAM plugin
// does: the network address, the .1 gateway (the bridge) and the broadcast
// address are never handed out; released addresses are reused, lowest first.
//
// Thread safety: none; one node's pool is used by the one thread that runs it.
#pragma once

#include <set>
#include <string>

#include "base/result.h"
#include "stages/runtime/cidr.h"

namespace podflow::runtime {

class PodIpPool {
 public:
  explicit PodIpPool(Cidr cidr);

  // A free address. Unavailable ("no IP addresses available in range set")
  // when every usable address is taken.
  Result<Ipv4> Allocate();
  // Returns `ip` to the pool. Releasing an address not allocated is a no-op.
  void Release(Ipv4 ip);
  // Marks `ip` in use without handing it out: an address a pod already had
  // before the runtime restarted. Invalid when it is outside the usable
  // range; AlreadyExists when it is in use.
  Status Reserve(Ipv4 ip);

  const Cidr& cidr() const { return cidr_; }
  size_t in_use() const { return in_use_.size(); }

 private:
  Cidr cidr_;
  Ipv4 next_;         // lowest address never handed out yet
  Ipv4 last_usable_;  // inclusive
  std::set<Ipv4> released_;
  std::set<Ipv4> in_use_;
};

}  // namespace podflow::runtime
