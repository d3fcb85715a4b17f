#include "base/hex_id.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

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

std::string NewUuid(std::mt19937_64& rng) {
  uint64_t hi = rng();
  uint64_t lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::string GenerateName(std::string_view prefix, std::mt19937_64& rng) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  // names.SimpleNameGenerator keeps the whole name within 63 characters.
  std::string out(prefix.substr(0, std::min<size_t>(prefix.size(), 58)));
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  for (int i = 0; i < 5; ++i) out += kAlphabet[pick(rng)];
  return out;
}

}  // namespace podflow
