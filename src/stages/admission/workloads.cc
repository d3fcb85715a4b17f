// apps/v1 and batch/v1 kinds: the scheme's defaults (SetDefaults_Deployment,
// ...), a Job's generated selector, and the apps and batch validation with
// kube-apiserver's messages.
#include <algorithm>
#include <optional>
#include <set>

#include "model/cron_schedule.h"
#include "model/labels.h"
#include "model/objects.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"

namespace podflow::admission {
namespace {

std::unique_ptr<api::IntOrStringT> Percent(int value) {
  auto v = std::make_unique<api::IntOrStringT>();
  v->type = api::IntOrStringType::String;
  v->str_val = std::to_string(value) + "%";
  return v;
}

std::unique_ptr<api::IntOrStringT> Count(int value) {
  auto v = std::make_unique<api::IntOrStringT>();
  v->type = api::IntOrStringType::Int;
  v->int_val = value;
  return v;
}

// Go's %#v of a map[string]string, as validation messages print labels.
std::string GoMapLiteral(const std::vector<std::unique_ptr<api::StringEntryT>>& labels) {
  if (labels.empty()) return "map[string]string(nil)";
  std::string out = "map[string]string{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ", ";
    out += model::GoQuote(labels[i]->key) + ":" + model::GoQuote(labels[i]->value);
  }
  return out + "}";
}

void ValidateRollingUpdate(Causes& out, const std::string& path, const api::IntOrStringT* max_unavailable,
                           const api::IntOrStringT* max_surge) {
  const bool unavailable_zero = ValidateIntOrPercent(out, path + ".maxUnavailable", max_unavailable, true);
  const bool surge_zero = ValidateIntOrPercent(out, path + ".maxSurge", max_surge, false);
  if (unavailable_zero && (max_surge == nullptr || surge_zero)) {
    out.push_back(FieldError::InvalidRendered(path + ".maxUnavailable", GoIntOrString(*max_unavailable),
                                              "may not be 0 when `maxSurge` is 0"));
  }
}

// A DaemonSet's rolling update: one of maxUnavailable and maxSurge is 0,
// not both; maxSurge at most 100% too.
void ValidateDaemonSetRollingUpdate(Causes& out, const std::string& path, const api::IntOrStringT* max_unavailable,
                                    const api::IntOrStringT* max_surge) {
  const bool unavailable_zero =
      max_unavailable == nullptr || ValidateIntOrPercent(out, path + ".maxUnavailable", max_unavailable, true);
  const bool surge_zero = max_surge == nullptr || ValidateIntOrPercent(out, path + ".maxSurge", max_surge, true);
  if (unavailable_zero && surge_zero) {
    out.push_back(FieldError::Required(path + ".maxUnavailable", "cannot be 0 when maxSurge is 0"));
  } else if (!unavailable_zero && !surge_zero) {
    out.push_back(FieldError::InvalidRendered(path + ".maxSurge", GoIntOrString(*max_surge),
                                              "may not be set when maxUnavailable is non-zero"));
  }
}

// A workload's selector: required (a DaemonSet's is not said to be: its
// template simply does not match), not empty, well formed. `owner` words
// the empty-selector message as Kubernetes does ("deployment", ...).
void ValidateSelector(Causes& out, const std::string& path, const api::LabelSelectorT* selector,
                      std::string_view owner) {
  if (selector == nullptr) {
    if (owner != "daemonset") out.push_back(FieldError::Required(path));
    return;
  }
  if (selector->match_labels.empty() && selector->match_expressions.empty()) {
    out.push_back(FieldError::InvalidRendered(
        path,
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}",
        "empty selector is invalid for " + std::string(owner)));
    return;
  }
  ValidateLabelSelector(out, path, *selector);
}

// What a workload's pod template must be: present, labelled so that the
// selector picks it, a valid pod spec with one of `restart_policies`.
struct TemplateRules {
  std::vector<std::string> restart_policies;  // "Always", or "OnFailure" and "Never"
  std::string_view owner;                     // forbids activeDeadlineSeconds when set: "ReplicaSet"
  bool check_selector = true;                 // a CronJob's job template has no selector yet
  std::set<std::string> claim_volumes = {};   // a StatefulSet's volumeClaimTemplates, mountable
};

