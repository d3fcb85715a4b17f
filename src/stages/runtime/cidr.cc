#include "stages/runtime/cidr.h"

#include <charconv>

namespace podflow::runtime {

Result<Ipv4> ParseIpv4(std::string_view text) {
  Ipv4 ip = 0;
  std::string_view rest = text;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (rest.empty() || rest.front() != '.') break;
      rest.remove_prefix(1);
    }
    unsigned value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    const size_t len = static_cast<size_t>(end - rest.data());
    if (ec != std::errc() || value > 255 || len == 0 || len > 3 || (len > 1 && rest[0] == '0')) {
      return Status::Invalid("invalid IPv4 address \"" + std::string(text) + "\"");
    }
    ip = (ip << 8) | value;
    rest.remove_prefix(len);
    if (octet == 3 && rest.empty()) return ip;
  }
  return Status::Invalid("invalid IPv4 address \"" + std::string(text) + "\"");
}

std::string FormatIpv4(Ipv4 ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xFF) + "." +
         std::to_string((ip >> 8) & 0xFF) + "." + std::to_string(ip & 0xFF);
}

std::string Cidr::ToString() const { return FormatIpv4(base) + "/" + std::to_string(prefix); }

Result<Cidr> ParseCidr(std::string_view text) {
  const size_t slash = text.find('/');
  const auto invalid = [&](std::string_view why) {
    return Status::Invalid("invalid CIDR \"" + std::string(text) + "\": " + std::string(why));
  };
  if (slash == std::string_view::npos) return invalid("missing /prefix");
  Result<Ipv4> ip = ParseIpv4(text.substr(0, slash));
  if (!ip.ok()) return invalid("bad address");
  std::string_view p = text.substr(slash + 1);
  int prefix = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
  if (ec != std::errc() || end != p.data() + p.size() || prefix < 0 || prefix > 32) {
    return invalid("prefix must be 0..32");
  }
  const Ipv4 mask = prefix == 0 ? 0 : ~Ipv4{0} << (32 - prefix);
  if ((*ip & ~mask) != 0) return invalid("host bits set");
  return Cidr{*ip, prefix};
}

Result<Cidr> Subnet(const Cidr& parent, int mask, uint64_t index) {
  if (mask < parent.prefix || mask > 32) {
    return Status::Invalid("cannot split " + parent.ToString() + " into /" + std::to_string(mask));
  }
  const uint64_t count = uint64_t{1} << (mask - parent.prefix);
  if (index >= count) {
    return Status::Invalid(parent.ToString() + " has room for " + std::to_string(count) + " /" +
                           std::to_string(mask) + " blocks, block " + std::to_string(index + 1) +
                           " requested");
  }
  const uint64_t base = parent.base + (index << (32 - mask));
  return Cidr{static_cast<Ipv4>(base), mask};
}

}  // namespace podflow::runtime
