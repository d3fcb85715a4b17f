// The API verbs on one resource, as kube-apiserver serves them over REST:
// authenticate, authorize the verb, then read, or decide the change with
// Admission on the stored object and write it guarded by the revision it
// was decided on (decided again if another writer came first).
#include <algorithm>

#include "base/logging.h"
#include "client/update.h"
#include "client/wire.h"
#include "model/fields.h"
#include "model/kind_types.h"
#include "model/labels.h"
#include "model/objects.h"
#include "stages/admission/admission_stage.h"
#include "stages/admission/api_common.h"

namespace podflow::admission {
namespace {

// A reply: the status, the objects it carries, the revision it reflects.
bus::ReplyBody Reply(flatbuffers::FlatBufferBuilder& fbb, const ApiStatusInfo& status,
                     const std::vector<KeyValue>& objects = {}, int64_t revision = 0,
                     const std::string& continue_token = {}, const std::vector<std::string>& warnings = {}) {
  std::vector<flatbuffers::Offset<msg::KeyValue>> kvs;
  for (const KeyValue& kv : objects) kvs.push_back(client::ToMsg(fbb, kv));
  auto written = WriteApiStatus(fbb, status);
  auto reply = msg::CreateApiReply(fbb, written, fbb.CreateVector(kvs), revision,
                                   continue_token.empty() ? 0 : fbb.CreateString(continue_token),
                                   warnings.empty() ? 0 : fbb.CreateVectorOfStrings(warnings));
  return {msg::Body::ApiReply, reply.Union()};
}

bus::ReplyBody Failed(flatbuffers::FlatBufferBuilder& fbb, const ApiStatusInfo& status) { return Reply(fbb, status); }

ApiStatusInfo Unavailable(const Status& s) { return InternalErrorStatus(s.ToString()); }

// The body of a create as the URL places it: exactly one object, of the
// URL's kind, in the URL's namespace (given it when it names none). Checked
// before anything is admitted or written.
Result<std::string> CreateBody(const model::KindInfo& kind, const std::string& ns, std::string_view text) {
  if (text.size() > Admission::kMaxRequestBytes) return std::string(text);  // refused as too large by admission
  Result<std::vector<model::Value>> docs = model::ParseYaml(text);
  if (!docs.ok()) return docs.status();
  std::erase_if(*docs, [](const model::Value& v) { return v.kind() == model::Value::Kind::kNull; });
  if (docs->size() != 1 || (*docs)[0].kind() != model::Value::Kind::kObject) {
    return Status::Invalid("a create takes exactly one object, not " + std::to_string(docs->size()));
  }
  model::Value& object = (*docs)[0];
  auto text_of = [&](const model::Value* v) {
    return v != nullptr && v->kind() == model::Value::Kind::kString ? v->string_value() : std::string();
  };
  const std::string body_kind = text_of(object.Find("kind"));
  if (model::FindKind(text_of(object.Find("apiVersion")), body_kind) != &kind) {
    return Status::Invalid("the kind of the object (" + body_kind + ") does not match the kind on the URL (" +
                           std::string(kind.kind) + ")");
  }
  if (!kind.namespaced) return std::string(text);
  model::Value* meta = object.Find("metadata");
  if (meta == nullptr || meta->kind() != model::Value::Kind::kObject) return std::string(text);  // refused later
  const std::string body_ns = text_of(meta->Find("namespace"));
  if (!body_ns.empty() && body_ns != ns) {
    return Status::Invalid("the namespace of the provided object does not match the namespace sent on the request");
  }
  if (!body_ns.empty()) return std::string(text);
  if (model::Value* empty = meta->Find("namespace")) {
    *empty = model::Value::String(ns);
  } else {
    meta->Set("namespace", model::Value::String(ns));
  }
  return model::ToJson(object);
}

// The namespaces kube-apiserver never lets go.
bool Immortal(std::string_view ns) { return ns == "default" || ns == "kube-system" || ns == "kube-public"; }

// Whether the kind has a status (and so a status subresource).
bool HasStatus(const model::KindInfo& kind) {
  bool has = false;
  model::VisitKind(kind, [&]<typename T>() { has = requires(typename T::NativeTableType t) { t.status; }; });
  return has;
}

}  // namespace

bool Selection::Selects(const model::KindInfo& kind, const KeyValue& kv) const {
  static auto log = Logger("stage.admission");
  const bool everything = labels.MatchesEverything() && fields.empty();
  if (!model::VerifyObject(kind, kv.value).ok()) {
    log->warn("{} is not a valid {}", kv.key, kind.kind);
    return everything;  // no selector can say it is selected
  }
  if (everything) return true;
  const model::Value object = model::ToValue(kind, kv.value);
  return labels.Matches(model::LabelsOf(object)) && fields.Matches(object);
}

Result<Selection> ParseSelection(const model::KindInfo& kind, const msg::ApiRequest& request) {
  Selection s;
  Result<model::LabelSelector> labels = model::ParseLabelSelector(Text(request.label_selector()));
  if (!labels.ok()) return labels.status();
  Result<model::FieldSelector> fields = model::FieldSelector::Parse(kind, Text(request.field_selector()));
  if (!fields.ok()) return fields.status();
  s.labels = std::move(*labels);
  s.fields = std::move(*fields);
  return s;
}

client::Mutation MutationOf(const ChangeOutcome& decided, bool dry_run) {
  if (!decided.ok() || dry_run || decided.write == ChangeOutcome::Write::kNone) return client::Mutation::Skip();
  return decided.write == ChangeOutcome::Write::kDelete ? client::Mutation::Delete()
                                                        : client::Mutation::Put(decided.bytes);
}

bus::ReplyBody AdmissionStage::HandleApi(Worker& worker, const msg::ApiRequest& request, std::string_view peer,
                                         flatbuffers::FlatBufferBuilder& fbb) {
  static auto log = Logger("stage.admission");
  Result<UserInfo> user = config_.authenticator.Authenticate(Text(request.token()), peer);
  if (!user.ok()) return Failed(fbb, UnauthorizedStatus());
  const std::string verb = Text(request.verb());
  const model::KindInfo* kind = model::FindResource(Text(request.resource()));
  if (kind == nullptr) return Failed(fbb, model::NoSuchResourceStatus());
  static constexpr std::string_view kVerbs[] = {"get",   "list",   "create",          "update",
                                                "patch", "delete", "deletecollection"};
  if (std::find(std::begin(kVerbs), std::end(kVerbs), verb) == std::end(kVerbs)) {
    return Failed(fbb, BadRequestStatus("the verb " + GoQuote(verb) + " is not supported"));
  }
  const std::string name = Text(request.name());
  const std::string subresource = Text(request.subresource());
  // The subresources served: a status, read or written, a pod's log and
  // exec; any other names nothing here.
  const bool pod_log = subresource == "log" && verb == "get" && kind->kind == "Pod";
  const bool pod_exec = subresource == "exec" && verb == "create" && kind->kind == "Pod";
  if (!subresource.empty() && !pod_log && !pod_exec &&
      (subresource != "status" || (verb != "get" && verb != "update" && verb != "patch") || !HasStatus(*kind))) {
    return Failed(fbb, model::NoSuchResourceStatus());
  }
  std::string ns = kind->namespaced ? Text(request.namespace_()) : "";
  // A namespaced request names its namespace; only a list may span them all.
  if (kind->namespaced && ns.empty() && verb != "list") ns = "default";
  // A request on one Namespace is asked in that namespace, so that a
  // RoleBinding there can grant it.
  const std::string asked_ns = kind->kind == "Namespace" && !name.empty() ? name : ns;
  const RequestAttributes asked{verb, std::string(model::ApiGroup(*kind)), std::string(kind->resource), subresource,
                                asked_ns, verb == "list" || verb == "deletecollection" ? "" : name};
  if (!config_.authorizer.Allows(*user, asked)) {
    return Failed(fbb, ForbiddenStatus(user->name, verb, *kind, asked_ns, asked.name, subresource));
  }
  // The namespaces the cluster needs may not be deleted (NamespaceLifecycle).
  if (kind->kind == "Namespace" && verb == "delete" && Immortal(name)) {
    return Failed(fbb, model::AdmissionForbiddenStatus(*kind, name, "this namespace may not be deleted"));
  }
  const bool named = pod_exec || (verb != "list" && verb != "create" && verb != "deletecollection");
  if (named && name.empty()) return Failed(fbb, BadRequestStatus("resource name may not be empty"));
  if (pod_log) return HandlePodLog(worker, request, ns, name, fbb);
  if (pod_exec) return HandlePodExec(worker, request, *user, ns, name, fbb);
  const std::string key = model::ObjectKey(*kind, ns, name);
  const bool dry_run = request.dry_run();

  if (verb == "create") {
    Result<std::string> body = CreateBody(*kind, ns, Bytes(request.body()));
    if (!body.ok()) return Failed(fbb, BadRequestStatus(body.status().message()));
    Created created = CreateObjects(worker, *user, *body, dry_run);
    if (created.failure) return Failed(fbb, *created.failure);
    if (created.results.size() != 1) {
      return Failed(fbb, BadRequestStatus("a create takes exactly one object, not " +
                                          std::to_string(created.results.size())));
    }
    const AdmissionOutcome& o = created.results[0];
    if (!o.admitted()) return Failed(fbb, o.status);
    KeyValue kv{o.key, o.bytes, Revision(created.revisions[0]), Revision(created.revisions[0]), 1};
    return Reply(fbb, o.status, {kv}, created.revisions[0], {}, o.warnings);
  }

  if (verb == "get") {
    Result<std::optional<KeyValue>> stored = worker.client.Get(key);
    if (!stored.ok()) return Failed(fbb, Unavailable(stored.status()));
    // A value that is not a valid object goes out as it is, for the client
    // (which verifies what it reads) to name.
    if (!stored->has_value()) return Failed(fbb, NotFoundStatus(*kind, name));
    return Reply(fbb, model::OkStatus(*kind, name), {**stored}, (*stored)->mod_revision.value());
  }

  if (verb == "list" || verb == "deletecollection") {
    Result<Selection> selection = ParseSelection(*kind, request);
    if (!selection.ok()) return Failed(fbb, BadRequestStatus(selection.status().message()));
    // A page when asked for one (?limit=, ?continue=), else everything.
    const bool paged = verb == "list" && (request.limit() > 0 || !Text(request.continue_token()).empty());
    RangeRequest page = RangeRequest::Prefix(model::KindPrefix(*kind, ns));
    page.limit = request.limit();
    page.continue_token = Text(request.continue_token());
    Result<RangeResult> all = paged ? worker.client.Read(page) : worker.client.List(page.key);
    if (!all.ok()) {
      if (all.status().code() == Code::kCompacted) {
        return Failed(fbb, model::ApiStatusInfo{"Failure", 410, "Expired",
                                                "The provided continue parameter is too old to display a consistent "
                                                "list result. You can start a new list without the continue parameter.",
                                                {}});
      }
      if (all.status().code() == Code::kInvalid) return Failed(fbb, BadRequestStatus(all.status().message()));
      return Failed(fbb, Unavailable(all.status()));
    }
    std::vector<KeyValue> selected;
    for (KeyValue& kv : all->kvs) {
      if (selection->Selects(*kind, kv)) selected.push_back(std::move(kv));
    }
    if (verb == "list") {
      return Reply(fbb, model::OkStatus(*kind, ""), selected, all->revision.value(),
                   all->more ? all->continue_token : std::string());
    }
    // deletecollection: each selected object as a delete of its own.
    DeleteOptions options;
    if (request.grace_period_seconds()) options.grace_period_seconds = *request.grace_period_seconds();
    options.propagation_policy = Text(request.propagation_policy());
    options.precondition_uid = Text(request.precondition_uid());
    options.precondition_resource_version = Text(request.precondition_resource_version());
    std::vector<KeyValue> deleted;
    int64_t revision = all->revision.value();
    for (const KeyValue& kv : selected) {
      if (kind->kind == "Namespace" && Immortal(kv.key.substr(kv.key.rfind('/') + 1))) continue;
      ChangeOutcome decided;
      client::UpdateItem item;
      item.key = kv.key;
      item.known = kv;
      item.mutate = [&](const KeyValue* current, bool) -> client::Mutation {
        if (current == nullptr || !model::VerifyObject(*kind, current->value).ok()) {
          decided = ChangeOutcome{};
          return client::Mutation::Skip();
        }
        decided = worker.admission.Delete(*kind, {current->key, current->value, current->mod_revision.value()}, options);
        return MutationOf(decided, dry_run);
      };
      client::UpdateOutcome outcome = client::Update(worker.client, std::move(item));
      if (!decided.ok()) {
        if (decided.status.status.empty()) continue;  // gone meanwhile
        return Failed(fbb, decided.status);
      }
      if (!outcome.status.ok()) return Failed(fbb, Unavailable(outcome.status));
      if (outcome.written) revision = std::max(revision, outcome.revision.value());
      deleted.push_back(KeyValue{kv.key, decided.bytes, kv.create_revision, outcome.revision, kv.version});
    }
    return Reply(fbb, model::OkStatus(*kind, ""), deleted, revision);
  }

  // update, patch and delete: decided on the stored object, written
  // guarded by its revision, decided again when another writer came first.
  std::optional<model::PatchType> patch_type;
  if (verb == "patch") {
    Result<model::PatchType> type = model::ParsePatchType(Text(request.patch_type()));
    if (!type.ok()) {
      return Failed(fbb, model::ApiStatusInfo{"Failure", 415, "UnsupportedMediaType",
                                              "the body of the request was in an unknown format - accepted media "
                                              "types include: application/json-patch+json, "
                                              "application/merge-patch+json, application/strategic-merge-patch+json, "
                                              "application/apply-patch+yaml",
                                              {}});
    }
    patch_type = *type;
  }
  DeleteOptions options;
  if (request.grace_period_seconds()) options.grace_period_seconds = *request.grace_period_seconds();
  options.propagation_policy = Text(request.propagation_policy());
  options.precondition_uid = Text(request.precondition_uid());
  options.precondition_resource_version = Text(request.precondition_resource_version());
  const std::string_view body = Bytes(request.body());

  // The plugins that look at updates read the cluster, as this user asks.
  std::optional<Result<std::vector<PriorityClassInfo>>> classes;
  ClusterView view = View(worker, classes);
  // A Service's update may hand out node ports: what the others hold is
  // read, and the write made, under the lock creates take.
  std::unique_lock<std::mutex> address_lock(cluster_ip_mu_, std::defer_lock);
  if (kind->kind == "Service" && verb != "delete") {
    address_lock.lock();
    if (Status read = ReadTakenServiceAddresses(worker.client, view, key); !read.ok()) {
      return Failed(fbb, Unavailable(read));
    }
  }
  const ChangeContext context{*user, std::move(view)};
  ChangeOutcome decided;
  bool decided_once = false;  // the stored object was read and decided on
  bool found = true;
  int64_t seen = 0;  // the revision the change was decided on
  client::UpdateItem item;
  item.key = key;
  item.mutate = [&](const KeyValue* current, bool) -> client::Mutation {
    if (current == nullptr || !model::VerifyObject(*kind, current->value).ok()) {
      found = false;
      return client::Mutation::Skip();
    }
    found = true;
    decided_once = true;
    seen = current->mod_revision.value();
    const StoredObject stored{current->key, current->value, current->mod_revision.value()};
    if (verb == "update") {
      decided = worker.admission.Update(*kind, ns, name, subresource, body, stored, context);
    } else if (verb == "patch") {
      decided = worker.admission.Patch(*kind, ns, name, subresource, *patch_type, body, stored, context);
    } else {
      decided = worker.admission.Delete(*kind, stored, options);
    }
    if (decided.ok() && decided.write == ChangeOutcome::Write::kPut) {
      if (std::optional<std::string> why = config_.authorizer.Escalation(*user, *kind, decided.bytes)) {
        decided.status = model::AdmissionForbiddenStatus(*kind, name, *why);
      }
    }
    // What the update adds to its quotas, charged in the same write as a
    // create's is: a quota changed meanwhile fails the guard, and the
    // update is decided again on it.
    if (decided.ok() && decided.write == ChangeOutcome::Write::kPut && !decided.quota_keys.empty() && !dry_run) {
      std::vector<TxnOp> charges;
      if (std::optional<ApiStatusInfo> refused =
              ChargeStoredQuotas(worker.client, decided.quota_keys, *kind, name, decided.quota_usage, charges)) {
        decided.status = std::move(*refused);
        return client::Mutation::Skip();
      }
      return client::Mutation::Put(decided.bytes, std::move(charges));
    }
    return MutationOf(decided, dry_run);
  };
  client::UpdatePolicy policy;
  policy.max_attempts = 4;
  client::UpdateOutcome outcome = client::Update(worker.client, std::move(item), policy);
  if (!found) return Failed(fbb, NotFoundStatus(*kind, name));
  if (!decided_once) return Failed(fbb, Unavailable(outcome.status));  // the read failed
  if (!decided.ok()) return Failed(fbb, decided.status);
  if (!outcome.status.ok()) {
    if (outcome.status.code() == Code::kConflict) return Failed(fbb, model::ConflictStatus(*kind, name));
    log->warn("{} {}: {}", verb, key, outcome.status.ToString());
    return Failed(fbb, Unavailable(outcome.status));
  }
  const int64_t revision = outcome.written ? outcome.revision.value() : seen;
  KeyValue kv{key, decided.bytes, Revision(0), Revision(revision), 0};
  return Reply(fbb, decided.status, {kv}, revision, {}, decided.warnings);
}

}  // namespace podflow::admission
