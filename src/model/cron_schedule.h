// A CronJob's schedule as kube-apiserver validates it and the CronJob
// controller runs it (robfig/cron v3's standard parser): five fields
// (minute, hour, day of month, month, day of week; `*`, `?`, N, N-M, N/S,
// N-M/S, `*/S`, comma lists, month and weekday names), or a descriptor
// (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly,
// @every DURATION). Times are UTC.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"

namespace podflow::model {

class CronSchedule {
 public:
  // Invalid with robfig/cron's message ("expected exactly 5 fields, found
  // 4: [...]", "end of range (60) above maximum (59): 0-60", ...).
  static Result<CronSchedule> Parse(std::string_view text);

  // The first time strictly after `t` (whole seconds) that the schedule
  // names; nullopt when none comes within five years (`0 0 31 2 *`).
  std::optional<SimTime> Next(SimTime t) const;

 private:
  CronSchedule() = default;

  // Bit N set: value N matches. The star bit: the field was `*` or `?`
  // without a step above 1 (then a day matches on day of month AND day of
  // week, else on either).
  static constexpr uint64_t kStar = uint64_t{1} << 63;
  uint64_t minute_ = 0, hour_ = 0, dom_ = 0, month_ = 0, dow_ = 0;
  std::optional<SimDuration> every_;  // @every: a constant delay, whole seconds, at least 1 s
};

}  // namespace podflow::model
