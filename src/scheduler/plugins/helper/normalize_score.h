// Score normalization shared by plugins (kubernetes plugins/helper
// DefaultNormalizeScore).
#pragma once

#include <cstdint>
#include <span>

namespace podflow::scheduler::plugins::helper {

// Rescales scores to 0..max_priority by the highest one: score * max /
// highest (integer division); with `reverse`, max - that. When the highest
// score is 0 (or below), every score becomes max_priority with `reverse`
// and stays as it is without.
inline void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<int64_t> scores) {
  int64_t max_count = 0;
  for (int64_t s : scores) {
    if (s > max_count) max_count = s;
  }
  if (max_count == 0) {
    if (reverse) {
      for (int64_t& s : scores) s = max_priority;
    }
    return;
  }
  for (int64_t& s : scores) {
    s = max_priority * s / max_count;
    if (reverse) s = max_priority - s;
  }
}

}  // namespace podflow::scheduler::plugins::helper
