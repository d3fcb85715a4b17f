// Deterministic identifiers: image digests and container ids that look like
// the real thing ("sha256:<64 hex>") and are a pure function of a seed, so a
// replayed run produces the same ids.
#pragma once

#include <random>
#include <string>
#include <string_view>

namespace podflow {

// `chars` lowercase hex digits derived from `seed` (FNV-1a, mixed). Not a
// cryptographic hash: only stable and well spread.
std::string DeterministicHex(std::string_view seed, size_t chars = 64);

// A UUIDv4 from `rng`, lower-case 8-4-4-4-12: an object's metadata.uid.
std::string NewUuid(std::mt19937_64& rng);
// `prefix` (a generateName, cut to 58 characters) + 5 characters of
// "bcdfghjklmnpqrstvwxz2456789", as the API server's name generator.
std::string GenerateName(std::string_view prefix, std::mt19937_64& rng);

}  // namespace podflow
