// The Job controller as plain logic (kube-controller-manager's job): what
// it reads of a Job, which of its pods are counted as succeeded or failed
// and when (the batch.kubernetes.io/job-tracking finalizer and
// status.uncountedTerminatedPods, so that a pod is counted exactly once
// across restarts), when the Job has failed (backoffLimit,
// activeDeadlineSeconds) or met its completions, how many pods it wants
// running and with which completion indexes, and the back-off before
// failed pods are replaced. Time is passed in; the stage's loop (job_loop)
// reads and writes the objects.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "stages/controllers/pod_record.h"

namespace podflow::controllers {

// The finalizer that keeps a Job's pod until the Job has counted it.
inline constexpr char kJobTrackingFinalizer[] = "batch.kubernetes.io/job-tracking";

// A Job's condition: its type and why.
struct JobConditionView {
  std::string type;  // "SuccessCriteriaMet", "Complete", "FailureTarget", "Failed"
  std::string reason, message;
  friend bool operator==(const JobConditionView&, const JobConditionView&) = default;
};

// What the controller reads of a Job.
struct JobRecord {
  std::string namespace_, name, uid;
  bool deleting = false;
  bool suspended = false;
  bool indexed = false;  // completionMode Indexed
  std::optional<int32_t> completions;
  int32_t parallelism = 1;
  int32_t backoff_limit = 6;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> ttl_seconds_after_finished;
  bool restart_on_failure = false;  // the template's restartPolicy is OnFailure
  bool replace_terminating = true;  // podReplacementPolicy TerminatingOrFailed (else Failed)
  // Its status.
  std::optional<SimTime> start_time;
  int32_t succeeded = 0, failed = 0;
  std::set<std::string> uncounted_succeeded, uncounted_failed;  // pod uids
  std::set<int32_t> completed_indexes;
  std::optional<JobConditionView> target;    // SuccessCriteriaMet or FailureTarget, True
  std::optional<JobConditionView> finished;  // Complete or Failed, True
  std::optional<SimTime> finished_at;        // that condition's lastTransitionTime
};

// A pod of the Job, as the accounting sees it.
bool IsTracked(const PodRecord& pod);
// Counted as failed: Failed, or deleted before it succeeded (a pod gone
// before it could end) unless only Failed pods are replaced.
bool CountsAsFailed(const PodRecord& pod, const JobRecord& job);

// One round of the finalizer protocol over the Job's `pods`:
// - newly_succeeded / newly_failed: tracked pods that ended (or, failed,
//   were deleted), not yet in uncountedTerminatedPods — added to it now;
//   once the Job has a target condition every tracked pod that did not
//   succeed is taken as failed (a Job being deleted lets go of its running
//   pods uncounted);
// - counted_succeeded / counted_failed: uids in uncountedTerminatedPods
//   whose pods no longer carry the finalizer (or are gone) — moved to the
//   counters now;
// - release: the tracked pods in uncountedTerminatedPods (after this
//   round's additions), whose finalizer is to be removed once the status
//   naming them is written.
struct JobAccounting {
  std::vector<std::string> newly_succeeded, newly_failed;
  std::vector<std::string> counted_succeeded, counted_failed;
  std::vector<const PodRecord*> release;
};
JobAccounting Account(const JobRecord& job, const std::vector<const PodRecord*>& pods);

// Whether the Job has failed its backoff limit: restartPolicy Never, more
// pods failed than backoffLimit; OnFailure, its active pods' restarts
// reach it (or any, with a limit of 0).
bool PastBackoffLimit(const JobRecord& job, int32_t failed, const std::vector<const PodRecord*>& active);
// When its activeDeadlineSeconds runs out (from startTime); nullopt: never.
std::optional<SimTime> DeadlineAt(const JobRecord& job);
// Whether it has met its completions: Indexed, as many indexes succeeded;
// NonIndexed, as many pods succeeded, or without completions any one once
// none is active.
bool CompletionsReached(const JobRecord& job, int32_t succeeded, size_t completed_indexes, size_t active);

// How many pods a NonIndexed Job wants active: without completions,
// parallelism until one succeeds, then what still runs; with them, the
// completions left, at most parallelism.
int32_t WantActive(const JobRecord& job, int32_t succeeded, int32_t active);
// The completion indexes an Indexed Job creates pods for next: the lowest
// not completed and not running, up to parallelism less those running.
std::vector<int32_t> IndexesToCreate(const JobRecord& job, const std::set<int32_t>& completed,
                                     const std::set<int32_t>& running);

// The delay before a failed pod is replaced: 10 s after the latest
// failure, doubling with each failure since the last success, at most
// 10 minutes; zero without failures.
SimDuration FailureBackoff(int failures);

// status.completedIndexes: "1,3-5,7" (runs of three or more as ranges).
std::string FormatIndexes(const std::set<int32_t>& indexes);
// Its reverse, keeping only indexes below `completions`; Invalid naming
// what does not parse.
Result<std::set<int32_t>> ParseIndexes(std::string_view text, int32_t completions);

}  // namespace podflow::controllers
