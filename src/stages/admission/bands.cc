// kube-apiserver's two bands for values it hands out (Service node ports,
// KEP-3668; Service cluster IPs, KEP-3070).
#include "stages/admission/admission.h"

namespace podflow::admission {

std::optional<uint64_t> PickInBands(uint64_t size, uint64_t lower_band, std::mt19937_64& rng,
                                    const std::function<bool(uint64_t offset)>& taken) {
  lower_band = std::min(lower_band, size);
  const auto scan = [&](uint64_t first, uint64_t count) -> std::optional<uint64_t> {
    if (count == 0) return std::nullopt;
    const uint64_t start = rng() % count;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t offset = first + (start + i) % count;
      if (!taken(offset)) return offset;
    }
    return std::nullopt;
  };
  if (std::optional<uint64_t> upper = scan(lower_band, size - lower_band)) return upper;
  return scan(0, lower_band);
}

}  // namespace podflow::admission
