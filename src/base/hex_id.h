// Deterministic identifiers: image digests and container ids that look like
// the real thing ("sha256:<64 hex>") and are a pure function of a seed, so a
// replayed run produces the same ids.
#pragma once

#include <string>
#include <string_view>

namespace podflow {

// `chars` lowercase hex digits derived from `seed` (FNV-1a, mixed). Not a
// cryptographic hash: only stable and well spread.
std::string DeterministicHex(std::string_view seed, size_t chars = 64);

}  // namespace podflow
