// The admission plugins' one shape (kube-apiserver's admission.Interface):
// a plugin sees each document of a request, may change it in the mutating
// phase (Admit, after the scheme's defaults and before validation) and may
// refuse it in the validating phase (Validate, after validation). Plugins
// hold only their configuration; what they read from the cluster comes in
// the RequestState, answered by the stage. Internal to admission.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/kind_types.h"
#include "stages/admission/admission.h"
#include "stages/admission/priority.h"

namespace podflow::admission {

// What the plugins of one request read from the cluster and share across
// its documents. Lives for one Admit call.
struct RequestState {
  const NamespaceLookup& namespaces;
  std::map<std::string, NamespaceInfo> request_namespaces;  // admitted earlier in the request
  RequestPriorityClasses& priority_classes;
  const LimitRangeLister& limit_ranges;
  // LimitRanges admitted earlier in the request (stored bytes): they apply
  // to the documents after them, as with kubectl creating them one by one.
  std::vector<std::string> request_limit_ranges;
  const ResourceQuotaLister& quotas;
  const ServiceAccountLookup& service_accounts;
  // ServiceAccounts admitted earlier in the request, by "namespace/name".
  std::map<std::string, ServiceAccountInfo> request_service_accounts;
  // The request's time (a deleted pod's grace running out).
  std::chrono::system_clock::time_point now;
  // Draws the names plugins generate (the token volume's); null: none drawn.
  std::mt19937_64* rng = nullptr;
  // Quotas (by key) as the request's documents so far have charged them.
  std::map<std::string, api::ResourceQuotaT> request_quotas;
  // What the document being admitted is charged: the quotas as they are
  // with it, and what it counts for. Kept only if it is admitted.
  std::vector<std::pair<std::string, api::ResourceQuotaT>> document_quotas;
  std::map<std::string, model::Quantity> document_usage;
  // Warnings about the document being admitted, handed to the client.
  std::vector<std::string> document_warnings;
};

// The labels of namespace `ns`: one made earlier in the request, or the
// stored one (none when it does not exist).
Result<std::map<std::string, std::string>> NamespaceLabels(const std::string& ns, const RequestState& state);

// What a request does to the object (admission.Operation), for the
// operations plugins look at.
enum class Operation { kCreate, kUpdate };

// One document as the plugins see it (admission.Attributes).
class Attributes {
 public:
  Attributes(const model::KindInfo& kind, std::string ns, std::string name, const UserInfo& user, void* object)
      : kind_(kind), ns_(std::move(ns)), name_(std::move(name)), user_(user), object_(object) {}
  // An update of `old_object` (its native type, as stored) to `object`,
  // on the main resource or on `subresource`.
  Attributes(const model::KindInfo& kind, std::string ns, std::string name, const UserInfo& user, void* object,
             const void* old_object, std::string subresource)
      : kind_(kind), ns_(std::move(ns)), name_(std::move(name)), user_(user), object_(object),
        operation_(Operation::kUpdate), old_object_(old_object), subresource_(std::move(subresource)) {}

  Operation operation() const { return operation_; }
  // An update's subresource ("status"), empty for the object itself.
  const std::string& subresource() const { return subresource_; }
  // An update: the object as it was stored, seen as a create of it would
  // be (same kind, namespace and name). REQUIRES: operation() is kUpdate.
  Attributes Old() const { return Attributes(kind_, ns_, name_, user_, const_cast<void*>(old_object_)); }

  const model::KindInfo& kind() const { return kind_; }
  const std::string& namespace_() const { return ns_; }
  // The name as submitted, generateName when there was none: plugins run
  // before the name is generated in kube-apiserver.
  const std::string& name() const { return name_; }
  const UserInfo& user() const { return user_; }

  // The object as its native type (As<api::PodT>()), or nullptr when it is
  // of another kind.
  template <typename Native>
  Native* As() const {
    return kind_.kind == model::KindNameOf<typename Native::TableType>::value ? static_cast<Native*>(object_)
                                                                              : nullptr;
  }

 private:
  const model::KindInfo& kind_;
  std::string ns_;
  std::string name_;
  const UserInfo& user_;
  void* object_;
  Operation operation_ = Operation::kCreate;
  const void* old_object_ = nullptr;
  std::string subresource_;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  // Whether the plugin looks at `op` (admission.Handler.Handles): creates
  // only, unless it says otherwise.
  virtual bool Handles(Operation op) const { return op == Operation::kCreate; }
  // Mutating phase: may change the object; a status refuses it.
  virtual std::optional<ApiStatusInfo> Admit(Attributes&, RequestState&) const { return std::nullopt; }
  // Validating phase, on the valid object: a status refuses it.
  virtual std::optional<ApiStatusInfo> Validate(const Attributes&, RequestState&) const { return std::nullopt; }
};

// Every plugin podflow has, each in its own file here.
std::unique_ptr<Plugin> NewNamespaceLifecycle();
std::unique_ptr<Plugin> NewLimitRanger();
std::unique_ptr<Plugin> NewServiceAccount();
std::unique_ptr<Plugin> NewPodSecurity();
std::unique_ptr<Plugin> NewPriority();
std::unique_ptr<Plugin> NewDefaultTolerationSeconds(const PluginConfig& config);
std::unique_ptr<Plugin> NewResourceQuota();
// Fails (Invalid, naming the rule) on a selector that does not parse.
Result<std::unique_ptr<Plugin>> NewSidecarInjector(const std::vector<SidecarRule>& rules);
std::unique_ptr<Plugin> NewImagePolicy(const model::RegistryConfig& registry);

}  // namespace podflow::admission
