// Update, patch and delete of one stored object, as kube-apiserver's
// registry does them: preconditions, the fields the server owns, the status
// subresource, generation, the kind's update rules, and deletion with grace
// periods and finalizers.
#include <chrono>

#include "api_generated.h"
#include "base/clock.h"
#include "model/kind_types.h"
#include "model/labels.h"
#include "model/objects.h"
#include "stages/admission/admission.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/priority.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

template <typename T>
concept HasStatus = requires(T t) { t.status; };

// What an update runs besides the objects: the plugins, as whom, and when.
struct UpdateRun {
  const AdmissionChain& plugins;
  const ChangeContext& context;
  std::chrono::system_clock::time_point now;
  const NodePortAllocator& node_ports;
  std::mt19937_64& rng;
};

// Before validation, what the server hands out for the updated object
// (BeginUpdate): a Service's new node ports, the others' read into the
// context.
template <typename T>
std::optional<ApiStatusInfo> AllocateForUpdate(const model::KindInfo&, const T&, T&, const UpdateRun&) {
  return std::nullopt;
}
std::optional<ApiStatusInfo> AllocateForUpdate(const model::KindInfo& kind, const api::ServiceT& old,
                                               api::ServiceT& service, const UpdateRun& run) {
  std::set<int32_t> taken = run.context.cluster.taken_node_ports;
  return AssignNodePorts(kind, service, run.node_ports, taken, run.rng, old.spec.get());
}

template <typename T>
std::unique_ptr<T> Copy(const std::unique_ptr<T>& p) {
  return p ? std::make_unique<T>(*p) : nullptr;
}

// The object without metadata and status, packed: what metadata.generation
// counts changes of.
template <typename T>
std::string SpecBytes(const T& object) {
  T copy = object;
  copy.metadata.reset();
  if constexpr (HasStatus<T>) copy.status.reset();
  return model::Pack(copy);
}

ApiStatusInfo Unprocessable(std::string message) {
  ApiStatusInfo info;
  info.status = "Failure";
  info.code = 422;
  info.reason = "Invalid";
  info.message = std::move(message);
  return info;
}

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// A delete's precondition that the stored object fails: 409 Conflict, as
// kube-apiserver's BeforeDelete words it (the kind, not the resource).
ApiStatusInfo DeletePreconditionFailed(const model::KindInfo& kind, std::string_view name, const std::string& why) {
  ApiStatusInfo info = model::ConflictStatus(kind, name, why);
  const std::string_view group = model::ApiGroup(kind);
  info.message = "Operation cannot be fulfilled on " + std::string(kind.kind) +
                 (group.empty() ? "" : "." + std::string(group)) + " " + GoQuote(std::string(name)) + ": " + why;
  return info;
}

// A precondition of the request that the stored object (at `key`) fails, as
// kube-apiserver's storage words it: 409 Conflict.
ApiStatusInfo PreconditionFailed(const model::KindInfo& kind, std::string_view key, std::string_view name,
                                 std::string_view what, std::string_view wanted, std::string_view found) {
  return model::ConflictStatus(kind, name,
                               "StorageError: invalid object, Code: 4, Key: " + std::string(key) +
                                   ", ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: " +
                                   std::string(what) + " in precondition: " + std::string(wanted) + ", " +
                                   std::string(what) + " in object meta: " + std::string(found));
}

// The garbage collector's finalizers a delete leaves on the object: the
// request's propagationPolicy decides; without one, a finalizer the object
// already has, else the kind's default (a batch/v1 Job orphans its pods,
// every other kind deletes its dependents in the background). `orphan`
// and `foregroundDeletion` are taken off and put back at the end as decided.
std::vector<std::string> GarbageCollectorFinalizers(const model::KindInfo& kind, std::vector<std::string> finalizers,
                                                    const std::string& policy) {
  std::optional<bool> orphan, foreground;
  if (!policy.empty()) {
    orphan = policy == "Orphan";
    foreground = policy == "Foreground";
  }
  for (const std::string& f : finalizers) {
    if (!orphan && f == model::kOrphanFinalizer) orphan = true;
    if (!orphan && f == model::kForegroundFinalizer) orphan = false;
    if (!foreground && f == model::kForegroundFinalizer) foreground = true;
  }
  std::erase_if(finalizers, [](const std::string& f) { return f == model::kOrphanFinalizer || f == model::kForegroundFinalizer; });
  if (orphan.value_or(kind.kind == "Job")) finalizers.emplace_back(model::kOrphanFinalizer);
  if (foreground.value_or(false)) finalizers.emplace_back(model::kForegroundFinalizer);
  return finalizers;
}

