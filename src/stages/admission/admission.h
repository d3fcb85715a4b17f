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
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/codec.h"
#include "pod_generated.h"  // api::PreemptionPolicy

namespace YAML {
class Node;
}

namespace podflow::msg {
struct ApiStatus;
}

namespace podflow::admission {

// ---- Field causes and the API status ----

// One field error, as k8s.io/apimachinery/pkg/util/validation/field.Error
// turns into a metav1.StatusCause.
struct Cause {
  enum class Type { kRequired, kInvalid, kDuplicate, kNotSupported, kTooLong, kForbidden };
  Type type = Type::kInvalid;
  std::string field;    // "spec.containers[0].image"
  std::string message;  // the error body: "Required value", "Invalid value: \"x\": ..."

  // "FieldValueRequired", "FieldValueInvalid", ... (metav1.CauseType).
  std::string_view Reason() const;
  // "spec.containers[0].image: Required value".
  std::string ToString() const;

  // `Required value` or `Required value: <detail>`.
  static Cause Required(std::string field, std::string_view detail = {});
  // `Invalid value: "<value>": <detail>` (a string value, quoted as Go's %q).
  static Cause Invalid(std::string field, std::string_view value, std::string_view detail);
  // `Invalid value: 0: <detail>` (a number, unquoted).
  static Cause InvalidInt(std::string field, int64_t value, std::string_view detail);
  // `Invalid value: <rendered>: <detail>`, the value already printed as Go
  // prints it (e.g. `[]string{"1.1.1.1"}`).
  static Cause InvalidRendered(std::string field, std::string_view rendered,
                               std::string_view detail);
  // `Duplicate value: "<value>"`.
  static Cause Duplicate(std::string field, std::string_view value);
  // `Unsupported value: "<value>": supported values: "a", "b"`.
  static Cause NotSupported(std::string field, std::string_view value,
                            const std::vector<std::string>& supported);
  // `Too long: may not be more than <max> bytes`.
  static Cause TooLong(std::string field, int64_t max);
  // `Forbidden: <detail>`.
  static Cause Forbidden(std::string field, std::string_view detail);
  // The codec's field errors in the same shape.
  static Cause FromFieldError(const model::FieldError& error);
};

// `Pod "x" is invalid: <cause>` or `... is invalid: [<cause>, <cause>]`.
std::string InvalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<Cause>& causes);

// The content of a metav1.Status (and of msg::ApiStatus).
struct ApiStatusInfo {
  std::string status;  // "Success" or "Failure"
  int32_t code = 0;    // HTTP-like: 201, 400, 401, 403, 409, 422, 500
  std::string reason;  // "", "Invalid", "AlreadyExists", "Forbidden", ...
  std::string message;
  struct Details {
    std::string name;
    std::string group;
    std::string kind;  // "Pod" for Invalid, the resource ("pods") otherwise
    std::vector<Cause> causes;
  } details;

  bool success() const { return status == "Success"; }
};

// 201 Success, message `pod/nginx-pod created`.
ApiStatusInfo CreatedStatus(const model::KindInfo& kind, std::string_view name);
// 422 Invalid, message `Pod "x" is invalid: ...`, details with every cause.
ApiStatusInfo InvalidStatus(const model::KindInfo& kind, std::string_view name,
                            std::vector<Cause> causes);
// 409 AlreadyExists, message `pods "x" already exists`. The caller turns a
// failed "must not exist" guard into this.
ApiStatusInfo AlreadyExistsStatus(const model::KindInfo& kind, std::string_view name);
// 401 Unauthorized, message "Unauthorized".
ApiStatusInfo UnauthorizedStatus();
// 403 Forbidden: `pods is forbidden: User "alice" cannot create resource
// "pods" in API group "" in the namespace "default"` (`at the cluster scope`
// for cluster-scoped kinds; `pods "x" is forbidden` when a name is given).
ApiStatusInfo ForbiddenStatus(std::string_view user, std::string_view verb,
                              const model::KindInfo& kind, std::string_view namespace_,
                              std::string_view name = {});
// 403 Forbidden from an admission plugin: `pods "x" is forbidden: <reason>`
// (`priorityclasses.scheduling.k8s.io "x" is forbidden: ...` for group kinds).
ApiStatusInfo AdmissionForbiddenStatus(const model::KindInfo& kind, std::string_view name,
                                       std::string_view reason);
// 400 BadRequest with `message` (undecodable manifests).
ApiStatusInfo BadRequestStatus(std::string message);
// 500 InternalError: `Internal error occurred: <message>`.
ApiStatusInfo InternalErrorStatus(std::string_view message);

// Writes `info` as a msg::ApiStatus table into `fbb`.
flatbuffers::Offset<msg::ApiStatus> WriteApiStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                   const ApiStatusInfo& info);
// Reads a msg::ApiStatus back. Cause types come from the reason strings.
ApiStatusInfo ReadApiStatus(const msg::ApiStatus& status);

