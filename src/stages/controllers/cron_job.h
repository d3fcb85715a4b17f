// The CronJob controller as plain logic (kube-controller-manager's
// cronjob controller, v2): which scheduled time is due, the Job's name for
// it, when to look again, and which finished Jobs the history limits let
// go. The loop (cron_job_loop) reads the objects and acts on these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "model/cron_schedule.h"

namespace podflow::controllers {

// The annotation with the time a CronJob's Job was scheduled for.
inline constexpr char kCronJobScheduledTimestamp[] =
    "batch.kubernetes.io/cronjob-scheduled-timestamp";
// How long after a scheduled time the CronJob is looked at again.
inline constexpr SimDuration kNextScheduleDelta{100};
// More missed times than this are reported (TooManyMissedTimes).
inline constexpr int64_t kTooManyMissed = 100;

// What the schedule says of the times since `earliest`.
struct ScheduleCheck {
  SimTime earliest;  // the last schedule (else creation), or now - startingDeadlineSeconds if later
  std::optional<SimTime>
      most_recent;     // the latest scheduled time not after now; nullopt when none is due
  int64_t missed = 0;  // about how many were due (the most recent among them)
};

// mostRecentScheduleTime: from the last schedule time (or the creation
// time), or, when `starting_deadline_seconds` is given, from no earlier
// than that long before `now`. Invalid ("time difference between two
// schedules is less than 1 second") for a schedule whose next time never
// comes, or, once one is due, whose time after it never comes or comes
// within a second.
Result<ScheduleCheck> MostRecentScheduleTime(const model::CronSchedule& schedule, SimTime created,
                                             std::optional<SimTime> last_schedule,
                                             std::optional<int64_t> starting_deadline_seconds,
                                             SimTime now);

// When to look at the CronJob again (nextScheduleTimeDuration): the next
// scheduled time after the most recent one (without the starting
// deadline), or after `now` when the schedule is invalid, plus
// kNextScheduleDelta.
std::optional<SimTime> NextCheck(const model::CronSchedule& schedule, SimTime created,
                                 std::optional<SimTime> last_schedule, SimTime now);

// The Job a CronJob makes for `scheduled`: NAME-<minutes since the epoch>,
// the same name however often the time is tried.
std::string CronJobName(const std::string& cron_job, SimTime scheduled);

// A finished Job of a CronJob, as the history limits rank them.
struct FinishedJob {
  std::string name;
  std::optional<SimTime> start_time;
};
// removeOldestJobs: the `jobs` beyond the newest `limit`, by start time
// (those without one last, equal ones by name), oldest first.
std::vector<FinishedJob> JobsBeyondLimit(std::vector<FinishedJob> jobs, int32_t limit);

}  // namespace podflow::controllers
