#include "base/hex_id.h"

#include <cstdint>

namespace podflow {
namespace {

uint64_t Fnv1a(std::string_view s, uint64_t salt) {
  uint64_t h = 1469598103934665603ULL ^ (salt * 0x9E3779B97F4A7C15ULL);
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// splitmix64 finalizer: spreads FNV's weak low bits.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::string DeterministicHex(std::string_view seed, size_t chars) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(chars + 16);
  for (uint64_t block = 0; out.size() < chars; ++block) {
    uint64_t v = Mix(Fnv1a(seed, block));
    for (int i = 0; i < 16; ++i, v >>= 4) out.push_back(kDigits[v & 0xF]);
  }
  out.resize(chars);
  return out;
}

}  // namespace podflow
