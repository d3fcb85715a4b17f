// ServiceAccount: a pod runs as the `default` account of its namespace
// unless it names one (spec.serviceAccount, the old field, kept equal), and
// the account must exist (`error looking up service account ns/name:
// serviceaccount "name" not found`). A namespace made earlier in the
// request brings its `default` account with it. A mirror pod (a static
// pod the kubelet mirrors) runs as none and may not name one.
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";

bool Mirror(const api::PodT& pod) {
  if (!pod.metadata) return false;
  for (const auto& a : pod.metadata->annotations) {
    if (a->key == kMirrorAnnotation) return true;
  }
  return false;
}

class ServiceAccount : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    api::PodSpecT& spec = *pod->spec;
    if (spec.service_account_name.empty()) spec.service_account_name = spec.service_account;
    // A static pod the kubelet mirrors runs as no account.
    if (Mirror(*pod)) {
      if (spec.service_account_name.empty()) return std::nullopt;
      return AdmissionForbiddenStatus(a.kind(), a.name(), "a mirror pod may not reference service accounts");
    }
    if (spec.service_account_name.empty()) spec.service_account_name = "default";
    spec.service_account = spec.service_account_name;
    if (!state.service_accounts) return std::nullopt;
    const std::string& name = spec.service_account_name;
    const std::string& ns = a.namespace_();
    if (state.request_service_accounts.contains(ns + "/" + name)) return std::nullopt;
    if (name == "default" && state.request_namespaces.contains(ns)) return std::nullopt;
    Result<bool> exists = state.service_accounts(ns, name);
    const std::string looking = "error looking up service account " + ns + "/" + name + ": ";
    if (!exists.ok()) return AdmissionForbiddenStatus(a.kind(), a.name(), looking + exists.status().message());
    if (!*exists) {
      return AdmissionForbiddenStatus(a.kind(), a.name(), looking + "serviceaccount " + GoQuote(name) + " not found");
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewServiceAccount() { return std::make_unique<ServiceAccount>(); }

}  // namespace podflow::admission
