#include "model/cron_schedule.h"

#include <catch2/catch.hpp>

namespace podflow::model {
namespace {

// A UTC time written as RFC 3339.
SimTime At(const char* text) {
  std::optional<std::chrono::system_clock::time_point> t = ParseRfc3339(text);
  REQUIRE(t.has_value());
  return std::chrono::floor<SimDuration>(*t);
}

std::string NextOf(const char* schedule, const char* after) {
  Result<CronSchedule> parsed = CronSchedule::Parse(schedule);
  REQUIRE(parsed.ok());
  std::optional<SimTime> next = parsed->Next(At(after));
  return next ? FormatRfc3339(*next) : "never";
}

TEST_CASE("a cron schedule's next time, field by field as robfig/cron runs it") {
  CHECK(NextOf("* * * * *", "2026-03-01T10:00:00Z") == "2026-03-01T10:01:00Z");  // strictly after
  CHECK(NextOf("* * * * *", "2026-03-01T10:00:30Z") == "2026-03-01T10:01:00Z");
  CHECK(NextOf("*/15 * * * *", "2026-03-01T10:14:59Z") == "2026-03-01T10:15:00Z");
  CHECK(NextOf("5/20 * * * *", "2026-03-01T10:26:00Z") == "2026-03-01T10:45:00Z");  // 5, 25, 45
  CHECK(NextOf("0 9-17/4 * * *", "2026-03-01T13:00:00Z") == "2026-03-01T17:00:00Z");
  CHECK(NextOf("0 0 1 * *", "2026-03-15T00:00:00Z") == "2026-04-01T00:00:00Z");
  CHECK(NextOf("30 8 * * mon-fri", "2026-03-06T09:00:00Z") ==
        "2026-03-09T08:30:00Z");  // Friday after: Monday
  CHECK(NextOf("0 0 * DEC *", "2026-03-01T00:00:00Z") == "2026-12-01T00:00:00Z");
  CHECK(NextOf("0 0 29 2 *", "2026-03-01T00:00:00Z") ==
        "2028-02-29T00:00:00Z");  // the next leap year
  CHECK(NextOf("0 0 31 2 *", "2026-03-01T00:00:00Z") == "never");
  // Day of month and day of week both restricted: either matches.
  CHECK(NextOf("0 0 13 * 5", "2026-03-01T00:00:00Z") ==
        "2026-03-06T00:00:00Z");  // a Friday before the 13th
  // One of them `*`: both must (the star matches every day).
  CHECK(NextOf("0 0 * * 5", "2026-03-01T00:00:00Z") == "2026-03-06T00:00:00Z");
  // A stepped star is no star: either matches (an odd day, or a Friday).
  CHECK(NextOf("0 0 */2 * 5", "2026-03-01T00:00:00Z") == "2026-03-03T00:00:00Z");
  CHECK(NextOf("0 0 */1 * 5", "2026-03-01T00:00:00Z") == "2026-03-06T00:00:00Z");
  // Across the year.
  CHECK(NextOf("59 23 31 12 *", "2026-12-31T23:59:00Z") == "2027-12-31T23:59:00Z");
  // Descriptors.
  CHECK(NextOf("@hourly", "2026-03-01T10:00:00Z") == "2026-03-01T11:00:00Z");
  CHECK(NextOf("@daily", "2026-03-01T10:00:00Z") == "2026-03-02T00:00:00Z");
  CHECK(NextOf("@weekly", "2026-03-02T10:00:00Z") == "2026-03-08T00:00:00Z");  // Sunday
  CHECK(NextOf("@monthly", "2026-03-02T10:00:00Z") == "2026-04-01T00:00:00Z");
  CHECK(NextOf("@yearly", "2026-03-02T10:00:00Z") == "2027-01-01T00:00:00Z");
  CHECK(NextOf("@every 90s", "2026-03-01T10:00:00.700Z") == "2026-03-01T10:01:30Z");
  CHECK(NextOf("@every 500ms", "2026-03-01T10:00:00Z") ==
        "2026-03-01T10:00:01Z");  // at least a second
}

TEST_CASE("a cron schedule that does not parse says why, in robfig/cron's words") {
  auto error = [](const char* text) {
    Result<CronSchedule> parsed = CronSchedule::Parse(text);
    REQUIRE_FALSE(parsed.ok());
    return parsed.status().message();
  };
  CHECK(error("* * * *") == "expected exactly 5 fields, found 4: [* * * *]");
  CHECK(error("0-60 * * * *") == "end of range (60) above maximum (59): 0-60");
  CHECK(error("* * 0 * *") == "beginning of range (0) below minimum (1): 0");
  CHECK(error("5-1 * * * *") == "beginning of range (5) beyond end of range (1): 5-1");
  CHECK(error("*/0 * * * *") == "step of range should be a positive number: */0");
  CHECK(error("x * * * *") ==
        "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax");
  CHECK(error("@fortnightly") == "unrecognized descriptor: @fortnightly");
  CHECK(error("@every 5x") == "failed to parse duration @every 5x: time: invalid duration \"5x\"");
}

}  // namespace
}  // namespace podflow::model
