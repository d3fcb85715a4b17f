// Admission: kube-apiserver's front half as plain logic, no sockets and no
// log access. A submitted manifest is authenticated (a static token table,
// as --token-auth-file), authorized (a small rule policy), defaulted (the
// apiserver's defaulting and the mutating plugins), validated (Kubernetes'
// field errors, every cause collected) and handed back as bytes to write
// with "must not exist" semantics. What admission needs from the log (the
// cluster IPs in use, the stored PriorityClasses) the caller reads and hands
// in as plain values. Every outcome carries a Kubernetes-style
// status (ApiStatusInfo) that goes out as msg::ApiStatus or as kubectl
// prints it.
//
// Thread safety: TokenAuthenticator, Authorizer and ClusterIpAllocator are
// immutable after Create and safe to share. Admission is not thread safe
// (it owns an RNG); use one per thread.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/api_status.h"
#include "model/codec.h"
#include "model/image_catalog.h"
#include "model/patch.h"
#include "model/quantity.h"
#include "pod_generated.h"     // api::PreemptionPolicy
#include "policy_generated.h"  // api::NamespacePhase, api::LimitRangeT

namespace YAML {
class Node;
}

namespace podflow::admission {

// ---- Field errors and the API status ----

// The model's vocabulary (model/field_error.h, model/api_status.h), spoken
// unqualified here.
using model::AdmissionForbiddenStatus;
using model::AlreadyExistsStatus;
using model::ApiStatusInfo;
using model::BadRequestStatus;
using model::CreatedStatus;
using model::FieldError;
using model::ForbiddenStatus;
using model::GoQuote;
using model::InternalErrorStatus;
using model::InvalidMessage;
using model::InvalidStatus;
using model::KubectlMessage;
using model::ReadApiStatus;
using model::UnauthorizedStatus;
using model::WriteApiStatus;

// ---- Authentication: static bearer tokens ----

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

struct TokenEntry {
  std::string token;
  UserInfo user;
};

// Parses kube-apiserver's --token-auth-file format: CSV lines
// `token,user,uid[,"group1,group2"]`, at least 3 columns, double quotes
// around a field that holds commas (`""` is a quote). Blank lines and lines
// starting with `#` are skipped (a podflow extension). Errors name the line:
// `token file line 3: must have at least 3 columns (token, user name, user
// uid), found 2`; an empty token or a token listed twice is an error.
Result<std::vector<TokenEntry>> ParseTokenFile(std::string_view text);

class TokenAuthenticator {
 public:
  // No tokens: every request is Unauthorized.
  TokenAuthenticator() = default;
  // Fails on an empty token, user name, or a duplicate token.
  static Result<TokenAuthenticator> Create(std::vector<TokenEntry> entries);

  // The user holding `bearer_token`, with "system:authenticated" added to
  // its groups as kube-apiserver does. A missing or unknown token fails with
  // Code::kInvalid, message "Unauthorized".
  Result<UserInfo> Authenticate(std::string_view bearer_token) const;

  // A caller its bus identity proves (a controller's CURVE key, as a client
  // certificate would): a request from `peer` without a token is `user`
  // (plus "system:authenticated").
  void TrustPeer(std::string peer, UserInfo user);
  // The holder of `bearer_token` when one is given, else the user trusted
  // for `peer`; "Unauthorized" otherwise.
  Result<UserInfo> Authenticate(std::string_view bearer_token, std::string_view peer) const;

 private:
  std::unordered_map<std::string, UserInfo> users_;  // by token
  std::unordered_map<std::string, UserInfo> peers_;  // by bus identity
};

// ---- Authorization ----

struct RbacPolicy;  // rbac.h

// What one request asks, as kube-apiserver's authorizer.Attributes.
struct RequestAttributes {
  std::string verb;         // get list watch create update patch delete deletecollection
  std::string api_group;    // "" for core/v1, "apps", ...
  std::string resource;     // "pods"
  std::string subresource;  // "status", or empty
  std::string namespace_;   // empty for cluster-scoped requests (and lists of every namespace)
  std::string name;         // empty for list, create and deletecollection
};

// Decides whether a user may make a request: AlwaysAllow (every
// authenticated user may do anything), or RBAC over the stored Roles,
// ClusterRoles and their bindings (rbac.h), as kube-apiserver's
// --authorization-mode. Members of system:masters are never denied.
class Authorizer {
 public:
  using PolicySource = std::function<std::shared_ptr<const RbacPolicy>()>;

