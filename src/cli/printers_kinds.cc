// kubectl's table printers for the kinds beyond pods, nodes, services,
// endpoints and events: workloads, configuration, RBAC, namespaces, policy,
// storage, coordination and discovery (pkg/printers/internalversion).
#include <algorithm>

#include "cli/print_util.h"
#include "cli/printers_internal.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

using Row = std::vector<std::string>;

const api::ObjectMetaT& MetaOf(const std::unique_ptr<api::ObjectMetaT>& meta) {
  static const api::ObjectMetaT kNoMeta;
  return meta ? *meta : kNoMeta;
}

std::string Age(const std::unique_ptr<api::ObjectMetaT>& meta, TimePoint now) {
  return TimestampSince(MetaOf(meta).creation_timestamp, now);
}

// NAME ... AGE: the object's name first and its age last.
template <typename T>
Row Framed(const T& object, Row middle, TimePoint now) {
  Row row{MetaOf(object.metadata).name};
  for (std::string& cell : middle) row.push_back(std::move(cell));
  row.push_back(Age(object.metadata, now));
  return row;
}

std::string Int(int64_t v) { return std::to_string(v); }

// CONTAINERS and IMAGES of a pod template, as -o wide shows them.
void AddContainersAndImages(Row& row, const api::PodTemplateSpecT* tmpl) {
  std::vector<std::string> names;
  std::vector<std::string> images;
  if (tmpl && tmpl->spec) {
    for (const auto& c : tmpl->spec->containers) {
      names.push_back(c->name);
      images.push_back(c->image);
    }
  }
  row.push_back(Join(names, ","));
  row.push_back(Join(images, ","));
}

template <typename Spec>
void AddWorkloadWide(Row& row, const std::unique_ptr<Spec>& spec, bool with_selector = true) {
  AddContainersAndImages(row, spec ? spec->template_.get() : nullptr);
  if (with_selector) row.push_back(FormatLabelSelector(spec ? spec->selector.get() : nullptr));
}

// ---- apps/v1 ----

Row DeploymentRow(std::string_view bytes, bool wide, TimePoint now) {
  auto d = model::Unpack<api::Deployment>(bytes);
  const int64_t desired = d->spec ? d->spec->replicas.value_or(0) : 0;
  const api::DeploymentStatusT empty;
  const api::DeploymentStatusT& s = d->status ? *d->status : empty;
  Row row = Framed(*d, {Int(s.ready_replicas) + "/" + Int(desired), Int(s.updated_replicas), Int(s.available_replicas)},
                   now);
  if (wide) AddWorkloadWide(row, d->spec);
  return row;
}

Row ReplicaSetRow(std::string_view bytes, bool wide, TimePoint now) {
  auto rs = model::Unpack<api::ReplicaSet>(bytes);
  const api::ReplicaSetStatusT empty;
  const api::ReplicaSetStatusT& s = rs->status ? *rs->status : empty;
  Row row = Framed(*rs, {Int(rs->spec ? rs->spec->replicas.value_or(0) : 0), Int(s.replicas), Int(s.ready_replicas)},
                   now);
  if (wide) AddWorkloadWide(row, rs->spec);
  return row;
}

Row DaemonSetRow(std::string_view bytes, bool wide, TimePoint now) {
  auto ds = model::Unpack<api::DaemonSet>(bytes);
  const api::DaemonSetStatusT empty;
  const api::DaemonSetStatusT& s = ds->status ? *ds->status : empty;
  const Entries none;
  const Entries& selector =
      ds->spec && ds->spec->template_ && ds->spec->template_->spec ? ds->spec->template_->spec->node_selector : none;
  Row row = Framed(*ds,
                   {Int(s.desired_number_scheduled), Int(s.current_number_scheduled), Int(s.number_ready),
                    Int(s.updated_number_scheduled), Int(s.number_available), FormatLabels(selector)},
                   now);
  if (wide) AddWorkloadWide(row, ds->spec);
  return row;
}

Row StatefulSetRow(std::string_view bytes, bool wide, TimePoint now) {
  auto sts = model::Unpack<api::StatefulSet>(bytes);
  const int64_t ready = sts->status ? sts->status->ready_replicas : 0;
  Row row = Framed(*sts, {Int(ready) + "/" + Int(sts->spec ? sts->spec->replicas.value_or(0) : 0)}, now);
  if (wide) AddWorkloadWide(row, sts->spec, /*with_selector=*/false);
  return row;
}

// ---- batch/v1 ----

bool HasCondition(const api::JobStatusT* status, std::string_view type) {
  if (status == nullptr) return false;
  return std::any_of(status->conditions.begin(), status->conditions.end(), [&](const auto& c) {
    return c->type == type && c->status == api::ConditionStatus::True;
  });
}

