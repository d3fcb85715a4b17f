#include "stages/controllers/job_loop.h"

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
#include "stages/controllers/expectations.h"
#include "stages/controllers/job.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/pod_control.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 404;
constexpr uint32_t kTtlEventNamerInstance = 405;
// At most this many pods created or deleted by one sync of a Job.
constexpr size_t kJobBurst = 500;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// What the loop keeps of a Job: the stored object and what it reads of it.
struct JobEntry {
  KeyValue kv;
  JobRecord job;
  std::string uid;  // for ObjectIndex
  const api::Job& stored() const { return *flatbuffers::GetRoot<api::Job>(kv.value.data()); }
};

std::optional<JobEntry> ReadJob(const KeyValue& kv) {
  if (!model::VerifyObject(model::Kind("Job"), kv.value).ok()) return std::nullopt;
  JobEntry out;
  out.kv = kv;
  const api::Job& stored = out.stored();
  // Admission always writes both; anything else is not acted on.
  if (stored.metadata() == nullptr || stored.spec() == nullptr) return std::nullopt;
  JobRecord& job = out.job;
  const api::ObjectMeta& meta = *stored.metadata();
  job.namespace_ = Str(meta.namespace_());
  job.name = Str(meta.name());
  job.uid = out.uid = Str(meta.uid());
  job.deleting = meta.deletion_timestamp() != nullptr && meta.deletion_timestamp()->size() > 0;
  const api::JobSpec& spec = *stored.spec();
  job.suspended = spec.suspend().value_or(false);
  job.indexed = spec.completion_mode() == api::CompletionMode::Indexed;
  if (spec.completions()) job.completions = *spec.completions();
  job.parallelism = spec.parallelism().value_or(1);
  job.backoff_limit = spec.backoff_limit().value_or(6);
  if (spec.active_deadline_seconds()) job.active_deadline_seconds = *spec.active_deadline_seconds();
  if (spec.ttl_seconds_after_finished()) job.ttl_seconds_after_finished = *spec.ttl_seconds_after_finished();
  job.replace_terminating = spec.pod_replacement_policy() != api::PodReplacementPolicy::Failed;
  job.restart_on_failure = spec.template_() != nullptr && spec.template_()->spec() != nullptr &&
                           spec.template_()->spec()->restart_policy() == api::RestartPolicy::OnFailure;
  if (const api::JobStatus* status = stored.status()) {
    job.start_time = StoredTime(status->start_time());
    job.succeeded = status->succeeded();
    job.failed = status->failed();
    if (const api::UncountedTerminatedPods* uncounted = status->uncounted_terminated_pods()) {
      if (uncounted->succeeded()) {
        for (const flatbuffers::String* uid : *uncounted->succeeded()) job.uncounted_succeeded.insert(uid->str());
      }
      if (uncounted->failed()) {
        for (const flatbuffers::String* uid : *uncounted->failed()) job.uncounted_failed.insert(uid->str());
      }
    }
    if (job.indexed && status->completed_indexes() != nullptr) {
      // The controller's own writing; one that does not parse is rebuilt
      // from the pods that succeeded.
      Result<std::set<int32_t>> indexes = ParseIndexes(status->completed_indexes()->string_view(),
                                                       job.completions.value_or(0));
      if (indexes.ok()) job.completed_indexes = std::move(*indexes);
    }
    if (status->conditions() != nullptr) {
      for (const api::JobCondition* c : *status->conditions()) {
        if (c->status() != api::ConditionStatus::True) continue;
        JobConditionView view{Str(c->type()), Str(c->reason()), Str(c->message())};
        if (view.type == "SuccessCriteriaMet" || view.type == "FailureTarget") job.target = view;
        if (view.type == "Complete" || view.type == "Failed") {
          job.finished = view;
          job.finished_at = StoredTime(c->last_transition_time());
        }
      }
    }
  }
  return out;
}