void ValidateTemplate(Causes& out, const std::string& path, const api::LabelSelectorT* selector,
                      const api::PodTemplateSpecT* tmpl, const TemplateRules& rules) {
  if (tmpl == nullptr || tmpl->spec == nullptr) {
    out.push_back(FieldError::Required(path));
    return;
  }
  static const api::ObjectMetaT kNoMeta;
  const api::ObjectMetaT& meta = tmpl->metadata ? *tmpl->metadata : kNoMeta;
  ValidateLabels(out, path + ".metadata.labels", meta.labels);
  // A missing selector selects nothing, so no template matches it.
  Result<model::LabelSelector> compiled = model::LabelSelector::FromNative(selector);
  if (rules.check_selector && compiled.ok() && !compiled->MatchesEverything() &&
      !compiled->Matches(model::LabelsFromNative(meta.labels))) {
    out.push_back(FieldError::InvalidRendered(path + ".metadata.labels", GoMapLiteral(meta.labels),
                                              "`selector` does not match template `labels`"));
  }
  const api::PodSpecT& spec = *tmpl->spec;
  for (FieldError& c : ValidatePodSpec(spec, path + ".spec", rules.claim_volumes)) out.push_back(std::move(c));
  const std::string policy(api::EnumNameRestartPolicy(spec.restart_policy));
  if (std::find(rules.restart_policies.begin(), rules.restart_policies.end(), policy) ==
      rules.restart_policies.end()) {
    if (rules.restart_policies.size() == 1) {
      out.push_back(FieldError::NotSupported(path + ".spec.restartPolicy", policy, rules.restart_policies));
    } else {
      // A Job's words: Required, naming the values it takes.
      std::string valid;
      for (const std::string& p : rules.restart_policies) valid += (valid.empty() ? "" : ", ") + model::GoQuote(p);
      out.push_back(FieldError::Required(path + ".spec.restartPolicy", "valid values: " + valid));
    }
  }
  if (!rules.owner.empty() && spec.active_deadline_seconds.has_value()) {
    out.push_back(FieldError::Forbidden(path + ".spec.activeDeadlineSeconds",
                                        "activeDeadlineSeconds in " + std::string(rules.owner) + " is not Supported"));
  }
}

// A workload's selector and the pod template it must select.
template <typename Spec>
void ValidateSelectedTemplate(Causes& out, const Spec& spec, std::string_view owner, const TemplateRules& rules) {
  ValidateSelector(out, "spec.selector", spec.selector.get(), owner);
  ValidateTemplate(out, "spec.template", spec.selector.get(), spec.template_.get(), rules);
}

const TemplateRules kReplicaSetTemplate{{"Always"}, "ReplicaSet"};
const TemplateRules kDaemonSetTemplate{{"Always"}, "DaemonSet"};
const TemplateRules kStatefulSetTemplate{{"Always"}, "StatefulSet"};
const TemplateRules kJobRestart{{"OnFailure", "Never"}, {}};
const TemplateRules kJobTemplateRestart{{"OnFailure", "Never"}, {}, false};

void ValidateOptionalNonnegative(Causes& out, const std::string& field, const flatbuffers::Optional<int32_t>& v) {
  if (v.has_value()) ValidateNonnegative(out, field, *v);
}
void ValidateOptionalNonnegative(Causes& out, const std::string& field, const flatbuffers::Optional<int64_t>& v) {
  if (v.has_value()) ValidateNonnegative(out, field, *v);
}

void DefaultJobSpec(api::JobSpecT& spec) {
  if (!spec.completions.has_value() && !spec.parallelism.has_value()) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (!spec.parallelism.has_value()) spec.parallelism = 1;
  if (!spec.backoff_limit.has_value()) {
    spec.backoff_limit = spec.backoff_limit_per_index.has_value() ? 2147483647 : 6;
  }
  if (spec.completion_mode == api::CompletionMode::Unset) spec.completion_mode = api::CompletionMode::NonIndexed;
  if (!spec.suspend.has_value()) spec.suspend = false;
  if (spec.pod_replacement_policy == api::PodReplacementPolicy::Unset) {
    spec.pod_replacement_policy =
        spec.pod_failure_policy ? api::PodReplacementPolicy::Failed : api::PodReplacementPolicy::TerminatingOrFailed;
  }
}