  // AlwaysAllow.
  Authorizer() = default;
  // RBAC over the policy `source` answers with at each request.
  static Authorizer Rbac(PolicySource source);

  bool Allows(const UserInfo& user, const RequestAttributes& request) const;
  bool rbac() const { return static_cast<bool>(source_); }
  // RBAC's escalation check on writing `object` (packed, of `kind`): why
  // `user` may not, or nullopt (rbac.h, EscalationRefusal).
  std::optional<std::string> Escalation(const UserInfo& user, const model::KindInfo& kind,
                                        std::string_view object) const;

 private:
  PolicySource source_;
};

// ---- Service cluster IPs ----

// The offset of a free value in a range of `size` values, as kube-apiserver
// hands out node ports and cluster IPs: from above the lower band (its
// first `lower_band` values, kept for values users ask for) with a random
// start, scanning up and wrapping; from the lower band, the same way, once
// the rest is full; nullopt when everything is `taken`.
std::optional<uint64_t> PickInBands(uint64_t size, uint64_t lower_band, std::mt19937_64& rng,
                                    const std::function<bool(uint64_t offset)>& taken);

// Service cluster IPs from an IPv4 range (--service-cluster-ip-range), as
// kube-apiserver hands them out: the network and broadcast addresses never;
// one left to it from above the range's lower band (min(max(16, size/16),
// 256) addresses: 10.96.0.1-10.96.1.0 of 10.96.0.0/12, where installers
// put the DNS Service at 10.96.0.10), the lower band once the rest is full
// (PickInBands). Keeps no state: the caller says which are taken.
class ClusterIpAllocator {
 public:
  static constexpr std::string_view kDefaultRange = "10.96.0.0/12";

  ClusterIpAllocator();  // kDefaultRange
  // Fails on anything but an IPv4 CIDR (`10.96.0.0/12`).
  static Result<ClusterIpAllocator> Create(std::string_view cidr);

  // A free address, or Unavailable "range is full".
  Result<std::string> Allocate(const std::set<std::string>& taken, std::mt19937_64& rng) const;
  // Checks a user-given address: Invalid with Kubernetes' wording when it is
  // outside the range ("the provided IP (1.1.1.1) is not in the valid range.
  // The range of valid IPs is 10.96.0.0/12") or in `taken` ("provided IP is
  // already allocated").
  Status Check(std::string_view ip, const std::set<std::string>& taken) const;

  const std::string& cidr() const { return cidr_; }

 private:
  ClusterIpAllocator(std::string cidr, uint32_t ip, int prefix_bits);

  std::string cidr_;
  uint32_t first_ = 0;  // first usable address
  uint32_t last_ = 0;   // last usable address (first_ > last_: none)
  uint32_t network_ = 0;
  uint32_t mask_ = 0;
  uint64_t lower_band_ = 0;  // addresses from first_ kept for those asked for
};

// Hands out Service node ports from a port range (--service-node-port-range,
// 30000-32767 by default) as kube-apiserver does: one left to it comes from
// the range above its lower band (a random start, scanning up and wrapping),
// the lower band (size/32 ports, 16 to 128) being kept for ports users ask
// for until the rest is full. Keeps no state: the caller says which ports
// are taken.
class NodePortAllocator {
 public:
  static constexpr std::string_view kDefaultRange = "30000-32767";

  NodePortAllocator();  // kDefaultRange
  // "LOW-HIGH" (or one port) within 1..65535.
  static Result<NodePortAllocator> Create(std::string_view range);

  // A free port, or Unavailable "range is full".
  Result<int32_t> Allocate(const std::set<int32_t>& taken, std::mt19937_64& rng) const;
  // Invalid with Kubernetes' wording when `port` is outside the range ("provided
  // port is not in the valid range. The range of valid ports is 30000-32767") or
  // in `taken` ("provided port is already allocated").
  Status Check(int32_t port, const std::set<int32_t>& taken) const;

  const std::string& range() const { return text_; }

 private:
  NodePortAllocator(std::string text, int32_t base, int32_t size);

