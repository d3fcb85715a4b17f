#include "stages/controllers/cron_job_loop.h"

#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "batch_generated.h"
#include "client/client.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/value.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/cron_job.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/pod_control.h"
#include "stages/controllers/pod_record.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 407;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// Go's time.RFC1123Z of `t` in UTC: "Mon, 02 Jan 2006 15:04:05 +0000".
std::string Rfc1123Z(SimTime t) {
  const std::time_t seconds = ToUnixMillis(t) / 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[64];
  std::strftime(out, sizeof out, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return out;
}

// What the loop keeps of a CronJob.
struct CronRecord {
  KeyValue kv;
  std::string namespace_, name, uid;
  SimTime created;
  bool deleting = false;

  const api::CronJob& stored() const {
    return *flatbuffers::GetRoot<api::CronJob>(kv.value.data());
  }
};

std::optional<CronRecord> ReadCronJob(const KeyValue& kv) {
  if (!model::VerifyObject(model::Kind("CronJob"), kv.value).ok()) return std::nullopt;
  CronRecord out;
  out.kv = kv;
  const api::CronJob& cj = out.stored();
  if (cj.metadata() == nullptr || cj.spec() == nullptr)
    return std::nullopt;  // admission writes both
  out.namespace_ = Str(cj.metadata()->namespace_());
  out.name = Str(cj.metadata()->name());
  out.uid = Str(cj.metadata()->uid());
  out.created = StoredTime(cj.metadata()->creation_timestamp()).value_or(WallClockNow());
  out.deleting = cj.metadata()->deletion_timestamp() != nullptr &&
                 cj.metadata()->deletion_timestamp()->size() > 0;
  return out;
}

// What the loop keeps of a Job.
struct JobView {
  std::string namespace_, name, uid, controller_uid;
  std::string finished;  // "Complete", "Failed" (a True condition), or ""
  std::optional<SimTime> start_time, completion_time;
};

std::optional<JobView> ReadJob(const KeyValue& kv) {
  if (!model::VerifyObject(model::Kind("Job"), kv.value).ok()) return std::nullopt;
  const api::Job& job = *flatbuffers::GetRoot<api::Job>(kv.value.data());
  if (job.metadata() == nullptr) return std::nullopt;
  JobView out;
  out.namespace_ = Str(job.metadata()->namespace_());
  out.name = Str(job.metadata()->name());
  out.uid = Str(job.metadata()->uid());
  if (job.metadata()->owner_references() != nullptr) {
    for (const api::OwnerReference* ref : *job.metadata()->owner_references()) {
      if (ref->controller().value_or(false)) out.controller_uid = Str(ref->uid());
    }
  }
  if (const api::JobStatus* status = job.status()) {
    out.start_time = StoredTime(status->start_time());
    out.completion_time = StoredTime(status->completion_time());
    if (status->conditions() != nullptr) {
      for (const api::JobCondition* c : *status->conditions()) {
        const std::string type = Str(c->type());
        if ((type == "Complete" || type == "Failed") && c->status() == api::ConditionStatus::True &&
            out.finished.empty()) {
          out.finished = type;  // the first such condition, as getFinishedStatus reads it
        }
      }
    }
  }
  return out;
}

// A time zone podflow knows: none (the controller's, UTC) or UTC itself.
bool KnownTimeZone(const std::string& zone) {
  return zone.empty() || zone == "UTC" || zone == "Etc/UTC" || zone == "Etc/UCT" || zone == "UCT" ||
         zone == "Etc/Universal" || zone == "Universal" || zone == "Etc/Zulu" || zone == "Zulu" ||
         zone == "GMT" || zone == "Etc/GMT";
}

class CronJobLoop {
 public:
  explicit CronJobLoop(pipeline::StageContext& context)
      : api_(context, kCronJobController, kEventNamerInstance),
        cron_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("CronJob"))),
        jobs_(context, model::KindPrefix(model::Kind("Job"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers cron_handlers{
        [this](const KeyValue& kv) { UpsertCronJob(kv); },
        [this](const std::string& key) { RemoveCronJob(key); }};
    const client::Informer::Handlers job_handlers{
        [this](const KeyValue& kv) { UpsertJob(kv); },
        [this](const std::string& key) { RemoveJob(key); }};
    RunWorkQueue(
        stopping, queue_,
        [&](std::chrono::milliseconds wait) {
          return PollKindAndFollowers(cron_informer_, cron_handlers, {{jobs_, job_handlers}}, wait,
                                      [&] { return FollowJobs(job_handlers); });
        },
        [this](const Status& failed) {
          api_.log().warn("following cron jobs and jobs: {}", failed.ToString());
        },
        [this](const std::string& key, SimTime now) { Sync(key, now); },
        [this] { api_.FlushEvents(); });
  }

 private:
  // The Jobs are followed while there is a CronJob; a CronJob is synced
  // only once they are listed.
  Status FollowJobs(const client::Informer::Handlers& handlers) {
    Result<bool> changed = jobs_.Follow(!cron_jobs_.empty(), handlers);
    if (!changed.ok()) return changed.status();
    if (!*changed) return Status::Ok();
    if (jobs_.open()) {
      api_.log().info("following jobs: {} cron job(s)", cron_jobs_.size());
    } else {
      jobs_by_key_.clear();
      made_.clear();
      reported_.clear();
      api_.log().info("no cron job left: no longer following jobs");
    }
    return Status::Ok();
  }

  void UpsertCronJob(const KeyValue& kv) {
    std::optional<CronRecord> cj = ReadCronJob(kv);
    if (!cj) {
      api_.log().warn("{}: not a valid CronJob; ignored", kv.key);
      return;
    }
    cron_jobs_.Put(kv.key, std::move(*cj));
    queue_.Add(kv.key, WallClockNow());
  }

  void RemoveCronJob(const std::string& key) {
    if (!cron_jobs_.Erase(key)) return;
    queue_.Forget(key);
  }

  void EnqueueOwner(const JobView& job) {
    if (const std::string* key = cron_jobs_.KeyOf(job.controller_uid))
      queue_.Add(*key, WallClockNow());
  }

  void UpsertJob(const KeyValue& kv) {
    std::optional<JobView> job = ReadJob(kv);
    if (!job) {
      api_.log().warn("{}: not a valid Job; ignored", kv.key);
      return;
    }
    EnqueueOwner(*job);
    jobs_by_key_[kv.key] = std::move(*job);
  }

  void RemoveJob(const std::string& key) {
    auto it = jobs_by_key_.find(key);
    if (it == jobs_by_key_.end()) return;
    EnqueueOwner(it->second);
    made_.erase(it->second.uid);
    reported_.erase(it->second.uid);
    jobs_by_key_.erase(it);
  }

  model::ObjectRef RefOf(const CronRecord& cj) const {
    return {"CronJob", "batch/v1", cj.namespace_, cj.name, cj.uid};
  }

  // The sync of one CronJob (the controller's sync, syncCronJob and
  // cleanupFinishedJobs): the history limits, the active list made true
  // to its Jobs, then, unless it is deleting or suspended, the Job of the
  // most recent scheduled time, if one is due and allowed; the status
  // written when changed; looked at again at the next scheduled time.
  void Sync(const std::string& key, SimTime now) {
    const CronRecord* found = cron_jobs_.Find(key);
    if (found == nullptr) return;
    if (!jobs_.open()) {
      queue_.Add(key, now + std::chrono::milliseconds(100));  // once the Jobs are listed
      return;
    }
    const CronRecord& cj = *found;
    std::unique_ptr<api::CronJobT> next(cj.stored().UnPack());
    if (!next->status) next->status = std::make_unique<api::CronJobStatusT>();
    const api::CronJobSpecT& spec = *next->spec;
    std::vector<const JobView*> children;
    for (const auto& [job_key, job] : jobs_by_key_) {
      if (job.namespace_ == cj.namespace_ && job.controller_uid == cj.uid) children.push_back(&job);
    }
    bool changed = CleanupFinished(cj, spec, children, *next->status, now);
    changed |= Reconcile(cj, children, *next->status, now);
    std::optional<SimTime> check_at;
    bool retry = false;
    if (!cj.deleting) Schedule(cj, spec, *next->status, now, changed, check_at, retry);
    if (changed && !WriteStatus(cj, *next)) retry = true;
    if (retry) {
      queue_.AddRateLimited(key, now);
      return;
    }
    queue_.Forget(key);
    if (check_at) queue_.Add(key, *check_at);
  }

  static void DropActive(api::CronJobStatusT& status, const std::string& uid) {
    std::erase_if(status.active, [&](const auto& ref) { return ref->uid == uid; });
  }

  static bool IsActive(const api::CronJobStatusT& status, const std::string& uid) {
    return std::ranges::any_of(status.active, [&](const auto& ref) { return ref->uid == uid; });
  }

  // Deletes a Job of the CronJob (in the background) and its place in the
  // active list; false when the API refused.
  bool DeleteJob(const CronRecord& cj, const std::string& name, const std::string& uid,
                 api::CronJobStatusT& status, SimTime now) {
    Result<client::ApiResponse> deleted = api_.Call({.verb = "delete",
                                                     .resource = "jobs",
                                                     .namespace_ = cj.namespace_,
                                                     .name = name,
                                                     .propagation_policy = "Background",
                                                     .precondition_uid = uid});
    if (deleted.ok() && deleted->status.code == 404) {
      DropActive(status, uid);  // gone already (the Jobs' watch was behind): nothing to tell
      return true;
    }
    if (!deleted.ok() || !deleted->status.success()) {
      const std::string why = deleted.ok() ? deleted->status.message : deleted.status().ToString();
      api_.Defer(RefOf(cj), "Warning", "FailedDelete", "Deleted job: " + why, now);
      return false;
    }
    DropActive(status, uid);
    api_.Defer(RefOf(cj), "Normal", "SuccessfulDelete", "Deleted job " + name, now);
    return true;
  }

  // cleanupFinishedJobs: the finished Jobs beyond successfulJobsHistoryLimit
  // and failedJobsHistoryLimit go, oldest first.
  bool CleanupFinished(const CronRecord& cj, const api::CronJobSpecT& spec,
                       const std::vector<const JobView*>& children, api::CronJobStatusT& status,
                       SimTime now) {
    bool changed = false;
    for (const auto& [type, limit] :
         {std::pair{std::string("Complete"), spec.successful_jobs_history_limit},
          std::pair{std::string("Failed"), spec.failed_jobs_history_limit}}) {
      if (!limit) continue;
      std::vector<FinishedJob> finished;
      std::map<std::string, std::string> uids;  // name -> uid
      for (const JobView* job : children) {
        if (job->finished != type) continue;
        finished.push_back({job->name, job->start_time});
        uids[job->name] = job->uid;
      }
      for (const FinishedJob& job : JobsBeyondLimit(std::move(finished), *limit)) {
        changed |= DeleteJob(cj, job.name, uids[job.name], status, now);
      }
    }
    return changed;
  }

  // The active list against the Jobs: a finished one leaves it
  // (SawCompletedJob), a successful one sets lastSuccessfulTime, an
  // unfinished one not in it is reported (UnexpectedJob) unless this loop
  // made it, and one whose Job is gone leaves it (MissingJob).
  bool Reconcile(const CronRecord& cj, const std::vector<const JobView*>& children,
                 api::CronJobStatusT& status, SimTime now) {
    bool changed = false;
    std::set<std::string> child_uids;
    for (const JobView* job : children) {
      child_uids.insert(job->uid);
      const bool active = IsActive(status, job->uid);
      if (job->finished.empty()) {
        if (!active && !made_.contains(job->uid) && reported_.insert(job->uid).second) {
          api_.Defer(RefOf(cj), "Warning", "UnexpectedJob",
                     "Saw a job that the controller did not create or forgot: " + job->name, now);
        }
        continue;
      }
      if (active) {
        DropActive(status, job->uid);
        api_.Defer(RefOf(cj), "Normal", "SawCompletedJob",
                   "Saw completed job: " + job->name + ", condition: " + job->finished, now);
        changed = true;
      }
      if (job->finished == "Complete" && job->completion_time) {
        const std::string at = FormatRfc3339(*job->completion_time);
        const std::optional<SimTime> last = StoredTime(status.last_successful_time);
        if (!last || *job->completion_time > *last) {
          status.last_successful_time = at;
          changed = true;
        }
      }
    }
    std::vector<std::pair<std::string, std::string>> missing;  // name, uid
    for (const auto& ref : status.active) {
      if (!child_uids.contains(ref->uid)) missing.emplace_back(ref->name, ref->uid);
    }
    for (const auto& [name, uid] : missing) {
      // Asked of the API: the Jobs' watch may be behind.
      Result<client::ApiResponse> got =
          api_.Call({.verb = "get", .resource = "jobs", .namespace_ = cj.namespace_, .name = name});
      if (!got.ok() || got->status.code != 404) continue;
      api_.Defer(RefOf(cj), "Normal", "MissingJob", "Active job went missing: " + name, now);
      DropActive(status, uid);
      changed = true;
    }
    return changed;
  }

  // The Job of the most recent scheduled time, when one is due, not too
  // late, not made yet and allowed by concurrencyPolicy; `check_at` when
  // to look again, `retry` when a write failed.
  void Schedule(const CronRecord& cj, const api::CronJobSpecT& spec, api::CronJobStatusT& status,
                SimTime now, bool& changed, std::optional<SimTime>& check_at, bool& retry) {
    if (!KnownTimeZone(spec.time_zone)) {
      api_.Defer(
          RefOf(cj), "Warning", "UnknownTimeZone",
          "invalid timeZone: \"" + spec.time_zone + "\": unknown time zone " + spec.time_zone, now);
      return;
    }
    if (spec.suspend.value_or(false)) return;
    Result<model::CronSchedule> schedule = model::CronSchedule::Parse(spec.schedule);
    if (!schedule.ok()) {
      api_.Defer(RefOf(cj), "Warning", "UnparseableSchedule",
                 "unparseable schedule: \"" + spec.schedule + "\" : " + schedule.status().message(),
                 now);
      return;
    }
    const std::optional<SimTime> last = StoredTime(status.last_schedule_time);
    check_at = NextCheck(*schedule, cj.created, last, now);
    Result<ScheduleCheck> due =
        MostRecentScheduleTime(*schedule, cj.created, last, spec.starting_deadline_seconds, now);
    if (!due.ok()) {
      api_.Defer(RefOf(cj), "Warning", "InvalidSchedule",
                 "invalid schedule: " + spec.schedule + " : " + due.status().message(), now);
      return;
    }
    if (!due->most_recent) return;  // nothing due since the last one
    if (due->missed > kTooManyMissed) {
      api_.Defer(RefOf(cj), "Warning", "TooManyMissedTimes",
                 "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                 "check clock skew",
                 now);
    }
    const SimTime scheduled = *due->most_recent;
    if (spec.starting_deadline_seconds &&
        scheduled + std::chrono::seconds(*spec.starting_deadline_seconds) < now) {
      api_.Defer(RefOf(cj), "Warning", "MissSchedule",
                 "Missed scheduled time to start a job: " + Rfc1123Z(scheduled), now);
      return;
    }
    const std::string job_name = CronJobName(cj.name, scheduled);
    const bool processed =
        std::ranges::any_of(status.active,
                            [&](const auto& ref) { return ref->name == job_name; }) ||
        (last && *last == scheduled);
    if (processed) return;
    if (spec.concurrency_policy == api::ConcurrencyPolicy::Forbid && !status.active.empty()) {
      api_.Defer(
          RefOf(cj), "Normal", "JobAlreadyActive",
          "Not starting job because prior execution is running and concurrency policy is Forbid",
          now);
      return;
    }
    if (spec.concurrency_policy == api::ConcurrencyPolicy::Replace) {
      std::vector<std::pair<std::string, std::string>> running;
      for (const auto& ref : status.active) running.emplace_back(ref->name, ref->uid);
      for (const auto& [name, uid] : running) {
        if (!DeleteJob(cj, name, uid, status, now)) {
          retry = true;  // could not replace it
          return;
        }
        changed = true;
      }
    }
    std::optional<KeyValue> made = CreateJob(cj, job_name, scheduled, now, retry);
    if (!made) return;
    const api::Job& job = *flatbuffers::GetRoot<api::Job>(made->value.data());
    auto ref = std::make_unique<api::ObjectReferenceT>();
    ref->kind = "Job";
    ref->namespace_ = cj.namespace_;
    ref->name = job_name;
    ref->uid = Str(job.metadata()->uid());
    ref->api_version = "batch/v1";
    ref->resource_version = std::to_string(made->mod_revision.value());
    made_.insert(ref->uid);
    if (!IsActive(status, ref->uid)) status.active.push_back(std::move(ref));
    status.last_schedule_time = FormatRfc3339(scheduled);
    changed = true;
    if (std::optional<SimTime> after = schedule->Next(scheduled))
      check_at = *after + kNextScheduleDelta;
  }

  // Creates the Job for `scheduled`: the job template, named `name`,
  // owned by the CronJob, with the scheduled time as annotation. The Job
  // stored; nullopt when none is to be counted (`retry` set on a failure).
  std::optional<KeyValue> CreateJob(const CronRecord& cj, const std::string& name,
                                    SimTime scheduled, SimTime now, bool& retry) {
    using model::Value;
    const Value stored = model::ToValue(model::Kind("CronJob"), cj.kv.value);
    const Value* spec = stored.Find("spec");
    const Value* tmpl = spec != nullptr ? spec->Find("jobTemplate") : nullptr;
    Value job =
        ObjectFromTemplate("batch/v1", "Job", tmpl, {"labels", "annotations"}, "name", name,
                           cj.namespace_, ControllerRef("batch/v1", "CronJob", cj.name, cj.uid));
    PutMember(MemberOf(*job.Find("metadata"), "annotations", Value::Object()),
              kCronJobScheduledTimestamp, Value::String(FormatRfc3339(scheduled)));
    Result<client::ApiResponse> created = api_.Call({.verb = "create",
                                                     .resource = "jobs",
                                                     .namespace_ = cj.namespace_,
                                                     .body = model::ToJson(job)});
    if (created.ok() && created->status.success() && !created->objects.empty()) {
      api_.Defer(RefOf(cj), "Normal", "SuccessfulCreate", "Created job " + name, now);
      return created->objects.front();
    }
    if (created.ok() && created->status.reason == "AlreadyExists") {
      // Made before (by this loop, before its status was written): counted
      // if it is the CronJob's and not yet in the list.
      Result<client::ApiResponse> got =
          api_.Call({.verb = "get", .resource = "jobs", .namespace_ = cj.namespace_, .name = name});
      if (!got.ok() || !got->status.success() || got->objects.empty()) {
        retry = true;
        return std::nullopt;
      }
      std::optional<JobView> view = ReadJob(got->objects.front());
      if (!view || view->controller_uid != cj.uid) return std::nullopt;  // someone else's
      return got->objects.front();
    }
    const std::string why = created.ok() ? created->status.message : created.status().ToString();
    api_.log().info("{}/{}: creating job {}: {}", cj.namespace_, cj.name, name, why);
    api_.Defer(RefOf(cj), "Warning", "FailedCreate", "Error creating job: " + why, now);
    retry = true;
    return std::nullopt;
  }

  bool WriteStatus(const CronRecord& cj, api::CronJobT& next) {
    next.metadata->resource_version = std::to_string(cj.kv.mod_revision.value());
    return api_.Update(model::Kind("CronJob"), cj.namespace_, cj.name, "status",
                       model::Pack(next)) != ControllerApi::Updated::kFailed;
  }

  ControllerApi api_;
  client::Informer cron_informer_;
  OnDemandInformer jobs_;  // while there is a CronJob (FollowJobs)
  ObjectIndex<CronRecord> cron_jobs_;
  std::map<std::string, JobView> jobs_by_key_;
  std::set<std::string>
      made_;  // uids of Jobs this loop made (not unexpected while its status lags)
  std::set<std::string> reported_;  // uids reported as UnexpectedJob
  WorkQueue queue_;
};

}  // namespace

void RunCronJobController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  CronJobLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
