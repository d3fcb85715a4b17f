#include "stages/proxy/rules/chain_names.h"

#include <openssl/evp.h>

#include <array>

namespace podflow::proxy::rules {
namespace {

// The first 16 base32 characters of the SHA-256 of `text` (16 characters
// take 80 bits: the first 10 bytes of the digest).
std::string HashPrefix(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  out.reserve(16);
  uint64_t bits = 0;
  int held = 0;
  for (size_t i = 0; out.size() < 16; ++i) {
    bits = (bits << 8) | digest[i];
    held += 8;
    while (held >= 5 && out.size() < 16) {
      out += kAlphabet[(bits >> (held - 5)) & 31];
      held -= 5;
    }
  }
  return out;
}

}  // namespace

std::string ServicePortName(std::string_view namespace_, std::string_view service, std::string_view port_name) {
  std::string out = std::string(namespace_) + "/" + std::string(service);
  if (!port_name.empty()) out += ":" + std::string(port_name);
  return out;
}

std::string PortProtoHash(std::string_view service_port_name, std::string_view protocol) {
  return HashPrefix(std::string(service_port_name) + std::string(protocol));
}

std::string EndpointChain(std::string_view service_port_name, std::string_view protocol, std::string_view ip_port) {
  return "KUBE-SEP-" + HashPrefix(std::string(service_port_name) + std::string(protocol) + std::string(ip_port));
}

}  // namespace podflow::proxy::rules
