// DefaultTolerationSeconds: a pod tolerates not-ready and unreachable nodes
// for 300 s (NoExecute; the config's defaultNotReadyTolerationSeconds and
// defaultUnreachableTolerationSeconds) unless it says otherwise.
#include <algorithm>

#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

class DefaultTolerationSeconds : public Plugin {
 public:
  DefaultTolerationSeconds(int64_t not_ready, int64_t unreachable) : not_ready_(not_ready), unreachable_(unreachable) {}

  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState&) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    api::PodSpecT& spec = *pod->spec;
    for (auto [key, seconds] : {std::pair<std::string_view, int64_t>{"node.kubernetes.io/not-ready", not_ready_},
                                std::pair<std::string_view, int64_t>{"node.kubernetes.io/unreachable", unreachable_}}) {
      bool has = std::any_of(spec.tolerations.begin(), spec.tolerations.end(), [&](const auto& t) {
        return (t->key == key || (t->key.empty() && t->operator_ == api::TolerationOperator::Exists)) &&
               (t->effect == api::TaintEffect::Unset || t->effect == api::TaintEffect::NoExecute);
      });
      if (has) continue;
      auto t = std::make_unique<api::TolerationT>();
      t->key = std::string(key);
      t->operator_ = api::TolerationOperator::Exists;
      t->effect = api::TaintEffect::NoExecute;
      t->toleration_seconds = seconds;
      spec.tolerations.push_back(std::move(t));
    }
    return std::nullopt;
  }

 private:
  int64_t not_ready_, unreachable_;
};

}  // namespace

std::unique_ptr<Plugin> NewDefaultTolerationSeconds(const PluginConfig& config) {
  return std::make_unique<DefaultTolerationSeconds>(config.not_ready_toleration_seconds,
                                                    config.unreachable_toleration_seconds);
}

}  // namespace podflow::admission