  std::string text_;
  int32_t base_ = 0;
  int32_t size_ = 0;
  int32_t static_band_ = 0;  // ports base_ .. base_+static_band_-1
};

// ---- The admission plugin chain ----

// A rule of the sidecar injector (the config's admission.sidecarInjector),
// applied as a mutating webhook would: a pod whose namespace labels match
// `namespace_selector` and whose labels match `selector` (kubectl's label
// selector syntax; empty matches everything) gets the rule's init
// containers, containers and volumes, each unless the pod has one of that
// name; the result is defaulted and validated like any pod.
struct SidecarRule {
  std::string name;
  std::string namespace_selector;
  std::string selector;
  std::string pod;  // a packed Pod whose spec holds what to add
};

// What configurable plugins are configured with.
struct PluginConfig {
  std::vector<SidecarRule> sidecars;
  // The registry catalog ImagePolicy checks images against (the config's
  // `runtime.registry`): the images that exist.
  model::RegistryConfig registry;
  // DefaultTolerationSeconds: kube-apiserver's
  // --default-not-ready-toleration-seconds and
  // --default-unreachable-toleration-seconds.
  int64_t not_ready_toleration_seconds = 300;
  int64_t unreachable_toleration_seconds = 300;
};

class Plugin;
class Attributes;
struct RequestState;

// The admission plugins a request runs (plugins/): ordered as kube-apiserver
// orders them, whatever order the configuration names them in, and chosen
// as --enable-admission-plugins / --disable-admission-plugins choose. Every
// plugin podflow has is enabled by default but ImagePolicy, which is off
// unless enabled (as kube-apiserver's ImagePolicyWebhook). Immutable;
// copies share the plugins.
class AdmissionChain {
 public:
  // Every plugin podflow has, in the order they run.
  static const std::vector<std::string_view>& Known();
  // Every plugin that is on by default.
  AdmissionChain();
  // The default set, plus `enable`, minus `disable`. Invalid for a name
  // that is not a plugin, or one both enabled and disabled.
  static Result<AdmissionChain> Create(const std::vector<std::string>& enable,
                                       const std::vector<std::string>& disable, const PluginConfig& config = {});

  // The mutating phase of every plugin in order; the first refusal ends it.
  std::optional<ApiStatusInfo> Admit(Attributes& attributes, RequestState& state) const;
  // The validating phase of every plugin in order; the first refusal ends it.
  std::optional<ApiStatusInfo> Validate(const Attributes& attributes, RequestState& state) const;
  // The enabled plugins' names, in the order they run.
  const std::vector<std::string>& enabled() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::vector<std::shared_ptr<const Plugin>> plugins_;
};

// ---- Configuration ----

struct AdmissionConfig {
  TokenAuthenticator authenticator;
  Authorizer authorizer;
  // --authorization-mode: "RBAC" (the stage builds `authorizer` over the
  // stored RBAC objects) or "AlwaysAllow".
  std::string authorization_mode = "RBAC";
  ClusterIpAllocator cluster_ips;
  NodePortAllocator node_ports;
  AdmissionChain plugins;
};

// Reads the `admission:` section of a podflow config:
//   tokens: [{token, user, uid, groups: [..]}]   # inline token table
//   tokenFile: PATH                              # and/or a --token-auth-file
//   serviceClusterIPRange: 10.96.0.0/12          # default 10.96.0.0/12
//   serviceNodePortRange: 30000-32767            # default 30000-32767
//   authorizationMode: RBAC                      # or AlwaysAllow
// A relative tokenFile is read from `base_dir`. Unknown keys are errors.
// `tokens` are known beside the section's (the data dir's admin token);
// `registry` is the config's `runtime.registry`, read for ImagePolicy when
// it is enabled.
Result<AdmissionConfig> ParseAdmissionConfig(const YAML::Node& section, std::string_view base_dir = {},
                                             std::vector<TokenEntry> tokens = {},
                                             const YAML::Node& registry = {});

// ---- What admission reads from the log ----

// A stored PriorityClass (scheduling.k8s.io/v1) as the Priority plugin uses it.
struct PriorityClassInfo {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  api::PreemptionPolicy preemption_policy = api::PreemptionPolicy::PreemptLowerPriority;