Row JobRow(std::string_view bytes, bool wide, TimePoint now) {
  auto job = model::Unpack<api::Job>(bytes);
  const api::JobStatusT* s = job->status.get();
  std::string status = "Running";
  if (HasCondition(s, "Complete")) {
    status = "Complete";
  } else if (HasCondition(s, "Failed")) {
    status = "Failed";
  } else if (!MetaOf(job->metadata).deletion_timestamp.empty()) {
    status = "Terminating";
  } else if (HasCondition(s, "Suspended")) {
    status = "Suspended";
  } else if (HasCondition(s, "FailureTarget")) {
    status = "FailureTarget";
  } else if (HasCondition(s, "SuccessCriteriaMet")) {
    status = "SuccessCriteriaMet";
  }
  const int64_t succeeded = s ? s->succeeded : 0;
  std::string completions;
  if (job->spec && job->spec->completions.has_value()) {
    completions = Int(succeeded) + "/" + Int(*job->spec->completions);
  } else {
    const int64_t parallelism = job->spec ? job->spec->parallelism.value_or(0) : 0;
    completions = Int(succeeded) + "/1" + (parallelism > 1 ? " of " + Int(parallelism) : "");
  }
  std::string duration;
  if (s != nullptr && !s->start_time.empty()) {
    std::optional<TimePoint> start = ParseRfc3339(s->start_time);
    std::optional<TimePoint> end = s->completion_time.empty() ? now : ParseRfc3339(s->completion_time);
    if (start && end) duration = HumanDuration(*end - *start);
  }
  Row row = Framed(*job, {status, completions, duration}, now);
  if (wide) AddWorkloadWide(row, job->spec);
  return row;
}

Row CronJobRow(std::string_view bytes, bool wide, TimePoint now) {
  auto cj = model::Unpack<api::CronJob>(bytes);
  const api::CronJobSpecT empty;
  const api::CronJobSpecT& spec = cj->spec ? *cj->spec : empty;
  std::string suspend = spec.suspend.has_value() ? (*spec.suspend ? "True" : "False") : "<unset>";
  std::string last = cj->status && !cj->status->last_schedule_time.empty()
                         ? TimestampSince(cj->status->last_schedule_time, now)
                         : "<none>";
  Row row = Framed(*cj,
                   {spec.schedule, spec.time_zone.empty() ? "<none>" : spec.time_zone, suspend,
                    Int(cj->status ? static_cast<int64_t>(cj->status->active.size()) : 0), last},
                   now);
  if (wide) {
    const bool has = spec.job_template && spec.job_template->spec;
    AddContainersAndImages(row, has ? spec.job_template->spec->template_.get() : nullptr);
    row.push_back(FormatLabelSelector(has ? spec.job_template->spec->selector.get() : nullptr));
  }
  return row;
}

// ---- core/v1 configuration and namespaces ----

Row NamespaceRow(std::string_view bytes, bool, TimePoint now) {
  auto ns = model::Unpack<api::Namespace>(bytes);
  std::string phase = ns->status ? api::EnumNameNamespacePhase(ns->status->phase) : "";
  return Framed(*ns, {phase == "Unset" ? "" : phase}, now);
}

Row ConfigMapRow(std::string_view bytes, bool, TimePoint now) {
  auto cm = model::Unpack<api::ConfigMap>(bytes);
  return Framed(*cm, {Int(static_cast<int64_t>(cm->data.size() + cm->binary_data.size()))}, now);
}

Row SecretRow(std::string_view bytes, bool, TimePoint now) {
  auto secret = model::Unpack<api::Secret>(bytes);
  return Framed(*secret, {secret->type, Int(static_cast<int64_t>(secret->data.size()))}, now);
}

Row ServiceAccountRow(std::string_view bytes, bool, TimePoint now) {
  auto sa = model::Unpack<api::ServiceAccount>(bytes);
  return Framed(*sa, {Int(static_cast<int64_t>(sa->secrets.size()))}, now);
}

// NAME and CREATED AT, for the kinds kubectl prints so.
template <typename T>
Row CreatedAtRow(std::string_view bytes, bool, TimePoint) {
  auto object = model::Unpack<T>(bytes);
  const api::ObjectMetaT& meta = MetaOf(object->metadata);
  return {meta.name, meta.creation_timestamp};
}

// ---- rbac.authorization.k8s.io/v1 ----

