// The kinds the object model knows, and Kubernetes' field-error wording.
#include <array>

#include "model/codec.h"

namespace podflow::model {
namespace {

constexpr std::array<KindInfo, 11> kKinds = {{
    {"v1", "Pod", "pods", "podflow.api.Pod", true},
    {"v1", "Node", "nodes", "podflow.api.Node", false},
    {"v1", "Namespace", "namespaces", "podflow.api.Namespace", false},
    {"v1", "Service", "services", "podflow.api.Service", true},
    {"v1", "Endpoints", "endpoints", "podflow.api.Endpoints", true},
    {"v1", "Event", "events", "podflow.api.Event", true},
    {"v1", "PersistentVolume", "persistentvolumes", "podflow.api.PersistentVolume", false},
    {"v1", "PersistentVolumeClaim", "persistentvolumeclaims", "podflow.api.PersistentVolumeClaim", true},
    {"v1", "LimitRange", "limitranges", "podflow.api.LimitRange", true},
    {"v1", "ResourceQuota", "resourcequotas", "podflow.api.ResourceQuota", true},
    {"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", "podflow.api.PriorityClass", false},
}};

// kubectl's short names and singulars, beside the plural resource name.
struct Alias {
  std::string_view name;
  std::string_view resource;
};
constexpr std::array<Alias, 22> kAliases = {{
    {"pod", "pods"}, {"po", "pods"},
    {"node", "nodes"}, {"no", "nodes"},
    {"namespace", "namespaces"}, {"ns", "namespaces"},
    {"service", "services"}, {"svc", "services"},
    {"ep", "endpoints"},
    {"event", "events"}, {"ev", "events"},
    {"persistentvolume", "persistentvolumes"}, {"pv", "persistentvolumes"},
    {"persistentvolumeclaim", "persistentvolumeclaims"}, {"pvc", "persistentvolumeclaims"},
    {"limitrange", "limitranges"}, {"limits", "limitranges"},
    {"resourcequota", "resourcequotas"}, {"quota", "resourcequotas"},
    {"priorityclass", "priorityclasses"}, {"pc", "priorityclasses"},
    {"endpoint", "endpoints"},
}};

}  // namespace

std::span<const KindInfo> Kinds() { return kKinds; }

const KindInfo* FindKind(std::string_view api_version, std::string_view kind) {
  for (const KindInfo& k : kKinds) {
    if (k.api_version == api_version && k.kind == kind) return &k;
  }
  return nullptr;
}

const KindInfo* FindResource(std::string_view name) {
  for (const Alias& a : kAliases) {
    if (a.name == name) name = a.resource;
  }
  for (const KindInfo& k : kKinds) {
    if (k.resource == name) return &k;
  }
  return nullptr;
}

}  // namespace podflow::model
