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
  const Status never =
      Status::Invalid("time difference between two schedules is less than 1 second");
  if (!t1) return never;  // a schedule that never comes
  if (now < *t1) return out;
  const std::optional<SimTime> t2 = schedule.Next(*t1);
  if (!t2) return never;
  if (now < *t2) {
    out.most_recent = t1;
    out.missed = 1;
    return out;
  }
  const int64_t between = std::chrono::round<std::chrono::seconds>(*t2 - *t1).count();
  if (between < 1) return never;
  // About how many fit between the first and now (an even spacing
  // assumed); the times themselves are walked from one spacing before the
  // estimate, so that an uneven schedule gives only times it names.
  const int64_t elapsed = std::chrono::floor<std::chrono::seconds>(now - *t1).count();
  out.missed = elapsed / between + 1;
  const SimTime from = *t1 + std::chrono::seconds((out.missed - 2) * between);
  for (std::optional<SimTime> t = schedule.Next(from); t && *t <= now; t = schedule.Next(*t))
    out.most_recent = *t;
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
