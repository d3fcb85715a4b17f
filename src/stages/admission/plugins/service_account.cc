// ServiceAccount: a pod runs as the `default` account of its namespace
// unless it names one (spec.serviceAccount, the old field, kept equal).
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

class ServiceAccount : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState&) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    api::PodSpecT& spec = *pod->spec;
    if (spec.service_account_name.empty()) spec.service_account_name = spec.service_account;
    if (spec.service_account_name.empty()) spec.service_account_name = "default";
    spec.service_account = spec.service_account_name;
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewServiceAccount() { return std::make_unique<ServiceAccount>(); }

}  // namespace podflow::admission
