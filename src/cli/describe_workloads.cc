// `describe deployment|replicaset|daemonset|job`: kubectl's
// describeDeployment, describeReplicaSet, describeDaemonSet (1.32: no
// Namespace line), describeJob and their shared DescribePodTemplate.
#include <algorithm>

#include "apps_generated.h"
#include "batch_generated.h"
#include "cli/describe.h"
#include "cli/describe_util.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/pod_template.h"

namespace podflow::cli {
namespace {

std::string Int(int64_t v) { return std::to_string(v); }

// "Controlled By:\tKind/Name" for an object with a controller.
void PrintController(DescribeWriter& w, const api::ObjectMetaT& meta) {
  for (const auto& owner : meta.owner_references) {
    if (owner->controller.value_or(false)) {
      w.Write(0, "Controlled By:\t" + owner->kind + "/" + owner->name + "\n");
      return;
    }
  }
}

// The workload's conditions, as describe prints a Deployment's and a
// ReplicaSet's: "Type \tStatus\tReason".
template <typename Conditions>
void PrintConditions(DescribeWriter& w, const Conditions& conditions) {
  if (conditions.empty()) return;
  w.Write(0, "Conditions:\n  Type\tStatus\tReason\n");
  w.Write(1, "----\t------\t------\n");
  for (const auto& c : conditions) {
    w.Write(1, c->type + " \t" + ConditionStatusName(c->status) + "\t" + c->reason + "\n");
  }
}

// The pods `pods` of controller `uid` by phase (getPodStatusForController):
// "N Running / N Waiting / N Succeeded / N Failed".
std::string PodsStatus(std::span<const std::string> pods, const std::string& uid) {
  int running = 0, waiting = 0, succeeded = 0, failed = 0;
  for (const std::string& bytes : pods) {
    if (!model::VerifyObject(model::Kind("Pod"), bytes).ok()) continue;
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(bytes.data());
    const auto* refs = pod->metadata() != nullptr ? pod->metadata()->owner_references() : nullptr;
    if (refs == nullptr) continue;
    const bool controlled =
        std::any_of(refs->begin(), refs->end(), [&](const api::OwnerReference* r) {
          return r->controller().value_or(false) && r->uid() != nullptr && r->uid()->str() == uid;
        });
    if (!controlled || pod->status() == nullptr) continue;
    switch (pod->status()->phase()) {
      case api::PodPhase::Running:
        ++running;
        break;
      case api::PodPhase::Pending:
        ++waiting;
        break;
      case api::PodPhase::Succeeded:
        ++succeeded;
        break;
      case api::PodPhase::Failed:
        ++failed;
        break;
      default:
        break;
    }
  }
  return Int(running) + " Running / " + Int(waiting) + " Waiting / " + Int(succeeded) +
         " Succeeded / " + Int(failed) + " Failed";
}

// capIndexesListOrNone: the list cut after the comma past `limit` characters.
std::string CapIndexes(const std::string& indexes, size_t limit) {
  if (indexes.empty()) return "<none>";
  size_t at = limit;
  while (at < indexes.size() && indexes[at] != ',') ++at;
  if (at >= indexes.size()) return indexes;
  return indexes.substr(0, at + 1) + "...";
}

std::string Namespace(const api::ObjectMetaT& meta) {
  return meta.namespace_.empty() ? std::string("default") : meta.namespace_;
}

}  // namespace

void DescribePodTemplate(DescribeWriter& w, const api::PodTemplateSpecT* tmpl) {
  w.Write(0, "Pod Template:\n");
  if (tmpl == nullptr) {
    w.Write(1, "<unset>");
    return;
  }
  const Entries none;
  PrintLabelsMultiline(w, "  Labels", tmpl->metadata ? tmpl->metadata->labels : none);
  if (tmpl->metadata && !tmpl->metadata->annotations.empty()) {
    PrintAnnotationsMultiline(w, "  Annotations", tmpl->metadata->annotations);
  }
  const api::PodSpecT empty;
  const api::PodSpecT& spec = tmpl->spec ? *tmpl->spec : empty;
  if (!spec.service_account_name.empty())
    w.Write(1, "Service Account:\t" + spec.service_account_name + "\n");
  if (!spec.init_containers.empty())
    DescribeContainers(w, nullptr, "  ", "Init Containers", spec.init_containers, {});
  DescribeContainers(w, nullptr, "  ", "Containers", spec.containers, {});
  DescribeVolumes(w, spec.volumes, "  ");
  DescribeTopologySpread(w, spec.topology_spread_constraints, "  ");
  if (!spec.priority_class_name.empty())
    w.Write(1, "Priority Class Name:\t" + spec.priority_class_name + "\n");
  PrintLabelsMultiline(w, "  Node-Selectors", spec.node_selector);
  PrintTolerationsMultiline(w, "  Tolerations", spec.tolerations);
}

std::string DescribeDeployment(std::string_view bytes, std::span<const std::string> replica_sets,
                               std::span<const std::string> events, TimePoint now) {
  std::unique_ptr<api::DeploymentT> d = model::Unpack<api::Deployment>(bytes);
  if (!d->metadata) d->metadata = std::make_unique<api::ObjectMetaT>();
  if (!d->spec) d->spec = std::make_unique<api::DeploymentSpecT>();
  if (!d->status) d->status = std::make_unique<api::DeploymentStatusT>();
  const api::ObjectMetaT& meta = *d->metadata;
  const api::DeploymentSpecT& spec = *d->spec;
  const api::DeploymentStatusT& status = *d->status;
  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Namespace:\t" + Namespace(meta) + "\n");
  w.Write(0, "CreationTimestamp:\t" + FormatRfc1123Z(meta.creation_timestamp) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  w.Write(0, "Selector:\t" + FormatLabelSelector(spec.selector.get()) + "\n");
  w.Write(0, "Replicas:\t" + Int(spec.replicas.value_or(1)) + " desired | " +
                 Int(status.updated_replicas) + " updated | " + Int(status.replicas) + " total | " +
                 Int(status.available_replicas) + " available | " +
                 Int(status.unavailable_replicas) + " unavailable\n");
  const api::DeploymentStrategyType type =
      spec.strategy ? spec.strategy->type : api::DeploymentStrategyType::RollingUpdate;
  w.Write(0, std::string("StrategyType:\t") + api::EnumNameDeploymentStrategyType(type) + "\n");
  w.Write(0, "MinReadySeconds:\t" + Int(spec.min_ready_seconds) + "\n");
  if (spec.strategy && spec.strategy->rolling_update) {
    const api::RollingUpdateDeploymentT& ru = *spec.strategy->rolling_update;
    w.Write(0, "RollingUpdateStrategy:\t" + IntOrStringText(ru.max_unavailable.get()) +
                   " max unavailable, " + IntOrStringText(ru.max_surge.get()) + " max surge\n");
  }
  DescribePodTemplate(w, spec.template_.get());
  PrintConditions(w, status.conditions);
  // Its ReplicaSets: the one of its template (the oldest, if several) is
  // the new one; the others, oldest first, are old.
  const std::string tmpl_key = model::PodTemplateKey(model::Kind("Deployment"), bytes);
  struct Set {
    std::string name, created;
    int32_t replicas, desired;
    bool current;
  };
  std::vector<Set> sets;
  for (const std::string& rs_bytes : replica_sets) {
    if (!model::VerifyObject(model::Kind("ReplicaSet"), rs_bytes).ok()) continue;
    std::unique_ptr<api::ReplicaSetT> rs = model::Unpack<api::ReplicaSet>(rs_bytes);
    if (!rs->metadata) continue;
    const bool owned = std::any_of(
        rs->metadata->owner_references.begin(), rs->metadata->owner_references.end(),
        [&](const auto& r) { return r->controller.value_or(false) && r->uid == meta.uid; });
    if (!owned) continue;
    const bool current = model::PodTemplateKey(model::Kind("ReplicaSet"), rs_bytes) == tmpl_key;
    sets.push_back({rs->metadata->name, rs->metadata->creation_timestamp,
                    rs->status ? rs->status->replicas : 0,
                    rs->spec ? rs->spec->replicas.value_or(1) : 1, current});
  }
  std::stable_sort(sets.begin(), sets.end(), [](const Set& a, const Set& b) {
    return std::tie(a.created, a.name) < std::tie(b.created, b.name);
  });
  if (!sets.empty()) {
    auto text = [](const Set& s) {
      return s.name + " (" + Int(s.replicas) + "/" + Int(s.desired) + " replicas created)";
    };
    std::string old_sets, new_set;
    for (const Set& s : sets) {
      if (s.current && new_set.empty()) {
        new_set = text(s);
      } else {
        old_sets += (old_sets.empty() ? "" : ", ") + text(s);
      }
    }
    w.Write(0, "OldReplicaSets:\t" + (old_sets.empty() ? std::string("<none>") : old_sets) + "\n");
    w.Write(0, "NewReplicaSet:\t" + (new_set.empty() ? std::string("<none>") : new_set) + "\n");
  }
  DescribeEvents(w, EventsFor(events, "Deployment", Namespace(meta), meta.name, meta.uid), now);
  return w.String();
}

std::string DescribeReplicaSet(std::string_view bytes, std::span<const std::string> pods,
                               std::span<const std::string> events, TimePoint now) {
  std::unique_ptr<api::ReplicaSetT> rs = model::Unpack<api::ReplicaSet>(bytes);
  if (!rs->metadata) rs->metadata = std::make_unique<api::ObjectMetaT>();
  if (!rs->spec) rs->spec = std::make_unique<api::ReplicaSetSpecT>();
  if (!rs->status) rs->status = std::make_unique<api::ReplicaSetStatusT>();
  const api::ObjectMetaT& meta = *rs->metadata;
  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Namespace:\t" + Namespace(meta) + "\n");
  w.Write(0, "Selector:\t" + FormatLabelSelector(rs->spec->selector.get()) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  PrintController(w, meta);
  w.Write(0, "Replicas:\t" + Int(rs->status->replicas) + " current / " +
                 Int(rs->spec->replicas.value_or(1)) + " desired\n");
  w.Write(0, "Pods Status:\t" + PodsStatus(pods, meta.uid) + "\n");
  DescribePodTemplate(w, rs->spec->template_.get());
  PrintConditions(w, rs->status->conditions);
  DescribeEvents(w, EventsFor(events, "ReplicaSet", Namespace(meta), meta.name, meta.uid), now);
  return w.String();
}

std::string DescribeDaemonSet(std::string_view bytes, std::span<const std::string> pods,
                              std::span<const std::string> events, TimePoint now) {
  std::unique_ptr<api::DaemonSetT> ds = model::Unpack<api::DaemonSet>(bytes);
  if (!ds->metadata) ds->metadata = std::make_unique<api::ObjectMetaT>();
  if (!ds->spec) ds->spec = std::make_unique<api::DaemonSetSpecT>();
  if (!ds->status) ds->status = std::make_unique<api::DaemonSetStatusT>();
  const api::ObjectMetaT& meta = *ds->metadata;
  const api::DaemonSetStatusT& status = *ds->status;
  const Entries none;
  const api::PodTemplateSpecT* tmpl = ds->spec->template_.get();
  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Selector:\t" + FormatLabelSelector(ds->spec->selector.get()) + "\n");
  w.Write(0, "Node-Selector:\t" +
                 FormatLabels(tmpl && tmpl->spec ? tmpl->spec->node_selector : none) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  w.Write(0, "Desired Number of Nodes Scheduled: " + Int(status.desired_number_scheduled) + "\n");
  w.Write(0, "Current Number of Nodes Scheduled: " + Int(status.current_number_scheduled) + "\n");
  w.Write(0, "Number of Nodes Scheduled with Up-to-date Pods: " +
                 Int(status.updated_number_scheduled) + "\n");
  w.Write(0,
          "Number of Nodes Scheduled with Available Pods: " + Int(status.number_available) + "\n");
  w.Write(0, "Number of Nodes Misscheduled: " + Int(status.number_misscheduled) + "\n");
  w.Write(0, "Pods Status:\t" + PodsStatus(pods, meta.uid) + "\n");
  DescribePodTemplate(w, tmpl);
  DescribeEvents(w, EventsFor(events, "DaemonSet", Namespace(meta), meta.name, meta.uid), now);
  return w.String();
}

std::string DescribeJob(std::string_view bytes, std::span<const std::string> events,
                        TimePoint now) {
  std::unique_ptr<api::JobT> job = model::Unpack<api::Job>(bytes);
  if (!job->metadata) job->metadata = std::make_unique<api::ObjectMetaT>();
  if (!job->spec) job->spec = std::make_unique<api::JobSpecT>();
  if (!job->status) job->status = std::make_unique<api::JobStatusT>();
  const api::ObjectMetaT& meta = *job->metadata;
  const api::JobSpecT& spec = *job->spec;
  const api::JobStatusT& status = *job->status;
  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Namespace:\t" + Namespace(meta) + "\n");
  w.Write(0, "Selector:\t" + FormatLabelSelector(spec.selector.get()) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  PrintController(w, meta);
  if (spec.parallelism) w.Write(0, "Parallelism:\t" + Int(*spec.parallelism) + "\n");
  w.Write(0, "Completions:\t" +
                 (spec.completions ? Int(*spec.completions) : std::string("<unset>")) + "\n");
  if (spec.completion_mode != api::CompletionMode::Unset) {
    w.Write(0, std::string("Completion Mode:\t") +
                   api::EnumNameCompletionMode(spec.completion_mode) + "\n");
  }
  if (spec.suspend)
    w.Write(0, std::string("Suspend:\t") + (*spec.suspend ? "true" : "false") + "\n");
  if (spec.backoff_limit) w.Write(0, "Backoff Limit:\t" + Int(*spec.backoff_limit) + "\n");
  if (spec.ttl_seconds_after_finished) {
    w.Write(0, "TTL Seconds After Finished:\t" + Int(*spec.ttl_seconds_after_finished) + "\n");
  }
  if (!status.start_time.empty())
    w.Write(0, "Start Time:\t" + FormatRfc1123Z(status.start_time) + "\n");
  if (!status.completion_time.empty())
    w.Write(0, "Completed At:\t" + FormatRfc1123Z(status.completion_time) + "\n");
  if (!status.start_time.empty() && !status.completion_time.empty()) {
    const auto started = ParseRfc3339(status.start_time);
    const auto completed = ParseRfc3339(status.completion_time);
    if (started && completed)
      w.Write(0, "Duration:\t" + HumanDuration(*completed - *started) + "\n");
  }
  if (spec.active_deadline_seconds) {
    w.Write(0, "Active Deadline Seconds:\t" + Int(*spec.active_deadline_seconds) + "s\n");
  }
  std::string pods = Int(status.active) + " Active";
  if (status.ready) pods += " (" + Int(*status.ready) + " Ready)";
  w.Write(0, "Pods Statuses:\t" + pods + " / " + Int(status.succeeded) + " Succeeded / " +
                 Int(status.failed) + " Failed\n");
  if (spec.completion_mode == api::CompletionMode::Indexed) {
    w.Write(0, "Completed Indexes:\t" + CapIndexes(status.completed_indexes, 50) + "\n");
  }
  DescribePodTemplate(w, spec.template_.get());
  DescribeEvents(w, EventsFor(events, "Job", Namespace(meta), meta.name, meta.uid), now);
  return w.String();
}

}  // namespace podflow::cli
