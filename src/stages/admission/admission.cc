// The admission chain for one request: authenticate, then per document
// decode, authorize, default, mutating plugins, validate, validating plugins
// and allocation, pack.
#include "stages/admission/admission.h"

#include "api_generated.h"
#include "base/clock.h"
#include "model/objects.h"
#include "model/kind_types.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/priority.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

// What one document's admission needs besides the object.
struct Context {
  const model::KindInfo& kind;
  const UserInfo& user;
  const CreateStamp& stamp;
  std::mt19937_64& rng;
  const ClusterIpAllocator& cluster_ips;
  std::set<std::string>& taken_ips;  // grows as this request hands addresses out
  const NodePortAllocator& node_ports;
  std::set<int32_t>& taken_ports;  // likewise
  const AdmissionChain& plugins;
  RequestState& state;
  const Authorizer& authorizer;
};

// Before validation, services get their node ports: kube-apiserver
// allocates them in BeginCreate, ahead of the strategy's validation, so a
// node port taken twice is "already allocated" rather than a duplicate.
template <typename T>
std::optional<ApiStatusInfo> BeginCreate(T&, Context&) {
  return std::nullopt;
}
std::optional<ApiStatusInfo> BeginCreate(api::ServiceT& service, Context& ctx) {
  return AssignNodePorts(ctx.kind, service, ctx.node_ports, ctx.taken_ports, ctx.rng);
}

// After validation, services get their cluster IP. A failure replaces the
// outcome.
template <typename T>
std::optional<ApiStatusInfo> AfterValidation(T&, Context&) {
  return std::nullopt;
}
std::optional<ApiStatusInfo> AfterValidation(api::ServiceT& service, Context& ctx) {
  api::ServiceSpecT& spec = *service.spec;
  if (spec.type == api::ServiceType::ExternalName || spec.cluster_ip == "None") return std::nullopt;
  if (spec.cluster_ip.empty()) {
    Result<std::string> ip = ctx.cluster_ips.Allocate(ctx.taken_ips, ctx.rng);
    if (!ip.ok())
      return InternalErrorStatus("failed to allocate a serviceIP: " + ip.status().message());
    spec.cluster_ip = *ip;
    spec.cluster_ips = {*ip};
  } else if (Status s = ctx.cluster_ips.Check(spec.cluster_ip, ctx.taken_ips); !s.ok()) {
    std::string ip = spec.cluster_ip;
    return InvalidStatus(
        ctx.kind, service.metadata->name,
        {FieldError::InvalidRendered("spec.clusterIPs", "[]string{\"" + ip + "\"}",
                                "failed to allocate IP " + ip + ": " + s.message())});
  }
  ctx.taken_ips.insert(spec.cluster_ip);
  return std::nullopt;
}

// Room the object's status will take once the runtime reports it, so that
// an object admitted can always be written again with its status: per
// container, its name and image twice (spec and status) and the ids,
// timestamps and states kubelet records; some for the pod's conditions and
// addresses. Nothing for kinds whose status is not written after creation.
template <typename T>
size_t StatusAllowance(const T&) {
  return 0;
}
size_t StatusAllowance(const api::PodT& pod) {
  if (!pod.spec) return 0;
  size_t bytes = 2048;
  auto add = [&](const auto& containers) {
    for (const auto& c : containers) bytes += 2 * (c->name.size() + c->image.size()) + 512;
  };
  add(pod.spec->init_containers);
  add(pod.spec->containers);
  return bytes;
}

