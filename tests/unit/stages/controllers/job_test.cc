// The Job controller's logic: the finalizer protocol's accounting, the
// backoff limit, the deadline, completions, how many pods it wants and
// with which indexes, the failure back-off and completedIndexes' format.
#include <catch2/catch.hpp>

#include "stages/controllers/job.h"

namespace podflow::controllers {
namespace {

using List = std::vector<std::string>;

const SimTime kNow = FromUnixMillis(1'767'000'000'000);

PodRecord Pod(std::string uid, api::PodPhase phase, bool tracked = true, bool deleting = false) {
  PodRecord pod;
  pod.uid = uid;
  pod.name = "pi-" + uid;
  pod.key = "/registry/pods/default/" + pod.name;
  pod.phase = phase;
  pod.deleting = deleting;
  if (tracked) pod.finalizers = {kJobTrackingFinalizer};
  return pod;
}

List Uids(const std::vector<const PodRecord*>& pods) {
  List out;
  for (const PodRecord* pod : pods) out.push_back(pod->uid);
  return out;
}

TEST_CASE("A Job's ended pods are counted once: uncounted first, then released, then in the counters") {
  JobRecord job;
  const PodRecord ok = Pod("a", api::PodPhase::Succeeded);
  const PodRecord bad = Pod("b", api::PodPhase::Failed);
  const PodRecord running = Pod("c", api::PodPhase::Running);
  const PodRecord deleted = Pod("d", api::PodPhase::Running, true, true);
  const PodRecord counted = Pod("e", api::PodPhase::Succeeded, false);
  JobAccounting a = Account(job, {&ok, &bad, &running, &deleted, &counted});
  CHECK(a.newly_succeeded == List{"a"});
  // A pod deleted before it ended is a failure (podReplacementPolicy
  // TerminatingOrFailed) ...
  CHECK(a.newly_failed == List{"b", "d"});
  CHECK(Uids(a.release) == List{"a", "b", "d"});
  CHECK(a.counted_succeeded.empty());
  // ... but only once Failed when only failed pods are replaced.
  job.replace_terminating = false;
  CHECK(Account(job, {&deleted}).newly_failed.empty());
  job.replace_terminating = true;

  // Written as uncounted: released again until the finalizer is gone, then counted.
  job.uncounted_succeeded = {"a"};
  job.uncounted_failed = {"b", "gone"};
  a = Account(job, {&ok, &bad});
  CHECK(a.newly_succeeded.empty());
  CHECK(a.newly_failed.empty());
  CHECK(Uids(a.release) == List{"a", "b"});
  CHECK(a.counted_failed == List{"gone"});
  const PodRecord ok_released = Pod("a", api::PodPhase::Succeeded, false);
  a = Account(job, {&ok_released, &bad});
  CHECK(a.counted_succeeded == List{"a"});
  CHECK(Uids(a.release) == List{"b"});

  // A decided Job lets every pod go; those that did not succeed are failures.
  JobRecord decided;
  decided.target = JobConditionView{"FailureTarget", "BackoffLimitExceeded", ""};
  a = Account(decided, {&running, &ok});
  CHECK(a.newly_failed == List{"c"});
  CHECK(a.newly_succeeded == List{"a"});
  // A Job being deleted lets its running pods go, uncounted.
  JobRecord deleted_job;
  deleted_job.deleting = true;
  a = Account(deleted_job, {&running});
  CHECK(a.newly_failed.empty());
  CHECK(Uids(a.release) == List{"c"});
}

TEST_CASE("The backoff limit: more failed pods than it, or with OnFailure as many restarts") {
  JobRecord job;
  job.backoff_limit = 4;
  CHECK_FALSE(PastBackoffLimit(job, 4, {}));
  CHECK(PastBackoffLimit(job, 5, {}));
  job.restart_on_failure = true;
  PodRecord restarting = Pod("a", api::PodPhase::Running);
  restarting.restart_total = 3;
  CHECK_FALSE(PastBackoffLimit(job, 0, {&restarting}));
  restarting.restart_total = 4;
  CHECK(PastBackoffLimit(job, 0, {&restarting}));
  job.backoff_limit = 0;
  restarting.restart_total = 1;
  CHECK(PastBackoffLimit(job, 0, {&restarting}));
  restarting.restart_total = 0;
  CHECK_FALSE(PastBackoffLimit(job, 0, {&restarting}));
}

TEST_CASE("activeDeadlineSeconds counts from the start time, never while suspended") {
  JobRecord job;
  CHECK_FALSE(DeadlineAt(job).has_value());
  job.active_deadline_seconds = 100;
  CHECK_FALSE(DeadlineAt(job).has_value());
  job.start_time = kNow;
  CHECK(DeadlineAt(job) == kNow + std::chrono::seconds(100));
  job.suspended = true;
  CHECK_FALSE(DeadlineAt(job).has_value());
}

TEST_CASE("Completions: as many succeeded, any one once none runs, or every index") {
  JobRecord job;
  job.completions = 3;
  CHECK_FALSE(CompletionsReached(job, 2, 0, 1));
  CHECK(CompletionsReached(job, 3, 0, 0));
  job.completions.reset();
  CHECK_FALSE(CompletionsReached(job, 1, 0, 1));
  CHECK(CompletionsReached(job, 1, 0, 0));
  CHECK_FALSE(CompletionsReached(job, 0, 0, 0));
  job.indexed = true;
  job.completions = 3;
  CHECK_FALSE(CompletionsReached(job, 5, 2, 0));
  CHECK(CompletionsReached(job, 3, 3, 1));
}

TEST_CASE("How many pods a Job runs: the completions left, at most parallelism; lowest free indexes first") {
  JobRecord job;
  job.parallelism = 2;
  job.completions = 5;
  CHECK(WantActive(job, 0, 0) == 2);
  CHECK(WantActive(job, 4, 2) == 1);
  CHECK(WantActive(job, 6, 0) == 0);
  job.completions.reset();
  job.parallelism = 3;
  CHECK(WantActive(job, 0, 1) == 3);
  CHECK(WantActive(job, 1, 2) == 2);  // one succeeded: what runs finishes, nothing new

  JobRecord indexed;
  indexed.indexed = true;
  indexed.completions = 5;
  indexed.parallelism = 2;
  CHECK(IndexesToCreate(indexed, {}, {}) == std::vector<int32_t>{0, 1});
  CHECK(IndexesToCreate(indexed, {0}, {1}) == std::vector<int32_t>{2});
  CHECK(IndexesToCreate(indexed, {0, 1, 2, 3}, {4}).empty());
  CHECK(IndexesToCreate(indexed, {0, 2, 3}, {}) == std::vector<int32_t>{1, 4});
}

TEST_CASE("Failed pods are replaced after 10 s doubling per failure, at most 10 minutes") {
  CHECK(FailureBackoff(0) == SimDuration(0));
  CHECK(FailureBackoff(1) == std::chrono::seconds(10));
  CHECK(FailureBackoff(2) == std::chrono::seconds(20));
  CHECK(FailureBackoff(3) == std::chrono::seconds(40));
  CHECK(FailureBackoff(7) == std::chrono::seconds(600));
  CHECK(FailureBackoff(100) == std::chrono::seconds(600));
}

TEST_CASE("completedIndexes: runs of three or more as ranges, and back") {
  CHECK(FormatIndexes({}) == "");
  CHECK(FormatIndexes({4}) == "4");
  CHECK(FormatIndexes({1, 2}) == "1,2");
  CHECK(FormatIndexes({1, 3, 4, 5, 7}) == "1,3-5,7");
  CHECK(FormatIndexes({0, 1, 2, 3, 8, 9}) == "0-3,8,9");
  Result<std::set<int32_t>> parsed = ParseIndexes("1,3-5,7", 10);
  REQUIRE(parsed.ok());
  CHECK(*parsed == std::set<int32_t>{1, 3, 4, 5, 7});
  // Beyond completions: dropped.
  CHECK(*ParseIndexes("0-3,8,9", 3) == std::set<int32_t>{0, 1, 2});
  CHECK(ParseIndexes("", 3)->empty());
  CHECK_FALSE(ParseIndexes("5-3", 10).ok());
  CHECK_FALSE(ParseIndexes("1,,2", 10).ok());
  CHECK_FALSE(ParseIndexes("a", 10).ok());
}

}  // namespace
}  // namespace podflow::controllers
