#include "stages/runtime/ip_pool.h"

namespace podflow::runtime {

PodIpPool::PodIpPool(Cidr cidr) : cidr_(cidr) {
  // Skip the network address and the gateway; stop before broadcast. Tiny
  // blocks (/31, /32) leave nothing usable: next_ > last_usable_.
  const uint64_t size = cidr.size();
  next_ = cidr.base + 2;
  last_usable_ = size >= 4 ? static_cast<Ipv4>(cidr.base + size - 2) : cidr.base;
}

Result<Ipv4> PodIpPool::Allocate() {
  // Addresses above next_ may be taken by Reserve(): skip them.
  while (released_.empty() && next_ <= last_usable_ && next_ > cidr_.base && in_use_.contains(next_)) ++next_;
  Ipv4 ip;
  if (!released_.empty()) {
    ip = *released_.begin();
    released_.erase(released_.begin());
  } else if (next_ <= last_usable_ && next_ > cidr_.base) {
    ip = next_++;
  } else {
    return Status::Unavailable("failed to allocate for range " + cidr_.ToString() +
                               ": no IP addresses available in range set");
  }
  in_use_.insert(ip);
  return ip;
}

Status PodIpPool::Reserve(Ipv4 ip) {
  if (ip < cidr_.base + 2 || ip > last_usable_) {
    return Status::Invalid(FormatIpv4(ip) + " is not a usable address of " + cidr_.ToString());
  }
  if (in_use_.contains(ip)) return Status::AlreadyExists(FormatIpv4(ip) + " is in use");
  released_.erase(ip);
  in_use_.insert(ip);
  return Status::Ok();
}

void PodIpPool::Release(Ipv4 ip) {
  if (in_use_.erase(ip) == 1) released_.insert(ip);
}

}  // namespace podflow::runtime