template <typename Table>
void AdmitTyped(const model::Object& object, Context& ctx, AdmissionOutcome& out) {
  auto native = model::Unpack<Table>(object.bytes);
  if (std::optional<std::string> bad = DecodeError(*native)) {
    out.status = CannotBeHandled(ctx.kind, *bad);
    return;
  }
  if (!native->metadata) native->metadata = std::make_unique<api::ObjectMetaT>();
  api::ObjectMetaT& meta = *native->metadata;
  // Plugins name the object as submitted (generateName when it has no
  // name): name generation comes after them in kube-apiserver.
  const std::string submitted_name = meta.name.empty() ? meta.generate_name : meta.name;
  DefaultMeta(ctx.kind, meta, ctx.stamp, ctx.rng);
  DefaultKind(*native);
  out.name = meta.name;
  out.namespace_ = meta.namespace_;
  Attributes attributes(ctx.kind, meta.namespace_, submitted_name, ctx.user, native.get());
  if (std::optional<ApiStatusInfo> refused = ctx.plugins.Admit(attributes, ctx.state)) {
    out.status = std::move(*refused);
    return;
  }
  PrepareForCreate(*native);
  if (std::optional<ApiStatusInfo> refused = BeginCreate(*native, ctx)) {
    out.status = std::move(*refused);
    return;
  }

  Causes causes = ValidateMeta(ctx.kind, meta);
  ValidateKind(*native, causes);
  if (!causes.empty()) {
    out.status = InvalidStatus(ctx.kind, meta.name, std::move(causes));
    return;
  }
  if (std::optional<ApiStatusInfo> refused = ctx.plugins.Validate(attributes, ctx.state)) {
    out.status = std::move(*refused);
    return;
  }
  // RBAC objects may grant only what their writer holds (packed only for
  // them: the check reads the stored form).
  if (model::ApiGroup(ctx.kind) == "rbac.authorization.k8s.io") {
    if (std::optional<std::string> why = ctx.authorizer.Escalation(ctx.user, ctx.kind, model::Pack(*native))) {
      out.status = AdmissionForbiddenStatus(ctx.kind, meta.name, *why);
      return;
    }
  }
  if (std::optional<ApiStatusInfo> failure = AfterValidation(*native, ctx)) {
    out.status = std::move(*failure);
    return;
  }
  out.key = model::ObjectKey(ctx.kind, meta.namespace_, meta.name);
  out.bytes = model::Pack(*native);
  if (size_t stored = out.bytes.size() + StatusAllowance(*native); stored > model::kMaxWriteBytes) {
    out.status = model::ApiStatusInfo{
        "Failure", 413, "RequestEntityTooLarge",
        std::string(ctx.kind.kind) + " " + model::GoQuote(meta.name) + " is too large to store: about " +
            std::to_string(stored) + " bytes with its status, over the limit of " +
            std::to_string(model::kMaxWriteBytes) + " bytes per write",
        {}};
    return;
  }
  out.status = CreatedStatus(ctx.kind, meta.name);
}

}  // namespace

NamespaceInfo ReadNamespace(std::string_view bytes) {
  const api::Namespace* ns = flatbuffers::GetRoot<api::Namespace>(bytes.data());
  NamespaceInfo info;
  if (ns->status() && ns->status()->phase() == api::NamespacePhase::Terminating) {
    info.phase = api::NamespacePhase::Terminating;
  }
  if (ns->metadata() && ns->metadata()->labels()) {
    for (const auto* e : *ns->metadata()->labels()) {
      if (e->key() && e->value()) info.labels[e->key()->str()] = e->value()->str();
    }
  }
  return info;
}

ServiceAccountInfo ReadServiceAccount(std::string_view bytes) {
  const api::ServiceAccount* sa = flatbuffers::GetRoot<api::ServiceAccount>(bytes.data());
  return ServiceAccountInfo{sa->automount_service_account_token()};
}

ApiStatusInfo CannotBeHandled(const model::KindInfo& kind, std::string_view why) {
  const std::string k(kind.kind);
  return BadRequestStatus(k + " in version \"" + std::string(kind.api_version) + "\" cannot be handled as a " + k +
                          ": " + std::string(why));
}

ApiStatusInfo DecodeFailure(const model::Decoded& d) {
  const model::KindInfo* kind = d.object.kind;
  if (kind == nullptr) return BadRequestStatus(d.status.message());
  std::string unknown;
  for (const model::FieldError& e : d.causes) {
    if (e.type != model::FieldError::Type::kUnknownField) continue;
    unknown += std::string(unknown.empty() ? "" : ", ") + "unknown field \"" + e.field + "\"";
  }
  if (!unknown.empty()) return CannotBeHandled(*kind, "strict decoding error: " + unknown);
  if (d.causes.empty()) return BadRequestStatus(d.status.message());
  return InvalidStatus(*kind, d.object.name, d.causes);
}