// A namespace's own finalizers (spec.finalizers: `kubernetes`) hold it too.
template <typename T>
bool HasSpecFinalizers(const T&) {
  return false;
}
bool HasSpecFinalizers(const api::NamespaceT& ns) { return ns.spec != nullptr && !ns.spec->finalizers.empty(); }

// The plugins that look at updates, on the update of `old` to `next`:
// why not, or nullopt with what they charged and warned of in `out`.
template <typename T>
std::optional<ApiStatusInfo> UpdatePlugins(const model::KindInfo& kind, T& next, const T& old,
                                           std::string_view subresource, const UpdateRun& run, bool validating,
                                           RequestState& state) {
  const api::ObjectMetaT& meta = *next.metadata;
  Attributes attributes(kind, meta.namespace_, meta.name, run.context.user, &next, &old, std::string(subresource));
  return validating ? run.plugins.Validate(attributes, state) : run.plugins.Admit(attributes, state);
}

template <typename T>
ChangeOutcome UpdateTyped(const model::KindInfo& kind, const model::Object& object, const StoredObject& stored,
                          std::string_view subresource, const UpdateRun& run) {
  ChangeOutcome out;
  auto old = model::Unpack<typename T::TableType>(stored.bytes);
  auto next = model::Unpack<typename T::TableType>(object.bytes);
  if (std::optional<std::string> bad = DecodeError(*next)) {
    out.status = CannotBeHandled(kind, *bad);
    return out;
  }
  const api::ObjectMetaT& was = Ensure(old->metadata);
  api::ObjectMetaT& meta = Ensure(next->metadata);
  // Preconditions: the version the client read, and the object's identity.
  if (!meta.resource_version.empty() && meta.resource_version != std::to_string(stored.mod_revision)) {
    out.status = model::ConflictStatus(kind, was.name);
    return out;
  }
  if (!meta.uid.empty() && meta.uid != was.uid) {
    out.status = PreconditionFailed(kind, stored.key, was.name, "UID", meta.uid, was.uid);
    return out;
  }
  if (subresource == "status") {
    if constexpr (HasStatus<T>) {
      // Only the status changes; the rest is the stored object's. A
      // Deployment's annotations too may change here, as kube-apiserver's
      // status strategy for it lets them (the deployment controller
      // writes its revision so, without a new generation).
      auto status = std::move(next->status);
      auto annotations = std::move(meta.annotations);
      next = std::make_unique<T>(*old);
      next->status = std::move(status);
      if constexpr (std::is_same_v<T, api::DeploymentT>) next->metadata->annotations = std::move(annotations);
    } else {
      out.status = model::NoSuchResourceStatus();
      return out;
    }
  } else {
    // The server's fields carry over; a finalizer may not be added to an
    // object being deleted.
    if (!was.deletion_timestamp.empty()) {
      std::vector<std::string> added;
      for (const std::string& f : meta.finalizers) {
        if (!Contains(was.finalizers, f)) added.push_back(GoQuote(f));
      }
      if (!added.empty()) {
        std::string list;
        for (const std::string& a : added) list += (list.empty() ? "" : ", ") + a;
        out.status = InvalidStatus(
            kind, was.name,
            {FieldError::Forbidden("metadata.finalizers", "no new finalizers can be added if the object is being "
                                                          "deleted, found new finalizers []string{" + list + "}")});
        return out;
      }
    }
    meta.uid = was.uid;
    meta.name = was.name;
    meta.namespace_ = was.namespace_;
    meta.generate_name = was.generate_name;
    meta.creation_timestamp = was.creation_timestamp;
    meta.deletion_timestamp = was.deletion_timestamp;
    meta.deletion_grace_period_seconds = was.deletion_grace_period_seconds;
    meta.generation = was.generation;
    DefaultKind(*next);
    // After defaulting, which clears a new workload's status: an update
    // keeps the stored one.
    if constexpr (HasStatus<T>) next->status = Copy(old->status);
    KeepAllocated(*old, *next);
    // Defaulting stamps a new object's generation; an update keeps it.
    next->metadata->generation = was.generation;
  }
  next->metadata->resource_version.clear();
  next->metadata->self_link.clear();

  RequestPriorityClasses classes(run.context.cluster.priority_classes);
  RequestState state{.namespaces = run.context.cluster.namespaces,
                     .priority_classes = classes,
                     .limit_ranges = run.context.cluster.limit_ranges,
                     .quotas = run.context.cluster.quotas,
                     .service_accounts = run.context.cluster.service_accounts,
                     .now = run.now};
  if (auto refused = UpdatePlugins(kind, *next, *old, subresource, run, false, state)) {
    out.status = std::move(*refused);
    return out;
  }
  if (subresource.empty()) {
    if (auto refused = AllocateForUpdate(kind, *old, *next, run)) {
      out.status = std::move(*refused);
      return out;
    }
  }
  Causes causes = ValidateMeta(kind, *next->metadata);
  ValidateKind(*next, causes);
  ValidateUpdate(*old, *next, causes);
  if (!causes.empty()) {
    out.status = InvalidStatus(kind, was.name, std::move(causes));
    return out;
  }
  if (auto refused = UpdatePlugins(kind, *next, *old, subresource, run, true, state)) {
    out.status = std::move(*refused);
    return out;
  }
  for (auto& [key, quota] : state.document_quotas) out.quota_keys.push_back(key);
  if (!out.quota_keys.empty()) out.quota_usage = std::move(state.document_usage);
  out.warnings = std::move(state.document_warnings);
  // A Deployment's generation also counts its annotations, as
  // kube-apiserver's strategy for it does (once, its rollback request).
  bool bumped = SpecBytes(*old) != SpecBytes(*next);
  if constexpr (std::is_same_v<T, api::DeploymentT>) {
    bumped |= subresource.empty() && model::LabelsFromNative(old->metadata->annotations) !=
                                         model::LabelsFromNative(next->metadata->annotations);
  }
  if (was.generation > 0 && bumped) next->metadata->generation = was.generation + 1;

  out.bytes = model::Pack(*next);
  out.status = model::OkStatus(kind, was.name);
  if (out.bytes == stored.bytes) return out;  // nothing changed: nothing written
  if (out.bytes.size() > model::kMaxWriteBytes) {
    out.status = model::RequestEntityTooLargeStatus(static_cast<int64_t>(model::kMaxWriteBytes));
    return out;
  }
  // An object being deleted goes once its last finalizer does (a pod only
  // once the kubelet has stopped it: its grace period is then 0).
  const api::ObjectMetaT& now = *next->metadata;
  const bool graceful = now.deletion_grace_period_seconds.value_or(0) > 0;
  const bool held = !now.finalizers.empty() || HasSpecFinalizers(*next);
  out.write = !now.deletion_timestamp.empty() && !held && !graceful ? ChangeOutcome::Write::kDelete
                                                                    : ChangeOutcome::Write::kPut;
  if (out.write == ChangeOutcome::Write::kDelete) out.bytes = stored.bytes;
  return out;
}