void ValidateJobSpec(Causes& out, const std::string& path, const api::JobSpecT& spec, bool selector_generated) {
  ValidateOptionalNonnegative(out, path + ".parallelism", spec.parallelism);
  ValidateOptionalNonnegative(out, path + ".completions", spec.completions);
  ValidateOptionalNonnegative(out, path + ".backoffLimit", spec.backoff_limit);
  if (spec.active_deadline_seconds.has_value()) {
    ValidateNonnegative(out, path + ".activeDeadlineSeconds", *spec.active_deadline_seconds);
  }
  if (spec.completion_mode == api::CompletionMode::Indexed && !spec.completions.has_value()) {
    out.push_back(FieldError::Required(path + ".completions", "when completion mode is Indexed"));
  }
  ValidateOptionalNonnegative(out, path + ".ttlSecondsAfterFinished", spec.ttl_seconds_after_finished);
  if (selector_generated) {
    ValidateSelector(out, path + ".selector", spec.selector.get(), "job");
  } else if (spec.selector) {
    ValidateLabelSelector(out, path + ".selector", *spec.selector);
  }
  ValidateTemplate(out, path + ".template", spec.selector.get(), spec.template_.get(),
                   selector_generated ? kJobRestart : kJobTemplateRestart);
}

}  // namespace

void DefaultKind(api::DeploymentT& d) {
  d.metadata->generation = 1;  // the spec's first generation
  api::DeploymentSpecT& spec = Ensure(d.spec);
  if (!spec.replicas.has_value()) spec.replicas = 1;
  api::DeploymentStrategyT& strategy = Ensure(spec.strategy);
  if (strategy.type == api::DeploymentStrategyType::Unset) strategy.type = api::DeploymentStrategyType::RollingUpdate;
  if (strategy.type == api::DeploymentStrategyType::RollingUpdate) {
    api::RollingUpdateDeploymentT& ru = Ensure(strategy.rolling_update);
    if (!ru.max_unavailable) ru.max_unavailable = Percent(25);
    if (!ru.max_surge) ru.max_surge = Percent(25);
  }
  if (!spec.revision_history_limit.has_value()) spec.revision_history_limit = 10;
  if (!spec.progress_deadline_seconds.has_value()) spec.progress_deadline_seconds = 600;
  DefaultPodTemplate(spec.template_);
  d.status.reset();  // the controller's to write
}

void DefaultKind(api::ReplicaSetT& rs) {
  rs.metadata->generation = 1;  // the spec's first generation
  api::ReplicaSetSpecT& spec = Ensure(rs.spec);
  if (!spec.replicas.has_value()) spec.replicas = 1;
  DefaultPodTemplate(spec.template_);
  rs.status.reset();
}

void DefaultKind(api::DaemonSetT& ds) {
  ds.metadata->generation = 1;  // the spec's first generation
  api::DaemonSetSpecT& spec = Ensure(ds.spec);
  api::DaemonSetUpdateStrategyT& strategy = Ensure(spec.update_strategy);
  if (strategy.type == api::DaemonSetUpdateStrategyType::Unset) {
    strategy.type = api::DaemonSetUpdateStrategyType::RollingUpdate;
  }
  if (strategy.type == api::DaemonSetUpdateStrategyType::RollingUpdate) {
    api::RollingUpdateDaemonSetT& ru = Ensure(strategy.rolling_update);
    if (!ru.max_unavailable) ru.max_unavailable = Count(1);
    if (!ru.max_surge) ru.max_surge = Count(0);
  }
  if (!spec.revision_history_limit.has_value()) spec.revision_history_limit = 10;
  DefaultPodTemplate(spec.template_);
  ds.status.reset();
}