  bool operator==(const PriorityClassInfo&) const = default;
};

// Lists the stored PriorityClasses. Admission calls it at most once per
// request, and only when a document needs them (a Pod or a PriorityClass);
// a failure fails those documents with 500 InternalError. An empty function
// stands for "none stored".
using PriorityClassLister = std::function<Result<std::vector<PriorityClassInfo>>()>;

// A PriorityClass as the log stores it. The bytes are checked with the
// FlatBuffers Verifier first: Corruption when they are not a PriorityClass.
// An unset preemptionPolicy (written before podflow defaulted it) reads as
// PreemptLowerPriority, the default.
Result<PriorityClassInfo> ReadStoredPriorityClass(std::string_view bytes);

// The LimitRanges stored in a namespace, as LimitRanger reads them. An empty
// function stands for "none anywhere".
using LimitRangeLister = std::function<Result<std::vector<api::LimitRangeT>>(const std::string& namespace_)>;

// A stored namespace as the plugins read it: NamespaceLifecycle its phase,
// PodSecurity its labels.
struct NamespaceInfo {
  api::NamespacePhase phase = api::NamespacePhase::Active;
  std::map<std::string, std::string> labels;
};

// A Namespace's packed bytes as NamespaceInfo. REQUIRES: verified bytes.
NamespaceInfo ReadNamespace(std::string_view bytes);

// A stored namespace, nullopt when there is none. An empty function stands
// for "every namespace exists, is Active and unlabelled" (logic tests that
// do not care).
using NamespaceLookup = std::function<Result<std::optional<NamespaceInfo>>(const std::string& name)>;

// The ResourceQuotas stored in a namespace, as the ResourceQuota plugin
// reads them. An empty function stands for "none anywhere".
using ResourceQuotaLister =
    std::function<Result<std::vector<api::ResourceQuotaT>>(const std::string& namespace_)>;

// The ConfigMap of every namespace that holds the cluster's CA certificate
// (key ca.crt), which service account token volumes project.
inline constexpr std::string_view kRootCaConfigMap = "kube-root-ca.crt";

// A stored ServiceAccount as the ServiceAccount plugin reads it.
struct ServiceAccountInfo {
  std::optional<bool> automount_token;  // automountServiceAccountToken
};
// The ServiceAccount stored as namespace_/name, nullopt when there is none,
// as the ServiceAccount plugin asks. An empty function stands for "every
// one exists" (and says nothing of its token).
using ServiceAccountLookup = std::function<Result<std::optional<ServiceAccountInfo>>(const std::string& namespace_,
                                                                                    const std::string& name)>;
// ServiceAccountInfo of a verified stored ServiceAccount.
ServiceAccountInfo ReadServiceAccount(std::string_view bytes);

// What admission reads from the cluster, answered by the caller. A member
// left empty stands for "none stored" (for `namespaces`: every namespace
// exists and is Active).
struct ClusterView {
  std::set<std::string> taken_cluster_ips;  // the addresses of existing Services
  std::set<int32_t> taken_node_ports;       // their node ports (and health check ports)
  PriorityClassLister priority_classes;
  NamespaceLookup namespaces;
  LimitRangeLister limit_ranges;
  ResourceQuotaLister quotas;
  ServiceAccountLookup service_accounts;
};

// ---- The entry point ----

using Clock = std::function<std::chrono::system_clock::time_point()>;

// One document of a submitted manifest.
struct AdmissionOutcome {
  // Created (201) when admitted: the caller writes `bytes` at `key` with
  // "must not exist" and, if that guard fails, replaces this with
  // AlreadyExistsStatus(*kind, name). Otherwise why it was refused.
  ApiStatusInfo status;
  const model::KindInfo* kind = nullptr;  // null when the kind is not known
  std::string namespace_;                 // empty for cluster-scoped kinds
  std::string name;
  std::string key;    // model::ObjectKey(...), set when admitted
  std::string bytes;  // the defaulted object (model::Pack), set when admitted
  // The ResourceQuotas (their keys) the object is charged to, and what it
  // counts for: the caller adds that to each quota's status.used in the
  // write that creates it, guarded by the quota's revision, and refuses it
  // if the quota is exceeded by then (quota.h, ChargeQuota).
  std::vector<std::string> quota_keys;
  std::map<std::string, model::Quantity> quota_usage;
  // Warnings for the client, which kubectl prints as `Warning: ...` (a
  // PodSecurity warn level the object would violate).
  std::vector<std::string> warnings;

  bool admitted() const { return status.success(); }
};

struct AdmitReply {
  // Set (status "Failure") when the whole request failed: Unauthorized, or
  // a manifest that is not YAML (BadRequest). Then `results` is empty.
  std::optional<ApiStatusInfo> failure;
  std::vector<AdmissionOutcome> results;  // one per document, in order
};

// ---- Update, patch and delete of a stored object ----

// An object as the log holds it: what a change is decided against, and the
// revision its write is guarded on.
struct StoredObject {
  std::string key;
  std::string bytes;  // verified for its kind
  int64_t mod_revision = 0;
};

// What a change of one stored object comes to. The caller writes it guarded
// by the stored object's revision; a lost guard means another writer came
// first, and the change is decided again on what is stored then.
struct ChangeOutcome {
  enum class Write { kNone, kPut, kDelete };
  ApiStatusInfo status;       // 200 when allowed, or why not
  Write write = Write::kNone; // kNone on success: nothing changed
  std::string bytes;          // the object as it is after the change (kDelete: as it was)
  // An update that adds to what its quotas count (a Service turned
  // NodePort, a claim asking for more): the quotas' keys and what it adds,
  // charged by the caller in the write, as for a create (AdmissionOutcome).
  std::vector<std::string> quota_keys;
  std::map<std::string, model::Quantity> quota_usage;
  std::vector<std::string> warnings;  // for the client (PodSecurity's warn level)