// Seconds a pod gets to stop: the request's, else its spec's, else 30; none
// when no kubelet runs it (not scheduled, or finished).
int64_t PodGracePeriod(const api::PodT& pod, const DeleteOptions& options) {
  if (pod.spec == nullptr || pod.spec->node_name.empty()) return 0;
  if (pod.status != nullptr &&
      (pod.status->phase == api::PodPhase::Succeeded || pod.status->phase == api::PodPhase::Failed)) {
    return 0;
  }
  int64_t grace = options.grace_period_seconds.value_or(pod.spec->termination_grace_period_seconds.value_or(30));
  // A negative period is taken as the shortest one.
  return grace < 0 ? 1 : grace;
}

template <typename T>
int64_t GracePeriod(const T&, const DeleteOptions&) {
  return 0;
}
int64_t GracePeriod(const api::PodT& pod, const DeleteOptions& options) { return PodGracePeriod(pod, options); }

// A namespace being deleted is Terminating until its content is gone.
template <typename T>
void MarkTerminating(T&) {}
void MarkTerminating(api::NamespaceT& ns) { Ensure(ns.status).phase = api::NamespacePhase::Terminating; }

template <typename T>
ChangeOutcome DeleteTyped(const model::KindInfo& kind, const StoredObject& stored, const DeleteOptions& options,
                          std::chrono::system_clock::time_point now) {
  ChangeOutcome out;
  auto object = model::Unpack<typename T::TableType>(stored.bytes);
  api::ObjectMetaT& meta = Ensure(object->metadata);
  const std::string name = meta.name;
  // The request's preconditions, checked before anything (kube-apiserver's
  // BeforeDelete words them so).
  if (!options.precondition_uid.empty() && options.precondition_uid != meta.uid) {
    out.status = DeletePreconditionFailed(kind, name, "the UID in the precondition (" + options.precondition_uid +
                                                          ") does not match the UID in record (" + meta.uid +
                                                          "). The object might have been deleted and then recreated");
    return out;
  }
  const std::string revision = std::to_string(stored.mod_revision);
  if (!options.precondition_resource_version.empty() && options.precondition_resource_version != revision) {
    out.status = DeletePreconditionFailed(kind, name,
                                          "the ResourceVersion in the precondition (" +
                                              options.precondition_resource_version +
                                              ") does not match the ResourceVersion in record (" + revision +
                                              "). The object might have been modified");
    return out;
  }
  out.status = model::OkStatus(kind, name);
  int64_t grace = GracePeriod(*object, options);
  const bool deleting = !meta.deletion_timestamp.empty();
  const int64_t pending = meta.deletion_grace_period_seconds.value_or(0);
  if (deleting && pending > 0) {
    // A graceful deletion under way changes only for a shorter grace
    // period asked for; its finalizers are no longer the request's to change.
    if (!options.grace_period_seconds.has_value() || grace >= pending) {
      out.write = ChangeOutcome::Write::kNone;
      out.bytes = stored.bytes;
      return out;
    }
  } else if (deleting) {
    grace = 0;  // already marked deleting with nothing to wait for: never a grace period again
  }
  meta.finalizers = GarbageCollectorFinalizers(kind, std::move(meta.finalizers), options.propagation_policy);
  const bool waits = !meta.finalizers.empty() || grace > 0 || HasSpecFinalizers(*object);
  if (!waits) {
    out.write = ChangeOutcome::Write::kDelete;
    out.bytes = stored.bytes;
    return out;
  }
  if (!deleting) {
    meta.deletion_timestamp = FormatRfc3339(now + std::chrono::seconds(grace));
    meta.deletion_grace_period_seconds = grace;
  } else if (pending > 0) {
    // Shortened: from when the deletion was asked for, as kube-apiserver counts it.
    const std::optional<std::chrono::system_clock::time_point> was = ParseRfc3339(meta.deletion_timestamp);
    const auto asked = was ? *was - std::chrono::seconds(pending) : now;
    meta.deletion_timestamp = FormatRfc3339(asked + std::chrono::seconds(grace));
    meta.deletion_grace_period_seconds = grace;
  }
  MarkTerminating(*object);
  out.bytes = model::Pack(*object);
  out.write = out.bytes == stored.bytes ? ChangeOutcome::Write::kNone : ChangeOutcome::Write::kPut;
  return out;
}

}  // namespace

