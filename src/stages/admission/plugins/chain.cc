// AdmissionChain: the enabled plugins, in kube-apiserver's order.
#include <algorithm>

#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

struct Registered {
  std::string_view name;
  Result<std::unique_ptr<Plugin>> (*make)(const PluginConfig&);
  bool on_by_default = true;
};

template <std::unique_ptr<Plugin> (*New)()>
Result<std::unique_ptr<Plugin>> Plain(const PluginConfig&) {
  return New();
}

Result<std::unique_ptr<Plugin>> Sidecars(const PluginConfig& config) { return NewSidecarInjector(config.sidecars); }
Result<std::unique_ptr<Plugin>> Images(const PluginConfig& config) { return NewImagePolicy(config.registry); }
Result<std::unique_ptr<Plugin>> Tolerations(const PluginConfig& config) { return NewDefaultTolerationSeconds(config); }

// kube-apiserver's order (its RecommendedPluginOrder), for the plugins
// podflow has; the sidecar injector stands where mutating webhooks run.
constexpr Registered kRegistry[] = {
    {"NamespaceLifecycle", &Plain<&NewNamespaceLifecycle>},
    {"LimitRanger", &Plain<&NewLimitRanger>},
    {"ServiceAccount", &Plain<&NewServiceAccount>},
    {"ImagePolicy", &Images, /*on_by_default=*/false},
    {"PodSecurity", &Plain<&NewPodSecurity>},
    {"Priority", &Plain<&NewPriority>},
    {"DefaultTolerationSeconds", &Tolerations},
    {"SidecarInjector", &Sidecars},
    {"ResourceQuota", &Plain<&NewResourceQuota>},
};

}  // namespace

Result<std::map<std::string, std::string>> NamespaceLabels(const std::string& ns, const RequestState& state) {
  if (auto it = state.request_namespaces.find(ns); it != state.request_namespaces.end()) return it->second.labels;
  if (!state.namespaces) return std::map<std::string, std::string>();
  Result<std::optional<NamespaceInfo>> info = state.namespaces(ns);
  if (!info.ok()) return info.status();
  return info->has_value() ? (*info)->labels : std::map<std::string, std::string>();
}

const std::vector<std::string_view>& AdmissionChain::Known() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Registered& r : kRegistry) out.push_back(r.name);
    return out;
  }();
  return names;
}

AdmissionChain::AdmissionChain() {
  for (const Registered& r : kRegistry) {
    if (!r.on_by_default) continue;
    names_.emplace_back(r.name);
    plugins_.push_back(r.make({}).value());  // nothing to configure: cannot fail
  }
}

Result<AdmissionChain> AdmissionChain::Create(const std::vector<std::string>& enable,
                                              const std::vector<std::string>& disable, const PluginConfig& config) {
  const std::vector<std::string_view>& known = Known();
  for (const std::vector<std::string>* list : {&enable, &disable}) {
    for (const std::string& name : *list) {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (std::string_view k : known) all += (all.empty() ? "" : ", ") + std::string(k);
        return Status::Invalid("admission plugin \"" + name + "\" is unknown; podflow has " + all);
      }
    }
  }
  for (const std::string& name : enable) {
    if (std::find(disable.begin(), disable.end(), name) != disable.end()) {
      return Status::Invalid("admission plugin \"" + name + "\" is both enabled and disabled");
    }
  }
  AdmissionChain chain;
  chain.names_.clear();
  chain.plugins_.clear();
  for (const Registered& r : kRegistry) {
    const bool enabled = std::find(enable.begin(), enable.end(), r.name) != enable.end();
    if (!r.on_by_default && !enabled) continue;
    if (std::find(disable.begin(), disable.end(), r.name) != disable.end()) continue;
    Result<std::unique_ptr<Plugin>> plugin = r.make(config);
    if (!plugin.ok()) return plugin.status();
    chain.names_.emplace_back(r.name);
    chain.plugins_.push_back(std::move(*plugin));
  }
  return chain;
}

std::optional<ApiStatusInfo> AdmissionChain::Admit(Attributes& attributes, RequestState& state) const {
  for (const auto& plugin : plugins_) {
    if (!plugin->Handles(attributes.operation())) continue;
    if (std::optional<ApiStatusInfo> refused = plugin->Admit(attributes, state)) return refused;
  }
  return std::nullopt;
}

std::optional<ApiStatusInfo> AdmissionChain::Validate(const Attributes& attributes, RequestState& state) const {
  for (const auto& plugin : plugins_) {
    if (!plugin->Handles(attributes.operation())) continue;
    if (std::optional<ApiStatusInfo> refused = plugin->Validate(attributes, state)) return refused;
  }
  return std::nullopt;
}

}  // namespace podflow::admission
