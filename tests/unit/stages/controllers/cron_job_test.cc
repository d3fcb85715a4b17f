#include "stages/controllers/cron_job.h"

#include <catch2/catch.hpp>

namespace podflow::controllers {
namespace {

SimTime At(const char* text) {
  std::optional<std::chrono::system_clock::time_point> t = ParseRfc3339(text);
  REQUIRE(t.has_value());
  return std::chrono::floor<SimDuration>(*t);
}

model::CronSchedule Schedule(const char* text) {
  Result<model::CronSchedule> parsed = model::CronSchedule::Parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

TEST_CASE(
    "the scheduled time due: the most recent since the last one, none before the first comes") {
  const model::CronSchedule every_minute = Schedule("* * * * *");
  const SimTime created = At("2026-03-01T10:00:20Z");
  // Not yet a minute boundary since creation.
  Result<ScheduleCheck> check = MostRecentScheduleTime(every_minute, created, std::nullopt,
                                                       std::nullopt, At("2026-03-01T10:00:59Z"));
  REQUIRE(check.ok());
  CHECK_FALSE(check->most_recent.has_value());
  // One due.
  check = MostRecentScheduleTime(every_minute, created, std::nullopt, std::nullopt,
                                 At("2026-03-01T10:01:05Z"));
  REQUIRE(check.ok());
  CHECK(FormatRfc3339(*check->most_recent) == "2026-03-01T10:01:00Z");
  CHECK(check->missed == 1);
  // Several missed: the latest, and how many.
  check = MostRecentScheduleTime(every_minute, created, std::nullopt, std::nullopt,
                                 At("2026-03-01T10:05:30Z"));
  REQUIRE(check.ok());
  CHECK(FormatRfc3339(*check->most_recent) == "2026-03-01T10:05:00Z");
  CHECK(check->missed == 5);
  // From the last schedule time: the one already made is not due again.
  check = MostRecentScheduleTime(every_minute, created, At("2026-03-01T10:05:00Z"), std::nullopt,
                                 At("2026-03-01T10:05:30Z"));
  REQUIRE(check.ok());
  CHECK_FALSE(check->most_recent.has_value());
  // A starting deadline: nothing older than it counts.
  check =
      MostRecentScheduleTime(every_minute, created, std::nullopt, 20, At("2026-03-01T10:05:15Z"));
  REQUIRE(check.ok());
  CHECK(FormatRfc3339(*check->most_recent) == "2026-03-01T10:05:00Z");
  CHECK(check->missed == 1);
  check =
      MostRecentScheduleTime(every_minute, created, std::nullopt, 20, At("2026-03-01T10:05:30Z"));
  REQUIRE(check.ok());
  CHECK_FALSE(check->most_recent.has_value());  // 10:05 is more than 20 s ago
  // An irregular schedule: the estimate is walked to the true latest.
  const model::CronSchedule uneven = Schedule("0,50 * * * *");
  check = MostRecentScheduleTime(uneven, At("2026-03-01T09:59:00Z"), std::nullopt, std::nullopt,
                                 At("2026-03-01T12:55:00Z"));
  REQUIRE(check.ok());
  CHECK(FormatRfc3339(*check->most_recent) == "2026-03-01T12:50:00Z");
}

TEST_CASE("a schedule that never comes is refused as kube-controller-manager refuses it") {
  const model::CronSchedule never = Schedule("0 0 31 2 *");
  Result<ScheduleCheck> check = MostRecentScheduleTime(
      never, At("2026-03-01T00:00:00Z"), std::nullopt, std::nullopt, At("2026-03-02T00:00:00Z"));
  REQUIRE_FALSE(check.ok());
  CHECK(check.status().message() == "time difference between two schedules is less than 1 second");
}

TEST_CASE("an uneven schedule with several missed gives a time it names, not the estimate") {
  // */25: 10:25, 10:50, 11:00, 11:25 ... the even estimate from 10:25 lands on 11:15.
  const model::CronSchedule uneven = Schedule("*/25 * * * *");
  Result<ScheduleCheck> check =
      MostRecentScheduleTime(uneven, At("2026-03-01T09:59:00Z"), At("2026-03-01T10:00:00Z"),
                             std::nullopt, At("2026-03-01T11:20:00Z"));
  REQUIRE(check.ok());
  CHECK(FormatRfc3339(*check->most_recent) == "2026-03-01T11:00:00Z");
}

TEST_CASE("when to look again: the next scheduled time after the most recent, plus 100 ms") {
  const model::CronSchedule every_minute = Schedule("* * * * *");
  const SimTime created = At("2026-03-01T10:00:20Z");
  CHECK(FormatRfc3339Micro(
            *NextCheck(every_minute, created, std::nullopt, At("2026-03-01T10:00:30Z"))) ==
        "2026-03-01T10:01:00.100000Z");
  CHECK(FormatRfc3339Micro(*NextCheck(every_minute, created, At("2026-03-01T10:03:00Z"),
                                      At("2026-03-01T10:03:10Z"))) ==
        "2026-03-01T10:04:00.100000Z");
}

TEST_CASE("a CronJob's Job is named after the scheduled minute") {
  CHECK(CronJobName("hello", At("2026-03-01T10:01:00Z")) == "hello-29539321");
  CHECK(CronJobName("hello", At("2026-03-01T10:01:59Z")) == "hello-29539321");
}

TEST_CASE("the history limits let the oldest finished Jobs go, those never started last") {
  std::vector<FinishedJob> jobs{{"c", At("2026-03-01T10:03:00Z")},
                                {"a", At("2026-03-01T10:01:00Z")},
                                {"never", std::nullopt},
                                {"b", At("2026-03-01T10:02:00Z")}};
  std::vector<FinishedJob> gone = JobsBeyondLimit(jobs, 2);
  REQUIRE(gone.size() == 2);
  CHECK(gone[0].name == "a");
  CHECK(gone[1].name == "b");
  CHECK(JobsBeyondLimit(jobs, 4).empty());
  CHECK(JobsBeyondLimit(jobs, 0).size() == 4);
}

}  // namespace
}  // namespace podflow::controllers
