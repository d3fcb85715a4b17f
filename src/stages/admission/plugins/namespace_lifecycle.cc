// NamespaceLifecycle: a namespaced object needs its namespace to exist
// (404 `namespaces "x" not found`) and not to be terminating (403); the
// namespaces admitted earlier in the same request exist.
#include "model/objects.h"
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

class NamespaceLifecycle : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    if (!a.kind().namespaced || !state.namespaces || state.request_namespaces.contains(a.namespace_())) {
      return std::nullopt;
    }
    Result<std::optional<NamespaceInfo>> ns = state.namespaces(a.namespace_());
    if (!ns.ok()) return InternalErrorStatus(ns.status().ToString());
    if (!ns->has_value()) return model::NotFoundStatus(model::Kind("Namespace"), a.namespace_());
    if ((*ns)->phase == api::NamespacePhase::Terminating) {
      return AdmissionForbiddenStatus(a.kind(), a.name(),
                                      "unable to create new content in namespace " + a.namespace_() +
                                          " because it is being terminated");
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewNamespaceLifecycle() { return std::make_unique<NamespaceLifecycle>(); }

}  // namespace podflow::admission
