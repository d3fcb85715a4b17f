// Service cluster IPs: an IPv4 range, kube-apiserver's two bands.
#include <algorithm>
#include <charconv>

#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

// Dotted-quad IPv4 only; no leading zeros beyond "0" itself.
std::optional<uint32_t> ParseIpv4(std::string_view s) {
  uint32_t out = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (s.empty() || s.front() != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    size_t len = 0;
    while (len < s.size() && s[len] >= '0' && s[len] <= '9') ++len;
    if (len == 0 || len > 3 || (len > 1 && s[0] == '0')) return std::nullopt;
    unsigned value = 0;
    std::from_chars(s.data(), s.data() + len, value);
    if (value > 255) return std::nullopt;
    out = (out << 8) | value;
    s.remove_prefix(len);
  }
  if (!s.empty()) return std::nullopt;
  return out;
}

std::string FormatIpv4(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

}  // namespace

ClusterIpAllocator::ClusterIpAllocator()
    : ClusterIpAllocator(std::string(kDefaultRange), 0x0a600000 /* 10.96.0.0 */, 12) {}

ClusterIpAllocator::ClusterIpAllocator(std::string cidr, uint32_t ip, int prefix_bits)
    : cidr_(std::move(cidr)) {
  mask_ = prefix_bits == 0 ? 0 : ~uint32_t{0} << (32 - prefix_bits);
  network_ = ip & mask_;
  // Kubernetes leaves out the network and the broadcast address.
  first_ = network_ + 1;
  last_ = (network_ | ~mask_) - 1;
  if (prefix_bits >= 31) {  // no usable address: first_ > last_
    first_ = 1;
    last_ = 0;
  }
  // KEP-3070's lower band: min(max(16, size/16), 256) of the range's size.
  const uint64_t size = uint64_t{1} << (32 - prefix_bits);
  lower_band_ = std::min<uint64_t>(std::max<uint64_t>(16, size / 16), 256);
}

Result<ClusterIpAllocator> ClusterIpAllocator::Create(std::string_view cidr) {
  auto bad = [&](std::string_view why) {
    return Status::Invalid("service cluster IP range \"" + std::string(cidr) +
                           "\": " + std::string(why));
  };
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return bad("not a CIDR (e.g. 10.96.0.0/12)");
  std::optional<uint32_t> ip = ParseIpv4(cidr.substr(0, slash));
  if (!ip) return bad("only IPv4 ranges are supported (e.g. 10.96.0.0/12)");
  std::string_view bits_text = cidr.substr(slash + 1);
  int bits = -1;
  auto [end, ec] = std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
  if (ec != std::errc() || end != bits_text.data() + bits_text.size() || bits < 0 || bits > 32) {
    return bad("prefix length must be 0..32");
  }
  return ClusterIpAllocator(std::string(cidr), *ip, bits);
}

Result<std::string> ClusterIpAllocator::Allocate(const std::set<std::string>& taken, std::mt19937_64& rng) const {
  if (first_ > last_) return Status::Unavailable("range is full");
  const auto address = [&](uint64_t offset) { return FormatIpv4(static_cast<uint32_t>(first_ + offset)); };
  std::optional<uint64_t> offset = PickInBands(uint64_t{last_} - first_ + 1, lower_band_, rng,
                                               [&](uint64_t o) { return taken.contains(address(o)); });
  if (!offset) return Status::Unavailable("range is full");
  return address(*offset);
}

Status ClusterIpAllocator::Check(std::string_view ip, const std::set<std::string>& taken) const {
  std::optional<uint32_t> addr = ParseIpv4(ip);
  if (!addr || (*addr & mask_) != network_ || *addr < first_ || *addr > last_) {
    return Status::Invalid("the provided IP (" + std::string(ip) +
                           ") is not in the valid range. The range of valid IPs is " + cidr_);
  }
  if (taken.contains(FormatIpv4(*addr))) return Status::Invalid("provided IP is already allocated");
  return Status::Ok();
}

}  // namespace podflow::admission