// A condition of a Job's status, set to `status` (a new one added, a
// changed one's transition time moved).
void SetCondition(api::JobStatusT& status, const std::string& type, api::ConditionStatus value,
                  const std::string& reason, const std::string& message, SimTime now) {
  for (auto& c : status.conditions) {
    if (c->type != type) continue;
    if (c->status == value && c->reason == reason && c->message == message) return;  // as it is
    if (c->status != value) c->last_transition_time = FormatRfc3339(now);
    c->status = value;
    c->reason = reason;
    c->message = message;
    c->last_probe_time = FormatRfc3339(now);
    return;
  }
  auto c = std::make_unique<api::JobConditionT>();
  c->type = type;
  c->status = value;
  c->reason = reason;
  c->message = message;
  c->last_probe_time = c->last_transition_time = FormatRfc3339(now);
  status.conditions.push_back(std::move(c));
}

// The strategic merge patch that takes the tracking finalizer off the pod
// of uid `uid` (only if it is still that pod).
std::string ReleasePodPatch(const std::string& uid) {
  using model::Value;
  Value list = Value::Array();
  list.Append(Value::String(kJobTrackingFinalizer));
  Value meta = Value::Object();
  meta.Set("$deleteFromPrimitiveList/finalizers", std::move(list));
  meta.Set("uid", Value::String(uid));
  Value patch = Value::Object();
  patch.Set("metadata", std::move(meta));
  return model::ToJson(patch);
}

