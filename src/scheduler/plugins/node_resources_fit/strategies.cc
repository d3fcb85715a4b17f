// The scoring strategies of NodeResourcesFit, as pure integer functions.
#include <cmath>

#include "scheduler/plugins/node_resources_fit/fit.h"

namespace podflow::scheduler::plugins {

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return ((capacity - requested) * kMaxNodeScore) / capacity;
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Over-committed nodes (possible with the 100m / 200Mi defaults) count as full.
  if (requested > capacity) requested = capacity;
  return (requested * kMaxNodeScore) / capacity;
}

int64_t BrokenLinear(std::span<const UtilizationShapePoint> shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p > shape[i].utilization) continue;
    if (i == 0) return shape[0].score;
    const UtilizationShapePoint& lo = shape[i - 1];
    const UtilizationShapePoint& hi = shape[i];
    return lo.score + (hi.score - lo.score) * (p - lo.utilization) / (hi.utilization - lo.utilization);
  }
  return shape.back().score;
}

namespace {

// Weighted mean (integer division) of per-resource scores.
template <typename PerResource>
int64_t WeightedMean(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                     std::span<const int64_t> weights, PerResource per_resource) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += per_resource(requested[i], allocatable[i]) * weights[i];
    weight_sum += weights[i];
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

// requested * 100 / capacity without overflow: the quotient is at most 100
// when requested <= capacity.
int64_t Utilization(int64_t requested, int64_t capacity) {
  constexpr int64_t kMaxUtilization = 100;
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return kMaxUtilization;
  return static_cast<int64_t>((static_cast<__int128>(requested) * kMaxUtilization) / capacity);
}

}  // namespace

int64_t LeastAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights) {
  return WeightedMean(requested, allocatable, weights, LeastRequestedScore);
}

int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const int64_t> weights) {
  return WeightedMean(requested, allocatable, weights, MostRequestedScore);
}

int64_t RequestedToCapacityRatioScore(std::span<const UtilizationShapePoint> shape,
                                      std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const int64_t> weights) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    const int64_t p = requested[i] > allocatable[i] ? 100 : Utilization(requested[i], allocatable[i]);
    const int64_t score = BrokenLinear(shape, p);
    // A resource scoring 0 carries no weight: it neither pulls the mean
    // down nor counts in the divisor.
    if (score <= 0) continue;
    node_score += score * weights[i];
    weight_sum += weights[i];
  }
  if (weight_sum == 0) return 0;
  // Go's math.Round: half away from zero, as std::llround.
  return std::llround(static_cast<double>(node_score) / static_cast<double>(weight_sum));
}

}  // namespace podflow::scheduler::plugins
