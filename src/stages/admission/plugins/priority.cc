// Priority: a pod takes priority and preemptionPolicy from its
// PriorityClass; a PriorityClass may not be a second global default
// (the rules themselves are in stages/admission/priority.h).
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

class Priority : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    return AdmitPodPriority(a.name(), *pod->spec, state.priority_classes);
  }
  std::optional<ApiStatusInfo> Validate(const Attributes& a, RequestState& state) const override {
    const api::PriorityClassT* pc = a.As<api::PriorityClassT>();
    if (pc == nullptr) return std::nullopt;
    return AdmitPriorityClass(*pc, state.priority_classes);
  }
};

}  // namespace

std::unique_ptr<Plugin> NewPriority() { return std::make_unique<Priority>(); }

}  // namespace podflow::admission