ChangeOutcome Admission::Update(const model::KindInfo& kind, std::string_view namespace_, std::string_view name,
                                std::string_view subresource, std::string_view object_text,
                                const StoredObject& stored, const ChangeContext& context) {
  ChangeOutcome out;
  if (object_text.size() > kMaxRequestBytes) {
    out.status = model::RequestEntityTooLargeStatus(kMaxRequestBytes);
    return out;
  }
  Result<std::vector<model::Decoded>> documents = model::DecodeManifests(object_text);
  if (!documents.ok()) {
    out.status = BadRequestStatus(documents.status().message());
    return out;
  }
  if (documents->size() != 1) {
    out.status = BadRequestStatus("an update takes exactly one object, not " + std::to_string(documents->size()));
    return out;
  }
  return UpdateDecoded(kind, namespace_, name, subresource, (*documents)[0], stored, context);
}

ChangeOutcome Admission::Patch(const model::KindInfo& kind, std::string_view namespace_, std::string_view name,
                               std::string_view subresource, model::PatchType type, std::string_view patch_text,
                               const StoredObject& stored, const ChangeContext& context) {
  ChangeOutcome out;
  if (patch_text.size() > kMaxRequestBytes) {
    out.status = model::RequestEntityTooLargeStatus(kMaxRequestBytes);
    return out;
  }
  Result<std::vector<model::Value>> patch = model::ParseYaml(patch_text);
  if (!patch.ok() || patch->size() != 1) {
    out.status = BadRequestStatus("error decoding patch: " +
                                  (patch.ok() ? "expected one document, found " + std::to_string(patch->size())
                                              : patch.status().message()));
    return out;
  }
  if (type == model::PatchType::kJson && (*patch)[0].kind() == model::Value::Kind::kArray &&
      (*patch)[0].items().size() > model::kMaxJsonPatchOperations) {
    out.status = model::RequestEntityTooLargeStatus(static_cast<int64_t>(model::kMaxJsonPatchOperations));
    out.status.message = "Request entity too large: The allowed count of operations in a JSON patch is " +
                         std::to_string(model::kMaxJsonPatchOperations) + ", while the request has " +
                         std::to_string((*patch)[0].items().size());
    return out;
  }
  // The patch sees the object as a client reads it, resourceVersion
  // included: a patch that names a stale one conflicts.
  model::Value current = model::ToValue(kind, stored.bytes);
  if (model::Value* meta = current.Find("metadata")) {
    meta->Set("resourceVersion", model::Value::String(std::to_string(stored.mod_revision)));
  }
  Result<model::Value> patched = model::ApplyPatch(type, kind, current, (*patch)[0]);
  if (!patched.ok()) {
    out.status = Unprocessable(patched.status().message());
    return out;
  }
  return UpdateDecoded(kind, namespace_, name, subresource, model::DecodeValue(*patched), stored, context);
}