class JobLoop {
 public:
  explicit JobLoop(pipeline::StageContext& context)
      : api_(context, kJobController, kEventNamerInstance),
        ttl_api_(context, kTtlAfterFinishedController, kTtlEventNamerInstance),
        jobs_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("Job"))),
        pods_(context, model::KindPrefix(model::Kind("Pod"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers job_handlers{[this](const KeyValue& kv) { UpsertJob(kv); },
                                                  [this](const std::string& key) { RemoveJob(key); }};
    const client::Informer::Handlers pod_handlers{[this](const KeyValue& kv) { UpsertPod(kv); },
                                                  [this](const std::string& key) { RemovePod(key); }};
    RunWorkQueue(
        stopping, queue_,
        [&](std::chrono::milliseconds wait) {
          return PollKindAndPods(jobs_informer_, job_handlers, pods_, pod_handlers, wait, [&] { return FollowPods(pod_handlers); });
        },
        [this](const Status& failed) { api_.log().warn("following jobs and pods: {}", failed.ToString()); },
        [this](const std::string& key, SimTime now) {
          if (key.starts_with(kPodPrefix)) {
            ReleaseOrphan(key);
          } else {
            Sync(key, now);
          }
        },
        [this] {
          api_.FlushEvents();
          ttl_api_.FlushEvents();
        });
  }

 private:
  const std::string kPodPrefix = model::KindPrefix(model::Kind("Pod"));

  // The pods are followed while there is a Job, or a pod still carries the
  // tracking finalizer (its Job gone, it is to be let go), and once at the
  // start to find such pods.
  Status FollowPods(const client::Informer::Handlers& handlers) {
    const bool needed = !jobs_.empty() || tracked_ > 0 || !pods_listed_;
    Result<bool> changed = pods_.Follow(needed, handlers);
    if (!changed.ok()) return changed.status();
    if (pods_.open()) pods_listed_ = true;
    if (!*changed) return Status::Ok();
    if (pods_.open()) {
      api_.log().info("following pods: {} job(s)", jobs_.size());
    } else {
      pod_records_.clear();
      pods_by_owner_.clear();
      orphans_.clear();
      tracked_ = 0;
      api_.log().info("no job left: no longer following pods");
    }
    return Status::Ok();
  }

  void UpsertJob(const KeyValue& kv) {
    std::optional<JobEntry> entry = ReadJob(kv);
    if (!entry) {
      api_.log().warn("{}: not a valid Job; ignored", kv.key);
      return;
    }
    jobs_.Put(kv.key, std::move(*entry));
    queue_.Add(kv.key, WallClockNow());
  }

  void RemoveJob(const std::string& key) {
    std::optional<JobEntry> was = jobs_.Erase(key);
    if (!was) return;
    expectations_.Forget(key);
    queue_.Forget(key);
    backoff_.erase(key);
    // Its pods that still carry the finalizer are let go.
    if (auto pods = pods_by_owner_.find(was->uid); pods != pods_by_owner_.end()) {
      for (const std::string& pod : pods->second) {
        if (!IsTracked(pod_records_.at(pod))) continue;
        orphans_[pod] = 0;
        queue_.Add(pod, WallClockNow());
      }
    }
  }

  void UpsertPod(const KeyValue& kv) {
    std::optional<PodRecord> pod = ReadPod(kv.key, kv.value);
    if (!pod) {
      api_.log().warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const SimTime now = WallClockNow();
    auto it = pod_records_.find(kv.key);
    const std::string* owner = pod->controller_uid.empty() ? nullptr : jobs_.KeyOf(pod->controller_uid);
    for (const std::string& met : expectations_.ObservePod(kv.key, pod->deleting, it == pod_records_.end(), owner)) {
      queue_.Add(met, now);
    }
    if (it != pod_records_.end()) Unindex(kv.key, it->second);
    if (owner != nullptr) queue_.Add(*owner, now);
    // Tracked by a Job that is not there: let go, once the Jobs are known
    // as of the pod's creation (its Job, made before it, would be).
    if (owner == nullptr && IsTracked(*pod)) {
      orphans_[kv.key] = kv.create_revision.value();
      queue_.Add(kv.key, now);
    }
    tracked_ += IsTracked(*pod);
    if (!pod->controller_uid.empty()) pods_by_owner_[pod->controller_uid].insert(kv.key);
    pod_records_[kv.key] = std::move(*pod);
  }

  void RemovePod(const std::string& key) {
    const SimTime now = WallClockNow();
    if (std::optional<std::string> owner = expectations_.Observe(key, /*present=*/false)) queue_.Add(*owner, now);
    auto it = pod_records_.find(key);
    if (it == pod_records_.end()) return;
    if (const std::string* owner = jobs_.KeyOf(it->second.controller_uid)) queue_.Add(*owner, now);
    Unindex(key, it->second);
    pod_records_.erase(it);
    orphans_.erase(key);
  }

  void Unindex(const std::string& key, const PodRecord& pod) {
    tracked_ -= IsTracked(pod);
    auto owned = pods_by_owner_.find(pod.controller_uid);
    if (owned == pods_by_owner_.end()) return;
    owned->second.erase(key);
    if (owned->second.empty()) pods_by_owner_.erase(owned);
  }

  // A pod with the tracking finalizer whose Job is gone: the finalizer goes.
  void ReleaseOrphan(const std::string& key) {
    auto orphan = orphans_.find(key);
    if (orphan == orphans_.end()) return;
    auto it = pod_records_.find(key);
    if (it == pod_records_.end() || !IsTracked(it->second) ||
        (!it->second.controller_uid.empty() && jobs_.KeyOf(it->second.controller_uid) != nullptr)) {
      orphans_.erase(orphan);
      return;
    }
    if (jobs_informer_.revision().value() < orphan->second) {
      queue_.Add(key, WallClockNow() + kMaxWait);
      return;
    }
    const PodRecord& pod = it->second;
    if (api_.Patch(model::Kind("Pod"), pod.namespace_, pod.name, ReleasePodPatch(pod.uid), "strategic",
                   "letting go of the orphan") == ControllerApi::Updated::kFailed) {
      queue_.AddRateLimited(key, WallClockNow());
      return;
    }
    orphans_.erase(orphan);
  }

  model::ObjectRef RefOf(const JobRecord& job) const { return {"Job", "batch/v1", job.namespace_, job.name, job.uid}; }

  // The pods the Job controls, whatever their state.
  std::vector<const PodRecord*> PodsOf(const JobRecord& job) const {
    std::vector<const PodRecord*> out;
    auto owned = pods_by_owner_.find(job.uid);
    if (owned == pods_by_owner_.end()) return out;
    for (const std::string& key : owned->second) out.push_back(&pod_records_.at(key));
    return out;
  }

  // syncJob: counts the pods that ended (the finalizer protocol), decides
  // whether the Job has failed or met its completions, creates or deletes
  // pods towards parallelism, and writes its status.
  void Sync(const std::string& key, SimTime now) {
    JobEntry* entry = jobs_.Find(key);
    if (entry == nullptr) return;
    const JobRecord& job = entry->job;
    const std::vector<const PodRecord*> pods = PodsOf(job);
    if (job.finished) {
      // Every pod was counted before it finished; any left tracked is let go.
      bool released = true;
      for (const PodRecord* pod : pods) {
        if (IsTracked(*pod)) released &= ReleasePod(*pod);
      }
      if (!released) queue_.AddRateLimited(key, now);
      ExpireAfterFinished(key, *entry, now);
      return;
    }
    const JobAccounting accounting = Account(job, pods);
    std::vector<const PodRecord*> active;
    int32_t terminating = 0, ready = 0;
    std::set<int32_t> completed = job.completed_indexes;
    std::set<int32_t> running;  // indexes taken: active pods' (and terminating ones' when only Failed are replaced)
    for (const PodRecord* pod : pods) {
      const bool terminal = pod->phase == api::PodPhase::Succeeded || pod->phase == api::PodPhase::Failed;
      if (IsActive(*pod)) {
        active.push_back(pod);
        ready += pod->ready;
        if (pod->completion_index) running.insert(*pod->completion_index);
      } else if (pod->deleting && !terminal) {
        ++terminating;
        if (!job.replace_terminating && pod->completion_index) running.insert(*pod->completion_index);
      }
      if (job.indexed && pod->phase == api::PodPhase::Succeeded && pod->completion_index &&
          *pod->completion_index < job.completions.value_or(0)) {
        completed.insert(*pod->completion_index);
      }
    }
    const int32_t succeeded = job.indexed ? static_cast<int32_t>(completed.size())
                                          : job.succeeded + static_cast<int32_t>(job.uncounted_succeeded.size() +
                                                                                 accounting.newly_succeeded.size());
    const int32_t failed =
        job.failed + static_cast<int32_t>(job.uncounted_failed.size() + accounting.newly_failed.size());

    std::optional<JobConditionView> target = job.target;
    if (!target && !job.suspended && !job.deleting) {
      const std::optional<SimTime> deadline = DeadlineAt(job);
      if (PastBackoffLimit(job, failed, active)) {
        target = JobConditionView{"FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"};
      } else if (deadline && *deadline <= now) {
        target = JobConditionView{"FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline"};
      } else if (CompletionsReached(job, succeeded, completed.size(), active.size())) {
        target = JobConditionView{"SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"};
      } else if (deadline) {
        queue_.Add(key, *deadline);
      }
    }

    std::string failure;
    const bool satisfied = expectations_.Satisfied(key, now);
    if (!satisfied) {
      if (std::optional<SimTime> lapses = expectations_.Lapses(key)) queue_.Add(key, *lapses);
    }
    if (target || job.suspended) {
      // Decided (or suspended): nothing more runs.
      if (!active.empty() && satisfied) failure = pod_control_.Delete(key, RefOf(job), Limit(active), now);
    } else if (satisfied && !job.deleting) {
      // Pods still stopping hold their places when only Failed ones are replaced.
      const int32_t holding = job.replace_terminating ? 0 : terminating;
      failure = ManagePods(key, *entry, active, holding, completed, running, succeeded, now);
    }

    // The Job's final condition once every pod has stopped and been counted.
    const bool all_counted = accounting.release.empty() && accounting.newly_succeeded.empty() &&
                             accounting.newly_failed.empty() &&
                             job.uncounted_succeeded.size() == accounting.counted_succeeded.size() &&
                             job.uncounted_failed.size() == accounting.counted_failed.size();
    const bool finishes = job.target.has_value() && active.empty() && terminating == 0 && all_counted;
    if (!WriteStatus(*entry, accounting, target, finishes, static_cast<int32_t>(active.size()), ready, terminating,
                     completed, now)) {
      queue_.AddRateLimited(key, now);
      return;
    }
    NoteFailures(key, accounting, pods);
    // Counted in the status just written: the pods may go.
    bool released = true;
    for (const PodRecord* pod : accounting.release) released &= ReleasePod(*pod);
    if (finishes) {
      if (target->type == "SuccessCriteriaMet") {
        api_.Defer(RefOf(job), "Normal", "Completed", "Job completed", now);
      } else {
        api_.Defer(RefOf(job), "Warning", target->reason, target->message, now);
      }
    }
    if (!failure.empty() || !released) {
      queue_.AddRateLimited(key, now);
    } else {
      queue_.Forget(key);
    }
  }

  static std::vector<const PodRecord*> Limit(std::vector<const PodRecord*> pods) {
    if (pods.size() > kJobBurst) pods.resize(kJobBurst);
    return pods;
  }

  // Failures since the last success, and when the last one was: the
  // back-off before the next pod (in memory, as kube-controller-manager
  // keeps it).
  struct Backoff {
    int failures = 0;
    SimTime last{};
  };

  void NoteFailures(const std::string& key, const JobAccounting& accounting, const std::vector<const PodRecord*>& pods) {
    if (accounting.newly_succeeded.empty() && accounting.newly_failed.empty()) return;
    Backoff& b = backoff_[key];
    if (!accounting.newly_succeeded.empty()) b = Backoff{};
    for (const std::string& uid : accounting.newly_failed) {
      ++b.failures;
      for (const PodRecord* pod : pods) {
        if (pod->uid == uid) b.last = std::max(b.last, pod->finished_at.value_or(WallClockNow()));
      }
    }
  }

  // Creates or deletes pods towards what the Job wants; "" or the first failure.
  std::string ManagePods(const std::string& key, const JobEntry& entry, const std::vector<const PodRecord*>& active,
                         int32_t holding, const std::set<int32_t>& completed, const std::set<int32_t>& running,
                         int32_t succeeded, SimTime now) {
    const JobRecord& job = entry.job;
    std::vector<std::string> bodies;
    if (job.indexed) {
      // One pod per index: a second one running the same index goes.
      std::set<int32_t> seen;
      std::vector<const PodRecord*> extra;
      for (const PodRecord* pod : active) {
        if (!pod->completion_index || !seen.insert(*pod->completion_index).second ||
            *pod->completion_index >= job.completions.value_or(0)) {
          extra.push_back(pod);
        }
      }
      if (!extra.empty()) return pod_control_.Delete(key, RefOf(job), Limit(extra), now);
      for (int32_t index : IndexesToCreate(job, completed, running)) bodies.push_back(PodBody(entry, index));
    } else {
      const int32_t count = static_cast<int32_t>(active.size());
      const int32_t want = WantActive(job, succeeded, count);
      if (count > want) {
        return pod_control_.Delete(key, RefOf(job), PodsToDelete(active, active, count - want, now), now);
      }
      // Every pod alike: the template is read once.
      if (count + holding < want) bodies.assign(static_cast<size_t>(want - count - holding), PodBody(entry, std::nullopt));
    }
    if (bodies.empty()) return "";
    // Failed pods are replaced after a back-off.
    if (auto b = backoff_.find(key); b != backoff_.end()) {
      const SimTime due = b->second.last + FailureBackoff(b->second.failures);
      if (due > now) {
        queue_.Add(key, due);
        return "";
      }
    }
    if (bodies.size() > kJobBurst) bodies.resize(kJobBurst);
    return pod_control_.Create(key, RefOf(job), bodies, now);
  }

  // A pod of the Job (of completion index `index` when Indexed): its
  // template, named NAME- (NAME-INDEX-), owned by the Job, with the
  // tracking finalizer; an indexed one also with its index as annotation,
  // label, hostname NAME-INDEX and JOB_COMPLETION_INDEX in every container.
  static std::string PodBody(const JobEntry& entry, std::optional<int32_t> index) {
    using model::Value;
    const JobRecord& job = entry.job;
    const Value stored = model::ToValue(model::Kind("Job"), entry.kv.value);
    const Value* spec = stored.Find("spec");
    const std::string prefix = job.name + "-" + (index ? std::to_string(*index) + "-" : "");
    Value pod = PodFromTemplate(spec != nullptr ? spec->Find("template") : nullptr, prefix, job.namespace_,
                                ControllerRef("batch/v1", "Job", job.name, job.uid));
    Value& meta = *pod.Find("metadata");
    MemberOf(meta, "finalizers", Value::Array()).Append(Value::String(kJobTrackingFinalizer));
    if (index) {
      const Value text = Value::String(std::to_string(*index));
      PutMember(MemberOf(meta, "annotations", Value::Object()), kJobCompletionIndex, text);
      PutMember(MemberOf(meta, "labels", Value::Object()), kJobCompletionIndex, text);
      Value& pod_spec = *pod.Find("spec");
      PutMember(pod_spec, "hostname", Value::String(job.name + "-" + std::to_string(*index)));
      for (const char* list : {"initContainers", "containers"}) {
        const Value* containers = pod_spec.Find(list);
        if (containers == nullptr) continue;
        Value with_env = Value::Array();
        for (Value container : containers->items()) {
          AddIndexEnv(container);
          with_env.Append(std::move(container));
        }
        PutMember(pod_spec, list, std::move(with_env));
      }
    }
    return model::ToJson(pod);
  }

  static void AddIndexEnv(model::Value& container) {
    using model::Value;
    Value& env = MemberOf(container, "env", Value::Array());
    for (const Value& e : env.items()) {
      if (const Value* name = e.Find("name"); name != nullptr && name->string_value() == "JOB_COMPLETION_INDEX") return;
    }
    Value field = Value::Object();
    field.Set("fieldPath", Value::String(std::string("metadata.labels['") + kJobCompletionIndex + "']"));
    Value from = Value::Object();
    from.Set("fieldRef", std::move(field));
    Value var = Value::Object();
    var.Set("name", Value::String("JOB_COMPLETION_INDEX"));
    var.Set("valueFrom", std::move(from));
    env.Append(std::move(var));
  }

  // Takes the tracking finalizer off `pod`; false when it should be tried again.
  bool ReleasePod(const PodRecord& pod) {
    return api_.Patch(model::Kind("Pod"), pod.namespace_, pod.name, ReleasePodPatch(pod.uid), "strategic",
                      "counting") != ControllerApi::Updated::kFailed;
  }

  // Writes the status this sync came to, unless it is so already; false
  // when it should be tried again.
  bool WriteStatus(const JobEntry& entry, const JobAccounting& accounting, const std::optional<JobConditionView>& target,
                   bool finishes, int32_t active, int32_t ready, int32_t terminating,
                   const std::set<int32_t>& completed, SimTime now) {
    const JobRecord& job = entry.job;
    std::unique_ptr<api::JobT> stored(entry.stored().UnPack());
    if (!stored->status) stored->status = std::make_unique<api::JobStatusT>();
    api::JobStatusT& status = *stored->status;
    if (!job.start_time && !job.suspended) status.start_time = FormatRfc3339(now);
    status.active = active;
    status.ready = ready;
    status.terminating = terminating;
    // Counted: uncounted pods let go; newly ended pods become uncounted.
    std::set<std::string> succeeded_left = job.uncounted_succeeded, failed_left = job.uncounted_failed;
    for (const std::string& uid : accounting.counted_succeeded) succeeded_left.erase(uid);
    for (const std::string& uid : accounting.counted_failed) failed_left.erase(uid);
    if (!job.indexed) status.succeeded = job.succeeded + static_cast<int32_t>(accounting.counted_succeeded.size());
    status.failed = job.failed + static_cast<int32_t>(accounting.counted_failed.size());
    succeeded_left.insert(accounting.newly_succeeded.begin(), accounting.newly_succeeded.end());
    failed_left.insert(accounting.newly_failed.begin(), accounting.newly_failed.end());
    if (!status.uncounted_terminated_pods) {
      status.uncounted_terminated_pods = std::make_unique<api::UncountedTerminatedPodsT>();
    }
    status.uncounted_terminated_pods->succeeded.assign(succeeded_left.begin(), succeeded_left.end());
    status.uncounted_terminated_pods->failed.assign(failed_left.begin(), failed_left.end());
    if (job.indexed) {
      // An index counts once its pod is counted.
      std::set<int32_t> counted = job.completed_indexes;
      for (int32_t i : completed) counted.insert(i);
      status.completed_indexes = FormatIndexes(counted);
      status.succeeded = static_cast<int32_t>(counted.size());
    }
    if (target && !job.target) SetCondition(status, target->type, api::ConditionStatus::True, target->reason, target->message, now);
    if (finishes) {
      const bool complete = target->type == "SuccessCriteriaMet";
      SetCondition(status, complete ? "Complete" : "Failed", api::ConditionStatus::True, target->reason,
                   target->message, now);
      if (complete) status.completion_time = FormatRfc3339(now);
    }
    if (job.suspended) {
      SetCondition(status, "Suspended", api::ConditionStatus::True, "JobSuspended", "Job suspended", now);
    } else if (std::ranges::any_of(status.conditions, [](const auto& c) {
                 return c->type == "Suspended" && c->status == api::ConditionStatus::True;
               })) {
      SetCondition(status, "Suspended", api::ConditionStatus::False, "JobResumed", "Job resumed", now);
      status.start_time = FormatRfc3339(now);
    }
    std::string packed = model::Pack(*stored);
    if (packed == entry.kv.value) return true;
    stored->metadata->resource_version = std::to_string(entry.kv.mod_revision.value());
    return api_.Update(model::Kind("Job"), job.namespace_, job.name, "status", model::Pack(*stored)) ==
           ControllerApi::Updated::kWritten;
  }

  // The TTL-after-finished controller: a finished Job goes
  // ttlSecondsAfterFinished after its Complete or Failed condition, in
  // the foreground, on the condition that it is still that Job as read
  // (its ttl may just have changed).
  void ExpireAfterFinished(const std::string& key, const JobEntry& entry, SimTime now) {
    const JobRecord& job = entry.job;
    if (!job.ttl_seconds_after_finished || job.deleting) return;
    const SimTime expires = job.finished_at.value_or(now) + std::chrono::seconds(*job.ttl_seconds_after_finished);
    if (expires > now) {
      queue_.Add(key, expires);
      return;
    }
    Result<client::ApiResponse> deleted = ttl_api_.Call({.verb = "delete",
                                                         .resource = "jobs.batch",
                                                         .namespace_ = job.namespace_,
                                                         .name = job.name,
                                                         .propagation_policy = "Foreground",
                                                         .precondition_uid = job.uid,
                                                         .precondition_resource_version =
                                                             std::to_string(entry.kv.mod_revision.value())});
    if (deleted.ok() && deleted->status.code == 404) return;
    if (!ttl_api_.Succeeded(deleted, "deleting the expired job " + job.namespace_ + "/" + job.name)) {
      queue_.AddRateLimited(key, now);
    }
  }

  ControllerApi api_;
  ControllerApi ttl_api_;
  client::Informer jobs_informer_;
  OnDemandInformer pods_;
  bool pods_listed_ = false;
  ObjectIndex<JobEntry> jobs_;
  std::map<std::string, PodRecord> pod_records_;                  // by key
  std::map<std::string, std::set<std::string>> pods_by_owner_;    // controller uid -> pod keys
  int64_t tracked_ = 0;  // pods known with the tracking finalizer
  std::map<std::string, int64_t> orphans_;  // tracked pods of no known Job -> their creation revision
  std::map<std::string, Backoff> backoff_;  // by Job key
  Expectations expectations_;
  PodControl pod_control_{api_, expectations_};
  WorkQueue queue_;
};

}  // namespace

void RunJobController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  JobLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