void DefaultKind(api::StatefulSetT& sts) {
  sts.metadata->generation = 1;  // the spec's first generation
  api::StatefulSetSpecT& spec = Ensure(sts.spec);
  if (!spec.replicas.has_value()) spec.replicas = 1;
  if (spec.pod_management_policy == api::PodManagementPolicyType::Unset) {
    spec.pod_management_policy = api::PodManagementPolicyType::OrderedReady;
  }
  api::StatefulSetUpdateStrategyT& strategy = Ensure(spec.update_strategy);
  if (strategy.type == api::StatefulSetUpdateStrategyType::Unset) {
    // Only a strategy left to the default gets the default partition.
    strategy.type = api::StatefulSetUpdateStrategyType::RollingUpdate;
    api::RollingUpdateStatefulSetStrategyT& ru = Ensure(strategy.rolling_update);
    if (!ru.partition.has_value()) ru.partition = 0;
  }
  if (!spec.revision_history_limit.has_value()) spec.revision_history_limit = 10;
  auto& retention = Ensure(spec.persistent_volume_claim_retention_policy);
  if (retention.when_deleted == api::PersistentVolumeClaimRetentionPolicyType::Unset) {
    retention.when_deleted = api::PersistentVolumeClaimRetentionPolicyType::Retain;
  }
  if (retention.when_scaled == api::PersistentVolumeClaimRetentionPolicyType::Unset) {
    retention.when_scaled = api::PersistentVolumeClaimRetentionPolicyType::Retain;
  }
  for (auto& claim : spec.volume_claim_templates) {
    if (claim->spec && claim->spec->volume_mode == api::PersistentVolumeMode::Unset) {
      claim->spec->volume_mode = api::PersistentVolumeMode::Filesystem;
    }
    Ensure(claim->status).phase = api::PersistentVolumeClaimPhase::Pending;
  }
  DefaultPodTemplate(spec.template_);
  sts.status.reset();
}

void DefaultKind(api::JobT& job) {
  job.metadata->generation = 1;  // the spec's first generation
  api::JobSpecT& spec = Ensure(job.spec);
  DefaultJobSpec(spec);
  DefaultPodTemplate(spec.template_);
  // The job's own selector (unless the user picks one with manualSelector):
  // its uid, also labelled on the template with the job's name.
  api::ObjectMetaT& meta = *job.metadata;
  if (!spec.manual_selector.value_or(false)) {
    auto& labels = Ensure(spec.template_->metadata).labels;
    SetEntry(labels, "batch.kubernetes.io/controller-uid", meta.uid);
    SetEntry(labels, "batch.kubernetes.io/job-name", meta.name);
    SetEntry(labels, "controller-uid", meta.uid);
    SetEntry(labels, "job-name", meta.name);
    spec.selector = std::make_unique<api::LabelSelectorT>();
    SetEntry(spec.selector->match_labels, "batch.kubernetes.io/controller-uid", meta.uid);
  }
  // A job without labels of its own takes its template's.
  if (meta.labels.empty() && spec.template_->metadata) {
    for (const auto& e : spec.template_->metadata->labels) SetEntry(meta.labels, e->key, e->value);
  }
  job.status.reset();
}

void DefaultKind(api::CronJobT& cj) {
  cj.metadata->generation = 1;  // the spec's first generation
  api::CronJobSpecT& spec = Ensure(cj.spec);
  if (spec.concurrency_policy == api::ConcurrencyPolicy::Unset) spec.concurrency_policy = api::ConcurrencyPolicy::Allow;
  if (!spec.suspend.has_value()) spec.suspend = false;
  if (!spec.successful_jobs_history_limit.has_value()) spec.successful_jobs_history_limit = 3;
  if (!spec.failed_jobs_history_limit.has_value()) spec.failed_jobs_history_limit = 1;
  DefaultPodTemplate(Ensure(Ensure(spec.job_template).spec).template_);
  cj.status.reset();
}

void ValidateKind(const api::DeploymentT& d, Causes& out) {
  if (!d.spec) return;
  const api::DeploymentSpecT& spec = *d.spec;
  ValidateOptionalNonnegative(out, "spec.replicas", spec.replicas);
  ValidateSelectedTemplate(out, spec, "deployment", kReplicaSetTemplate);
  if (spec.strategy) {
    const api::DeploymentStrategyT& strategy = *spec.strategy;
    if (strategy.type == api::DeploymentStrategyType::Recreate && strategy.rolling_update) {
      out.push_back(FieldError::Forbidden("spec.strategy.rollingUpdate",
                                          "may not be specified when strategy `type` is 'Recreate'"));
    } else if (strategy.rolling_update) {
      ValidateRollingUpdate(out, "spec.strategy.rollingUpdate", strategy.rolling_update->max_unavailable.get(),
                            strategy.rolling_update->max_surge.get());
    }
  }
  ValidateNonnegative(out, "spec.minReadySeconds", spec.min_ready_seconds);
  ValidateOptionalNonnegative(out, "spec.revisionHistoryLimit", spec.revision_history_limit);
  if (spec.progress_deadline_seconds.has_value()) {
    ValidateNonnegative(out, "spec.progressDeadlineSeconds", *spec.progress_deadline_seconds);
    if (*spec.progress_deadline_seconds <= spec.min_ready_seconds) {
      out.push_back(FieldError::InvalidInt("spec.progressDeadlineSeconds", *spec.progress_deadline_seconds,
                                           "must be greater than minReadySeconds"));
    }
  }
}

