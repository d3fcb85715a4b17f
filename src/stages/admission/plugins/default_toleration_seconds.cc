// DefaultTolerationSeconds: a pod tolerates not-ready and unreachable nodes
// for 300 s (NoExecute) unless it says otherwise.
#include <algorithm>

#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

class DefaultTolerationSeconds : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState&) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    api::PodSpecT& spec = *pod->spec;
    for (std::string_view key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
      bool has = std::any_of(spec.tolerations.begin(), spec.tolerations.end(), [&](const auto& t) {
        return (t->key == key || (t->key.empty() && t->operator_ == api::TolerationOperator::Exists)) &&
               (t->effect == api::TaintEffect::Unset || t->effect == api::TaintEffect::NoExecute);
      });
      if (has) continue;
      auto t = std::make_unique<api::TolerationT>();
      t->key = std::string(key);
      t->operator_ = api::TolerationOperator::Exists;
      t->effect = api::TaintEffect::NoExecute;
      t->toleration_seconds = int64_t{300};
      spec.tolerations.push_back(std::move(t));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewDefaultTolerationSeconds() { return std::make_unique<DefaultTolerationSeconds>(); }

}  // namespace podflow::admission