template <typename T>
Row BindingRow(std::string_view bytes, bool wide, TimePoint now) {
  auto binding = model::Unpack<T>(bytes);
  std::string role = binding->role_ref ? binding->role_ref->kind + "/" + binding->role_ref->name : "";
  Row row = Framed(*binding, {role}, now);
  if (wide) {
    std::vector<std::string> users, groups, accounts;
    for (const auto& s : binding->subjects) {
      if (s->kind == "User") users.push_back(s->name);
      if (s->kind == "Group") groups.push_back(s->name);
      if (s->kind == "ServiceAccount") accounts.push_back(s->namespace_ + "/" + s->name);
    }
    row.push_back(Join(users, ", "));
    row.push_back(Join(groups, ", "));
    row.push_back(Join(accounts, ", "));
  }
  return row;
}

// ---- policy, scheduling, storage, coordination, discovery ----

Row PodDisruptionBudgetRow(std::string_view bytes, bool, TimePoint now) {
  auto pdb = model::Unpack<api::PodDisruptionBudget>(bytes);
  auto or_na = [](const std::unique_ptr<api::IntOrStringT>& v) { return v ? IntOrStringText(v.get()) : "N/A"; };
  const bool has = pdb->spec != nullptr;
  return Framed(*pdb,
                {has ? or_na(pdb->spec->min_available) : "N/A", has ? or_na(pdb->spec->max_unavailable) : "N/A",
                 Int(pdb->status ? pdb->status->disruptions_allowed : 0)},
                now);
}

Row PriorityClassRow(std::string_view bytes, bool, TimePoint now) {
  auto pc = model::Unpack<api::PriorityClass>(bytes);
  Row row = Framed(*pc, {Int(pc->value), pc->global_default ? "true" : "false"}, now);
  row.push_back(pc->preemption_policy == api::PreemptionPolicy::Unset
                    ? "PreemptLowerPriority"
                    : api::EnumNamePreemptionPolicy(pc->preemption_policy));
  return row;
}

Row StorageClassRow(std::string_view bytes, bool, TimePoint now) {
  auto sc = model::Unpack<api::StorageClass>(bytes);
  std::string name = MetaOf(sc->metadata).name;
  for (const auto& a : MetaOf(sc->metadata).annotations) {
    if ((a->key == "storageclass.kubernetes.io/is-default-class" ||
         a->key == "storageclass.beta.kubernetes.io/is-default-class") &&
        a->value == "true") {
      name += " (default)";
    }
  }
  Row row = Framed(*sc,
                   {sc->provisioner, api::EnumNamePersistentVolumeReclaimPolicy(sc->reclaim_policy),
                    api::EnumNameVolumeBindingMode(sc->volume_binding_mode),
                    sc->allow_volume_expansion.value_or(false) ? "true" : "false"},
                   now);
  row[0] = name;
  return row;
}

Row CSINodeRow(std::string_view bytes, bool, TimePoint now) {
  auto node = model::Unpack<api::CSINode>(bytes);
  return Framed(*node, {Int(node->spec ? static_cast<int64_t>(node->spec->drivers.size()) : 0)}, now);
}

Row CSIDriverRow(std::string_view bytes, bool, TimePoint now) {
  auto driver = model::Unpack<api::CSIDriver>(bytes);
  const api::CSIDriverSpecT empty;
  const api::CSIDriverSpecT& s = driver->spec ? *driver->spec : empty;
  auto flag = [](const flatbuffers::Optional<bool>& b) {
    return b.has_value() ? std::string(*b ? "true" : "false") : std::string("<unset>");
  };
  std::vector<std::string> audiences;
  for (const auto& t : s.token_requests) audiences.push_back(t->audience);
  return Framed(*driver,
                {flag(s.attach_required), flag(s.pod_info_on_mount), flag(s.storage_capacity),
                 audiences.empty() ? "<unset>" : Join(audiences, ","), flag(s.requires_republish),
                 Join(s.volume_lifecycle_modes, ",")},
                now);
}

// REQUEST and LIMIT: `name: used/hard` for each resource the status counts,
// in name order, the limits.* ones under LIMIT; empty until it is counted.
Row ResourceQuotaRow(std::string_view bytes, bool, TimePoint now) {
  auto quota = model::Unpack<api::ResourceQuota>(bytes);
  std::vector<std::pair<std::string, std::string>> hard;  // name, amount
  if (quota->status) {
    for (const auto& e : quota->status->hard) hard.emplace_back(e->key, e->value);
  }
  std::sort(hard.begin(), hard.end());
  auto used = [&](const std::string& name) -> std::string {
    for (const auto& e : quota->status->used) {
      if (e->key == name) return e->value;
    }
    return "0";
  };
  std::vector<std::string> requests;
  std::vector<std::string> limits;
  for (const auto& [name, amount] : hard) {
    (name.starts_with("limits.") ? limits : requests).push_back(name + ": " + used(name) + "/" + amount);
  }
  return {MetaOf(quota->metadata).name, Age(quota->metadata, now), Join(requests, ", "), Join(limits, ", ")};
}