void ValidateKind(const api::ReplicaSetT& rs, Causes& out) {
  if (!rs.spec) return;
  const api::ReplicaSetSpecT& spec = *rs.spec;
  ValidateOptionalNonnegative(out, "spec.replicas", spec.replicas);
  ValidateNonnegative(out, "spec.minReadySeconds", spec.min_ready_seconds);
  ValidateSelectedTemplate(out, spec, "deployment", kReplicaSetTemplate);
}

void ValidateKind(const api::DaemonSetT& ds, Causes& out) {
  if (!ds.spec) return;
  const api::DaemonSetSpecT& spec = *ds.spec;
  ValidateSelectedTemplate(out, spec, "daemonset", kDaemonSetTemplate);
  ValidateNonnegative(out, "spec.minReadySeconds", spec.min_ready_seconds);
  ValidateOptionalNonnegative(out, "spec.revisionHistoryLimit", spec.revision_history_limit);
  if (spec.update_strategy && spec.update_strategy->rolling_update) {
    ValidateDaemonSetRollingUpdate(out, "spec.updateStrategy.rollingUpdate",
                          spec.update_strategy->rolling_update->max_unavailable.get(),
                          spec.update_strategy->rolling_update->max_surge.get());
  }
}

void ValidateKind(const api::StatefulSetT& sts, Causes& out) {
  if (!sts.spec) return;
  const api::StatefulSetSpecT& spec = *sts.spec;
  ValidateOptionalNonnegative(out, "spec.replicas", spec.replicas);
  TemplateRules rules = kStatefulSetTemplate;
  for (const auto& claim : spec.volume_claim_templates) {
    if (claim->metadata) rules.claim_volumes.insert(claim->metadata->name);
  }
  ValidateSelectedTemplate(out, spec, "statefulset", rules);
  ValidateNonnegative(out, "spec.minReadySeconds", spec.min_ready_seconds);
  ValidateOptionalNonnegative(out, "spec.revisionHistoryLimit", spec.revision_history_limit);
  if (spec.update_strategy && spec.update_strategy->rolling_update) {
    ValidateOptionalNonnegative(out, "spec.updateStrategy.rollingUpdate.partition",
                                spec.update_strategy->rolling_update->partition);
  }
  std::set<std::string> claims;
  for (size_t i = 0; i < spec.volume_claim_templates.size(); ++i) {
    const auto& claim = *spec.volume_claim_templates[i];
    const std::string at = Index("spec.volumeClaimTemplates", i);
    const std::string name = claim.metadata ? claim.metadata->name : "";
    if (name.empty()) {
      out.push_back(FieldError::Required(at + ".metadata.name", "name or generateName is required"));
    } else if (!claims.insert(name).second) {
      out.push_back(FieldError::Duplicate(at + ".metadata.name", name));
    }
  }
}

void ValidateKind(const api::JobT& job, Causes& out) {
  if (!job.spec) return;
  ValidateJobSpec(out, "spec", *job.spec, /*selector_generated=*/true);
}

void ValidateKind(const api::CronJobT& cj, Causes& out) {
  if (!cj.spec) return;
  const api::CronJobSpecT& spec = *cj.spec;
  if (spec.schedule.empty()) {
    out.push_back(FieldError::Required("spec.schedule"));
  } else if (Result<model::CronSchedule> schedule = model::CronSchedule::Parse(spec.schedule); !schedule.ok()) {
    out.push_back(FieldError::Invalid("spec.schedule", spec.schedule, schedule.status().message()));
  }
  ValidateOptionalNonnegative(out, "spec.startingDeadlineSeconds", spec.starting_deadline_seconds);
  ValidateOptionalNonnegative(out, "spec.successfulJobsHistoryLimit", spec.successful_jobs_history_limit);
  ValidateOptionalNonnegative(out, "spec.failedJobsHistoryLimit", spec.failed_jobs_history_limit);
  if (!spec.job_template || !spec.job_template->spec) {
    out.push_back(FieldError::Required("spec.jobTemplate"));
    return;
  }
  ValidateJobSpec(out, "spec.jobTemplate.spec", *spec.job_template->spec, /*selector_generated=*/false);
}