  bool ok() const { return status.success(); }
};

// Who asks for an update or patch, and what admission reads from the
// cluster for it: the plugins that look at updates (PodSecurity,
// ResourceQuota) run with them. Empty: no user, nothing stored.
struct ChangeContext {
  UserInfo user;
  ClusterView cluster;
};

// metav1.DeleteOptions, the part podflow honours.
struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", "Foreground", "Background", "Orphan"
  // preconditions: empty, or what the stored object's uid and
  // resourceVersion must be.
  std::string precondition_uid;
  std::string precondition_resource_version;
};

class Admission {
 public:
  // The largest manifest a request may carry (kube-apiserver's 3 MiB limit
  // on a request body); a larger one is refused, undecoded, with 413.
  static constexpr size_t kMaxRequestBytes = 3 * 1024 * 1024;

  // `clock` stamps creationTimestamp; `rng` draws uids and generated names.
  Admission(AdmissionConfig config, Clock clock, std::mt19937_64 rng);

  // Authenticates, refuses a manifest over kMaxRequestBytes, then per
  // document: decode, authorize "create", default, the plugins' mutating
  // phase, prepare for create (a pod's status), validate, the plugins'
  // validating phase, allocate a cluster IP for services.
  // The cluster's taken service addresses; addresses handed out earlier in
  // the same request count as taken too. Pods resolve their priority
  // against the stored PriorityClasses, the built-in system classes and the
  // PriorityClasses admitted earlier in the same request. A namespaced
  // object's namespace must exist and not be terminating
  // (NamespaceLifecycle): the stored ones, or those admitted earlier in the
  // same request. Quotas are charged as the documents before used them.
  AdmitReply Admit(std::string_view bearer_token, std::string_view manifest_text, const ClusterView& cluster = {});
  // The same for a user already known: the API server's own requests
  // (system:apiserver creating the bootstrap namespaces).
  AdmitReply AdmitAs(const UserInfo& user, std::string_view manifest_text, const ClusterView& cluster = {});

  // update (PUT): `object_text`, one object of `kind` named `name` in
  // `namespace_`, replaces `stored`. A resourceVersion in it must be the
  // stored one (else 409 Conflict); without one the update is
  // unconditional. The server's fields (uid, creationTimestamp, deletion,
  // generation) carry over; generation grows when the spec changes. On the
  // main resource the status is kept; on `subresource` "status" only the
  // status changes. Scheme defaults and the kind's update validation
  // (immutable fields, a pod's few mutable ones) apply, then the plugins
  // that look at updates, as `context.user` asks it. An object being
  // deleted whose last finalizer goes is removed.
  ChangeOutcome Update(const model::KindInfo& kind, std::string_view namespace_, std::string_view name,
                       std::string_view subresource, std::string_view object_text, const StoredObject& stored,
                       const ChangeContext& context = {});
  // patch: `patch_text` (JSON or YAML) applied to `stored` as `type` says,
  // then the same as Update with the result.
  ChangeOutcome Patch(const model::KindInfo& kind, std::string_view namespace_, std::string_view name,
                      std::string_view subresource, model::PatchType type, std::string_view patch_text,
                      const StoredObject& stored, const ChangeContext& context = {});
  // delete: a pod on a node is deleted gracefully (deletionTimestamp and
  // deletionGracePeriodSeconds set: the kubelet stops it, then removes it);
  // an object with finalizers waits for them (deletionTimestamp set);
  // propagationPolicy Foreground and Orphan are recorded as the
  // garbage collector's finalizers. Anything else is removed at once.
  ChangeOutcome Delete(const model::KindInfo& kind, const StoredObject& stored, const DeleteOptions& options);

 private:
  ChangeOutcome UpdateDecoded(const model::KindInfo& kind, std::string_view namespace_, std::string_view name,
                              std::string_view subresource, const model::Decoded& decoded,
                              const StoredObject& stored, const ChangeContext& context);

  AdmissionConfig config_;
  Clock clock_;
  std::mt19937_64 rng_;
};

}  // namespace podflow::admission