Row LeaseRow(std::string_view bytes, bool, TimePoint now) {
  auto lease = model::Unpack<api::Lease>(bytes);
  return Framed(*lease, {lease->spec ? lease->spec->holder_identity : ""}, now);
}

Row EndpointSliceRow(std::string_view bytes, bool, TimePoint now) {
  auto slice = model::Unpack<api::EndpointSlice>(bytes);
  std::vector<std::string> ports;
  for (const auto& p : slice->ports) ports.push_back(p->port.has_value() ? Int(*p->port) : "<unset>");
  std::vector<std::string> addresses;
  for (const auto& e : slice->endpoints) {
    for (const std::string& a : e->addresses) addresses.push_back(a);
  }
  std::string endpoints = "<unset>";
  if (!addresses.empty()) {
    const size_t shown = std::min<size_t>(addresses.size(), 3);
    endpoints = Join(std::vector<std::string>(addresses.begin(), addresses.begin() + static_cast<long>(shown)), ",");
    if (addresses.size() > shown) endpoints += " + " + Int(static_cast<int64_t>(addresses.size() - shown)) + " more...";
  }
  return Framed(*slice,
                {api::EnumNameAddressType(slice->address_type), ports.empty() ? "<unset>" : Join(ports, ","),
                 endpoints},
                now);
}

const KindPrinter kPrinters[] = {
    {"Deployment", {"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, {"CONTAINERS", "IMAGES", "SELECTOR"},
     &DeploymentRow},
    {"ReplicaSet", {"NAME", "DESIRED", "CURRENT", "READY", "AGE"}, {"CONTAINERS", "IMAGES", "SELECTOR"},
     &ReplicaSetRow},
    {"DaemonSet",
     {"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"},
     {"CONTAINERS", "IMAGES", "SELECTOR"},
     &DaemonSetRow},
    {"StatefulSet", {"NAME", "READY", "AGE"}, {"CONTAINERS", "IMAGES"}, &StatefulSetRow},
    {"Job", {"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"}, {"CONTAINERS", "IMAGES", "SELECTOR"}, &JobRow},
    {"CronJob",
     {"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"},
     {"CONTAINERS", "IMAGES", "SELECTOR"},
     &CronJobRow},
    {"Namespace", {"NAME", "STATUS", "AGE"}, {}, &NamespaceRow},
    {"ConfigMap", {"NAME", "DATA", "AGE"}, {}, &ConfigMapRow},
    {"Secret", {"NAME", "TYPE", "DATA", "AGE"}, {}, &SecretRow},
    {"ServiceAccount", {"NAME", "SECRETS", "AGE"}, {}, &ServiceAccountRow},
    {"Role", {"NAME", "CREATED AT"}, {}, &CreatedAtRow<api::Role>},
    {"ClusterRole", {"NAME", "CREATED AT"}, {}, &CreatedAtRow<api::ClusterRole>},
    {"LimitRange", {"NAME", "CREATED AT"}, {}, &CreatedAtRow<api::LimitRange>},
    {"ResourceQuota", {"NAME", "AGE", "REQUEST", "LIMIT"}, {}, &ResourceQuotaRow},
    {"RoleBinding", {"NAME", "ROLE", "AGE"}, {"USERS", "GROUPS", "SERVICEACCOUNTS"}, &BindingRow<api::RoleBinding>},
    {"ClusterRoleBinding",
     {"NAME", "ROLE", "AGE"},
     {"USERS", "GROUPS", "SERVICEACCOUNTS"},
     &BindingRow<api::ClusterRoleBinding>},
    {"PodDisruptionBudget", {"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"}, {},
     &PodDisruptionBudgetRow},
    {"PriorityClass", {"NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"}, {}, &PriorityClassRow},
    {"StorageClass",
     {"NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"},
     {},
     &StorageClassRow},
    {"CSINode", {"NAME", "DRIVERS", "AGE"}, {}, &CSINodeRow},
    {"CSIDriver",
     {"NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES",
      "AGE"},
     {},
     &CSIDriverRow},
    {"Lease", {"NAME", "HOLDER", "AGE"}, {}, &LeaseRow},
    {"EndpointSlice", {"NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"}, {}, &EndpointSliceRow},
};

}  // namespace

const KindPrinter* FindKindPrinter(std::string_view kind) {
  for (const KindPrinter& p : kPrinters) {
    if (p.kind == kind) return &p;
  }
  return nullptr;
}

}  // namespace podflow::cli