void DefaultKind(api::PodT& pod) { DefaultPod(pod); }
void PrepareForCreate(api::PodT& pod) { PreparePodForCreate(pod); }
void DefaultKind(api::ServiceT& service) { DefaultService(service); }
void DefaultKind(api::PriorityClassT& pc) { DefaultPriorityClass(pc); }
void ValidateKind(const api::PodT& pod, Causes& out) {
  for (FieldError& c : ValidatePodSpec(*pod.spec)) out.push_back(std::move(c));
  // A pod is bound only once it is no longer gated.
  if (!pod.spec->scheduling_gates.empty() && !pod.spec->node_name.empty()) {
    out.push_back(FieldError::Forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"));
  }
}
void ValidateKind(const api::ServiceT& service, Causes& out) {
  for (FieldError& c : ValidateServiceSpec(*service.spec)) out.push_back(std::move(c));
}
void ValidateKind(const api::PriorityClassT& pc, Causes& out) {
  for (FieldError& c : ValidatePriorityClass(pc)) out.push_back(std::move(c));
}

Admission::Admission(AdmissionConfig config, Clock clock, std::mt19937_64 rng)
    : config_(std::move(config)), clock_(std::move(clock)), rng_(rng) {}

AdmitReply Admission::Admit(std::string_view bearer_token, std::string_view manifest_text,
                            const ClusterView& cluster) {
  Result<UserInfo> user = config_.authenticator.Authenticate(bearer_token);
  if (!user.ok()) {
    AdmitReply reply;
    reply.failure = UnauthorizedStatus();
    return reply;
  }
  return AdmitAs(*user, manifest_text, cluster);
}

AdmitReply Admission::AdmitAs(const UserInfo& user, std::string_view manifest_text, const ClusterView& cluster) {
  AdmitReply reply;
  // kube-apiserver's limit on a request body, checked before any decoding.
  if (manifest_text.size() > kMaxRequestBytes) {
    reply.failure = model::RequestEntityTooLargeStatus(kMaxRequestBytes);
    return reply;
  }
  Result<std::vector<model::Decoded>> documents = model::DecodeManifests(manifest_text);
  if (!documents.ok()) {
    reply.failure = BadRequestStatus(documents.status().message());
    return reply;
  }
  if (documents->empty()) {
    reply.failure = BadRequestStatus("no objects passed to create");
    return reply;
  }
  std::set<std::string> taken = cluster.taken_cluster_ips;
  std::set<int32_t> taken_ports = cluster.taken_node_ports;
  RequestPriorityClasses classes(cluster.priority_classes);
  RequestState state{.namespaces = cluster.namespaces,
                     .priority_classes = classes,
                     .limit_ranges = cluster.limit_ranges,
                     .quotas = cluster.quotas,
                     .service_accounts = cluster.service_accounts,
                     .now = clock_(),
                     .rng = &rng_};
  for (const model::Decoded& d : *documents) {
    AdmissionOutcome out;
    out.kind = d.object.kind;
    out.name = d.object.name;
    const model::KindInfo* kind = d.object.kind;
    if (kind != nullptr) {
      out.namespace_ = !kind->namespaced             ? ""
                       : d.object.namespace_.empty() ? "default"
                                                     : d.object.namespace_;
      // Authorization comes before the body is looked at, as in kube-apiserver.
      const RequestAttributes create{"create", std::string(model::ApiGroup(*kind)), std::string(kind->resource), "",
                                     out.namespace_, ""};
      if (!config_.authorizer.Allows(user, create)) {
        out.status = ForbiddenStatus(user.name, "create", *kind, out.namespace_);
        reply.results.push_back(std::move(out));
        continue;
      }
    }
    if (!d.status.ok()) {
      out.status = DecodeFailure(d);
      reply.results.push_back(std::move(out));
      continue;
    }
    CreateStamp stamp{NewUuid(rng_), FormatRfc3339(clock_())};
    Context ctx{*kind,           user,        stamp, rng_, config_.cluster_ips, taken, config_.node_ports,
                taken_ports,     config_.plugins, state, config_.authorizer};
    const std::set<int32_t> ports_before = taken_ports;
    model::VisitKind(*kind, [&]<typename T>() { AdmitTyped<T>(d.object, ctx, out); });
    // A refused document gives its node ports back, as the server's
    // allocation is reverted when its create fails.
    if (!out.admitted()) taken_ports = ports_before;
    if (out.admitted() && kind->kind == "LimitRange") state.request_limit_ranges.push_back(out.bytes);
    if (out.admitted() && kind->kind == "ServiceAccount") {
      state.request_service_accounts.insert_or_assign(out.namespace_ + "/" + out.name, ReadServiceAccount(out.bytes));
    }
    // The quotas this document was charged to: the request's documents
    // after it see them charged; the caller charges the stored ones.
    if (out.admitted()) {
      for (auto& [key, quota] : state.document_quotas) {
        out.quota_keys.push_back(key);
        state.request_quotas.insert_or_assign(key, std::move(quota));
      }
      out.quota_usage = std::move(state.document_usage);
    }
    state.document_quotas.clear();
    state.document_usage.clear();
    out.warnings = std::move(state.document_warnings);
    state.document_warnings.clear();
    // A namespace made by this request exists for the documents after it;
    // one that is stored already (perhaps terminating) is asked about.
    if (out.admitted() && kind->kind == "Namespace") {
      Result<std::optional<NamespaceInfo>> stored =
          cluster.namespaces ? cluster.namespaces(out.name) : Result<std::optional<NamespaceInfo>>(std::nullopt);
      if (stored.ok() && !stored->has_value()) {
        state.request_namespaces.insert_or_assign(out.name, ReadNamespace(out.bytes));
      }
    }
    if (out.status.status.empty()) {
      out.status = InternalErrorStatus("no admission for kind " + std::string(kind->kind));
    }
    reply.results.push_back(std::move(out));
  }
  return reply;
}

}  // namespace podflow::admission