ChangeOutcome Admission::UpdateDecoded(const model::KindInfo& kind, std::string_view namespace_,
                                       std::string_view name, std::string_view subresource,
                                       const model::Decoded& decoded, const StoredObject& stored,
                                       const ChangeContext& context) {
  ChangeOutcome out;
  if (!decoded.status.ok()) {
    out.status = DecodeFailure(decoded);
    return out;
  }
  const model::Object& object = decoded.object;
  if (object.kind != &kind) {
    out.status = BadRequestStatus("the kind of the object (" + std::string(object.kind->kind) +
                                  ") does not match the kind on the URL (" + std::string(kind.kind) + ")");
    return out;
  }
  if (object.name != name) {
    out.status = BadRequestStatus("the name of the object (" + object.name + ") does not match the name on the URL (" +
                                  std::string(name) + ")");
    return out;
  }
  if (kind.namespaced && !object.namespace_.empty() && object.namespace_ != namespace_) {
    out.status = BadRequestStatus("the namespace of the provided object does not match the namespace sent on the request");
    return out;
  }
  if (!subresource.empty() && subresource != "status") {
    out.status = model::NoSuchResourceStatus();
    return out;
  }
  const UpdateRun run{config_.plugins, context, clock_(), config_.node_ports, rng_};
  model::VisitKind(kind, [&]<typename T>() {
    out = UpdateTyped<typename T::NativeTableType>(kind, object, stored, subresource, run);
  });
  return out;
}

ChangeOutcome Admission::Delete(const model::KindInfo& kind, const StoredObject& stored, const DeleteOptions& options) {
  ChangeOutcome out;
  const std::string& policy = options.propagation_policy;
  if (!policy.empty() && policy != "Foreground" && policy != "Background" && policy != "Orphan") {
    out.status = Unprocessable("DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: " +
                               GoQuote(policy) + ": supported values: \"Foreground\", \"Background\", \"Orphan\"");
    return out;
  }
  model::VisitKind(kind, [&]<typename T>() { out = DeleteTyped<typename T::NativeTableType>(kind, stored, options, clock_()); });
  return out;
}

}  // namespace podflow::admission
