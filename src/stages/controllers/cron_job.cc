#include "stages/controllers/cron_job.h"

#include <algorithm>
#include <chrono>

namespace podflow::controllers {

Result<ScheduleCheck> MostRecentScheduleTime(const model::CronSchedule& schedule, SimTime created,
                                             std::optional<SimTime> last_schedule,
                                             std::optional<int64_t> starting_deadline_seconds,
                                             SimTime now) {
  ScheduleCheck out;
  out.earliest = last_schedule.value_or(created);
  if (starting_deadline_seconds) {
    // Nothing before the deadline is scheduled any more.
    const SimTime deadline = now - std::chrono::seconds(*starting_deadline_seconds);
    if (deadline > out.earliest) out.earliest = deadline;
  }
  const std::optional<SimTime> t1 = schedule.Next(out.earliest);
  const std::optional<SimTime> t2 = t1 ? schedule.Next(*t1) : std::nullopt;
  if (!t1 || now < *t1) return out;
  if (!t2 || now < *t2) {
    out.most_recent = t1;
    out.missed = 1;
    return out;
  }
  const int64_t between = std::chrono::round<std::chrono::seconds>(*t2 - *t1).count();
  if (between < 1)
    return Status::Invalid("time difference between two schedules is less than 1 second");
  // About how many fit between the first and now (an even spacing
  // assumed), then walked forward to the true most recent one.
  const int64_t elapsed = std::chrono::floor<std::chrono::seconds>(now - *t1).count();
  out.missed = elapsed / between + 1;
  SimTime most_recent = *t1 + std::chrono::seconds((out.missed - 1) * between);
  for (std::optional<SimTime> t = schedule.Next(most_recent); t && *t <= now; t = schedule.Next(*t))
    most_recent = *t;
  out.most_recent = most_recent;
  return out;
}

std::optional<SimTime> NextCheck(const model::CronSchedule& schedule, SimTime created,
                                 std::optional<SimTime> last_schedule, SimTime now) {
  Result<ScheduleCheck> check =
      MostRecentScheduleTime(schedule, created, last_schedule, std::nullopt, now);
  const SimTime from = !check.ok() ? now : check->most_recent.value_or(check->earliest);
  const std::optional<SimTime> next = schedule.Next(from);
  if (!next) return std::nullopt;
  return *next + kNextScheduleDelta;
}

std::string CronJobName(const std::string& cron_job, SimTime scheduled) {
  return cron_job + "-" +
         std::to_string(
             std::chrono::floor<std::chrono::minutes>(scheduled).time_since_epoch().count());
}

std::vector<FinishedJob> JobsBeyondLimit(std::vector<FinishedJob> jobs, int32_t limit) {
  if (limit < 0 || jobs.size() <= static_cast<size_t>(limit)) return {};
  std::ranges::sort(jobs, [](const FinishedJob& a, const FinishedJob& b) {
    if (a.start_time.has_value() != b.start_time.has_value()) return a.start_time.has_value();
    if (a.start_time != b.start_time) return *a.start_time < *b.start_time;
    return a.name < b.name;
  });
  jobs.resize(jobs.size() - static_cast<size_t>(limit));
  return jobs;
}

}  // namespace podflow::controllers
