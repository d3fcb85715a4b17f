// SidecarInjector: the config's sidecar rules, applied where kube-apiserver
// runs its mutating webhooks. A pod that a rule selects (by its namespace's
// labels and its own) gets the rule's init containers, containers and
// volumes, each unless the pod already has one of that name, then the
// scheme's defaults again; validation that follows checks the result as it
// checks any pod.
#include "model/labels.h"
#include "model/objects.h"
#include "stages/admission/defaults.h"
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

struct CompiledRule {
  std::string name;
  model::LabelSelector namespaces = model::LabelSelector::Everything();
  model::LabelSelector pods = model::LabelSelector::Everything();
  std::string pod;  // packed: its spec holds what to add
};

template <typename T>
bool Named(const std::vector<std::unique_ptr<T>>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const auto& item) { return item->name == name; });
}

// Moves `from`'s items into `to` unless one of that name is in `to` or in
// `also` (containers and init containers share their names); whether any was.
template <typename T>
bool AddMissing(std::vector<std::unique_ptr<T>>& to, std::vector<std::unique_ptr<T>>& from,
                const std::vector<std::unique_ptr<T>>& also) {
  bool added = false;
  for (auto& item : from) {
    if (Named(to, item->name) || Named(also, item->name)) continue;
    to.push_back(std::move(item));
    added = true;
  }
  return added;
}

class SidecarInjector : public Plugin {
 public:
  explicit SidecarInjector(std::vector<CompiledRule> rules) : rules_(std::move(rules)) {}

  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec || rules_.empty()) return std::nullopt;
    const model::Labels labels = pod->metadata ? model::LabelsFromNative(pod->metadata->labels) : model::Labels();
    std::optional<model::Labels> namespace_labels;
    bool injected = false;
    for (const CompiledRule& rule : rules_) {
      if (!rule.pods.Matches(labels)) continue;
      if (!namespace_labels) {
        Result<std::map<std::string, std::string>> read = NamespaceLabels(a.namespace_(), state);
        if (!read.ok()) return InternalErrorStatus(read.status().ToString());
        namespace_labels = model::Labels(read->begin(), read->end());  // a map is in key order, as Labels are
      }
      if (!rule.namespaces.Matches(*namespace_labels)) continue;
      std::unique_ptr<api::PodT> add = model::Unpack<api::Pod>(rule.pod);
      if (!add->spec) continue;
      api::PodSpecT& spec = *pod->spec;
      injected |= AddMissing(spec.init_containers, add->spec->init_containers, spec.containers);
      injected |= AddMissing(spec.containers, add->spec->containers, spec.init_containers);
      injected |= AddMissing(spec.volumes, add->spec->volumes, {});
    }
    // What was added gets the defaults the pod's own containers got.
    if (injected) DefaultPod(*pod);
    return std::nullopt;
  }

 private:
  std::vector<CompiledRule> rules_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewSidecarInjector(const std::vector<SidecarRule>& rules) {
  std::vector<CompiledRule> compiled;
  for (const SidecarRule& rule : rules) {
    CompiledRule c;
    c.name = rule.name;
    c.pod = rule.pod;
    for (auto [text, into, what] : {std::tuple{&rule.namespace_selector, &c.namespaces, "namespaceSelector"},
                                    std::tuple{&rule.selector, &c.pods, "selector"}}) {
      if (text->empty()) continue;
      Result<model::LabelSelector> parsed = model::ParseLabelSelector(*text);
      if (!parsed.ok()) {
        return Status::Invalid("sidecar injector rule \"" + rule.name + "\": " + what + ": " +
                               parsed.status().message());
      }
      *into = std::move(*parsed);
    }
    compiled.push_back(std::move(c));
  }
  return std::unique_ptr<Plugin>(std::make_unique<SidecarInjector>(std::move(compiled)));
}

}  // namespace podflow::admission