// The line kubectl prints for the outcome:
//   pod/nginx-pod created
//   Error from server (AlreadyExists): pods "nginx-pod" already exists
//   Error from server (Invalid): Pod "x" is invalid: spec.containers[0].image: Required value
//   error: You must be logged in to the server (Unauthorized)
// With a `source` file name, creation errors read as kubectl apply -f prints
// them: `Error from server (AlreadyExists): error when creating "pod.yaml": ...`.
std::string KubectlMessage(const ApiStatusInfo& info, std::string_view source = {});

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

 private:
  std::unordered_map<std::string, UserInfo> users_;  // by token
};

// ---- Authorization: a small rule policy ----

// Allows `verbs` on `resources` in `namespaces` to a user (by name) or a
// group. "*" matches anything in each list; an empty namespaces list means
// every namespace. Cluster-scoped kinds only match namespaces "*".
struct PolicyRule {
  std::string user;                     // a user name, "*", or empty when `group` is set
  std::string group;                    // a group name, "*", or empty when `user` is set
  std::vector<std::string> verbs;       // create get list watch update patch delete *
  std::vector<std::string> namespaces;  // names or "*"
  std::vector<std::string> resources;   // pods services nodes ... or "*"
};

class Authorizer {
 public:
  // No policy: every authenticated user may do anything.
  Authorizer() = default;
  // Checks the rules (subject set, known verbs and resources).
  static Result<Authorizer> Create(std::vector<PolicyRule> rules);

  // Whether `user` may `verb` `resource` (plural, "pods") in `namespace_`
  // (empty for cluster-scoped kinds). Members of "system:masters" may do
  // anything, as with kube-apiserver's privileged group.
  bool Allows(const UserInfo& user, std::string_view verb, std::string_view resource,
              std::string_view namespace_) const;

 private:
  std::optional<std::vector<PolicyRule>> rules_;  // nullopt: allow all
};

// ---- Service cluster IPs ----

// Hands out service cluster IPs from an IPv4 CIDR (--service-cluster-ip-range),
// lowest free address first, never the network or broadcast address. It
// keeps no state: the caller says which addresses are taken.
class ClusterIpAllocator {
 public:
  static constexpr std::string_view kDefaultRange = "10.96.0.0/12";

  ClusterIpAllocator();  // kDefaultRange
  // Fails on anything but an IPv4 CIDR (`10.96.0.0/12`).
  static Result<ClusterIpAllocator> Create(std::string_view cidr);

  // The lowest usable address not in `taken`, or Unavailable "range is full".
  Result<std::string> Allocate(const std::set<std::string>& taken) const;
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
};

// ---- Configuration ----

struct AdmissionConfig {
  TokenAuthenticator authenticator;
  Authorizer authorizer;
  ClusterIpAllocator cluster_ips;
};

// Reads the `admission:` section of a podflow config:
//   tokens: [{token, user, uid, groups: [..]}]   # inline token table
//   tokenFile: PATH                              # and/or a --token-auth-file
//   serviceClusterIPRange: 10.96.0.0/12          # default 10.96.0.0/12
//   policy: [{user|group, verbs, namespaces, resources}]  # absent: allow all
// A relative tokenFile is read from `base_dir`. Unknown keys are errors.
Result<AdmissionConfig> ParseAdmissionConfig(const YAML::Node& section,
                                             std::string_view base_dir = {});

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

  bool admitted() const { return status.success(); }
};

struct AdmitReply {
  // Set (status "Failure") when the whole request failed: Unauthorized, or
  // a manifest that is not YAML (BadRequest). Then `results` is empty.
  std::optional<ApiStatusInfo> failure;
  std::vector<AdmissionOutcome> results;  // one per document, in order
};

class Admission {
 public:
  // `clock` stamps creationTimestamp; `rng` draws uids and generated names.
  Admission(AdmissionConfig config, Clock clock, std::mt19937_64 rng);

  // Authenticates, then per document: decode, authorize "create", default,
  // run the mutating plugins (Priority), validate, run the validating
  // plugins (one default PriorityClass), allocate a cluster IP for services.
  // `taken_cluster_ips` are the addresses of existing services; addresses
  // handed out earlier in the same request count as taken too. Pods resolve
  // their priority against `priority_classes`, the built-in system classes
  // and the PriorityClasses admitted earlier in the same request.
  AdmitReply Admit(std::string_view bearer_token, std::string_view manifest_text,
                   const std::set<std::string>& taken_cluster_ips = {},
                   const PriorityClassLister& priority_classes = {});

 private:
  AdmissionConfig config_;
  Clock clock_;
  std::mt19937_64 rng_;
};

}  // namespace podflow::admission
