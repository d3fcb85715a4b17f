// SchedulerMetrics: what the runner measures of its cycles, after
// kube-scheduler's scheduling metrics:
//  - attempts by result and their duration (schedule_attempts_total,
//    scheduling_attempt_duration_seconds);
//  - each extension point's duration, every cycle
//    (framework_extension_point_duration_seconds);
//  - each plugin's duration at each point, on one cycle out of
//    kPluginSampleEvery (kube-scheduler samples plugin_execution_duration_
//    seconds on 10% of cycles; podflow's plugins take tens of nanoseconds a
//    node, so timing each call costs as much as the call, and 1% keeps that
//    off the benchmark's figures while still giving a sample a second).
// The scheduling stage logs a summary now and then; podflow-bench scheduler
// prints where a cycle's time goes.
//
// Thread safety: none; one owner, as the cache it measures.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace podflow::scheduler {

enum class ExtensionPoint { kPreFilter, kFilter, kPostFilter, kPreScore, kScore };
inline constexpr size_t kNumExtensionPoints = 5;
std::string_view ExtensionPointName(ExtensionPoint point);

enum class AttemptResult { kScheduled, kUnschedulable, kError };
inline constexpr size_t kNumAttemptResults = 3;
std::string_view AttemptResultName(AttemptResult result);

struct Timing {
  uint64_t count = 0;
  double total_us = 0;
  double max_us = 0;

  void Add(double us) {
    ++count;
    total_us += us;
    if (us > max_us) max_us = us;
  }
  double MeanUs() const { return count > 0 ? total_us / static_cast<double>(count) : 0; }
};

class SchedulerMetrics {
 public:
  static constexpr uint64_t kPluginSampleEvery = 100;

  // Whether the cycle about to run times each plugin (every
  // kPluginSampleEvery-th call, the first included).
  bool SamplePlugins() { return samples_++ % kPluginSampleEvery == 0; }

  void AddAttempt(AttemptResult result, double us) {
    ++attempts_[static_cast<size_t>(result)];
    attempt_duration_.Add(us);
  }
  void AddPoint(ExtensionPoint point, double us) { points_[static_cast<size_t>(point)].Add(us); }
  // One plugin's time at one point over one sampled cycle.
  void AddPlugin(std::string_view plugin, ExtensionPoint point, double us);

  uint64_t attempts(AttemptResult result) const { return attempts_[static_cast<size_t>(result)]; }
  uint64_t total_attempts() const { return attempt_duration_.count; }
  const Timing& attempt_duration() const { return attempt_duration_; }
  const Timing& point(ExtensionPoint point) const { return points_[static_cast<size_t>(point)]; }
  // Keyed "<plugin>/<point>", e.g. "NodeResourcesFit/Filter"; sampled cycles only.
  const std::map<std::string, Timing, std::less<>>& plugins() const { return plugins_; }

  // "120 attempts (118 scheduled, 2 unschedulable, 0 error), 35.2 us mean,
  // 410.0 us max; per cycle: PreFilter 2.1 us, Filter 20.3 us, ...; slowest
  // plugins (sampled): NodeResourcesFit/Filter 8.2 us, ..." (at most
  // `top_plugins` plugins).
  std::string Summary(size_t top_plugins = 3) const;
  void Reset() { *this = SchedulerMetrics(); }

 private:
  uint64_t samples_ = 0;
  std::array<uint64_t, kNumAttemptResults> attempts_{};
  Timing attempt_duration_;
  std::array<Timing, kNumExtensionPoints> points_{};
  std::map<std::string, Timing, std::less<>> plugins_;
};

}  // namespace podflow::scheduler