// ---- Updates ----

namespace {

// Go's %#v of a label selector, as an immutable-field message prints it:
// `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"},
// MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`.
std::string GoSelector(const api::LabelSelectorT* selector) {
  if (selector == nullptr) return "(*v1.LabelSelector)(nil)";
  std::string labels = "map[string]string(nil)";
  if (!selector->match_labels.empty()) {
    labels = "map[string]string{";
    for (size_t i = 0; i < selector->match_labels.size(); ++i) {
      labels += (i ? ", " : "") + GoQuote(selector->match_labels[i]->key) + ":" + GoQuote(selector->match_labels[i]->value);
    }
    labels += "}";
  }
  std::string expressions = "[]v1.LabelSelectorRequirement(nil)";
  if (!selector->match_expressions.empty()) {
    expressions = "[]v1.LabelSelectorRequirement{";
    for (size_t i = 0; i < selector->match_expressions.size(); ++i) {
      const api::LabelSelectorRequirementT& r = *selector->match_expressions[i];
      const std::string values = r.values.empty() ? "[]string(nil)" : GoStrings(r.values);
      expressions += std::string(i ? ", " : "") + "v1.LabelSelectorRequirement{Key:" + GoQuote(r.key) +
                     ", Operator:" + GoQuote(api::EnumNameLabelSelectorOperator(r.operator_)) + ", Values:" + values + "}";
    }
    expressions += "}";
  }
  return "v1.LabelSelector{MatchLabels:" + labels + ", MatchExpressions:" + expressions + "}";
}

std::string Packed(const api::LabelSelectorT* selector) {
  if (selector == nullptr) return {};
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(api::LabelSelector::Pack(fbb, selector));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

// A workload's selector is fixed once created (apps/v1).
template <typename Spec>
void SelectorImmutable(const std::unique_ptr<Spec>& old, const std::unique_ptr<Spec>& now, Causes& out) {
  if (old == nullptr || now == nullptr) return;
  if (Packed(old->selector.get()) == Packed(now->selector.get())) return;
  out.push_back(FieldError::InvalidRendered("spec.selector", GoSelector(now->selector.get()), "field is immutable"));
}

}  // namespace

void ValidateUpdate(const api::DeploymentT& old, const api::DeploymentT& d, Causes& out) {
  SelectorImmutable(old.spec, d.spec, out);
}
void ValidateUpdate(const api::ReplicaSetT& old, const api::ReplicaSetT& rs, Causes& out) {
  SelectorImmutable(old.spec, rs.spec, out);
}
void ValidateUpdate(const api::DaemonSetT& old, const api::DaemonSetT& ds, Causes& out) {
  SelectorImmutable(old.spec, ds.spec, out);
}
void ValidateUpdate(const api::JobT& old, const api::JobT& job, Causes& out) {
  SelectorImmutable(old.spec, job.spec, out);
}

void ValidateUpdate(const api::StatefulSetT& old, const api::StatefulSetT& sts, Causes& out) {
  if (old.spec == nullptr || sts.spec == nullptr) return;
  // Only these may change; the rest of the spec compares as it was.
  api::StatefulSetT a, b;
  a.spec = std::make_unique<api::StatefulSetSpecT>(*old.spec);
  b.spec = std::make_unique<api::StatefulSetSpecT>(*sts.spec);
  for (api::StatefulSetSpecT* spec : {a.spec.get(), b.spec.get()}) {
    spec->replicas.reset();
    spec->template_.reset();
    spec->update_strategy.reset();
    spec->persistent_volume_claim_retention_policy.reset();
    spec->min_ready_seconds = 0;
    spec->ordinals.reset();
    spec->revision_history_limit.reset();
  }
  if (model::Pack(a) != model::Pack(b)) {
    out.push_back(FieldError::Forbidden(
        "spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
  }
}

}  // namespace podflow::admission
