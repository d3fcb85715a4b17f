// The kinds the object model knows, with kubectl's names for them.
#include <cctype>
#include <string>

#include "model/codec.h"

namespace podflow::model {
namespace {

constexpr KindInfo kKinds[] = {
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
    {"v1", "ConfigMap", "configmaps", "podflow.api.ConfigMap", true},
    {"v1", "Secret", "secrets", "podflow.api.Secret", true},
    {"v1", "ServiceAccount", "serviceaccounts", "podflow.api.ServiceAccount", true},
    {"discovery.k8s.io/v1", "EndpointSlice", "endpointslices", "podflow.api.EndpointSlice", true},
    {"apps/v1", "Deployment", "deployments", "podflow.api.Deployment", true},
    {"apps/v1", "ReplicaSet", "replicasets", "podflow.api.ReplicaSet", true},
    {"apps/v1", "DaemonSet", "daemonsets", "podflow.api.DaemonSet", true},
    {"apps/v1", "StatefulSet", "statefulsets", "podflow.api.StatefulSet", true},
    {"batch/v1", "Job", "jobs", "podflow.api.Job", true},
    {"batch/v1", "CronJob", "cronjobs", "podflow.api.CronJob", true},
    {"rbac.authorization.k8s.io/v1", "Role", "roles", "podflow.api.Role", true},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", "podflow.api.ClusterRole", false},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", "podflow.api.RoleBinding", true},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings",
     "podflow.api.ClusterRoleBinding", false},
    {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", "podflow.api.PodDisruptionBudget", true},
    {"storage.k8s.io/v1", "StorageClass", "storageclasses", "podflow.api.StorageClass", false},
    {"storage.k8s.io/v1", "CSINode", "csinodes", "podflow.api.CSINode", false},
    {"storage.k8s.io/v1", "CSIDriver", "csidrivers", "podflow.api.CSIDriver", false},
    {"coordination.k8s.io/v1", "Lease", "leases", "podflow.api.Lease", true},
};

// kubectl's short names, beside the plural resource name, the singular and
// the kind (any case) that FindResource also takes.
struct Alias {
  std::string_view name;
  std::string_view resource;
};
constexpr Alias kShortNames[] = {
    {"po", "pods"}, {"no", "nodes"}, {"ns", "namespaces"}, {"svc", "services"},
    {"ep", "endpoints"}, {"ev", "events"}, {"pv", "persistentvolumes"},
    {"pvc", "persistentvolumeclaims"}, {"limits", "limitranges"}, {"quota", "resourcequotas"},
    {"pc", "priorityclasses"}, {"cm", "configmaps"}, {"sa", "serviceaccounts"},
    {"deploy", "deployments"}, {"rs", "replicasets"}, {"ds", "daemonsets"},
    {"sts", "statefulsets"}, {"cj", "cronjobs"}, {"pdb", "poddisruptionbudgets"},
    {"sc", "storageclasses"}, {"endpoint", "endpoints"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::span<const KindInfo> Kinds() { return kKinds; }

const KindInfo* FindKind(std::string_view api_version, std::string_view kind) {
  for (const KindInfo& k : kKinds) {
    if (k.api_version == api_version && k.kind == kind) return &k;
  }
  return nullptr;
}

const KindInfo* FindResource(std::string_view name) {
  // resource.group names one kind too ("deployments.apps"): the part before
  // the first dot is what is looked up, and the group must then match.
  std::string_view group;
  bool grouped = false;
  if (size_t dot = name.find('.'); dot != std::string_view::npos) {
    group = name.substr(dot + 1);
    name = name.substr(0, dot);
    grouped = true;
  }
  for (const Alias& a : kShortNames) {
    if (a.name == name) name = a.resource;
  }
  for (const KindInfo& k : kKinds) {
    if (grouped && ApiGroup(k) != group) continue;
    // The plural, the singular (the kind in lower case) or the kind.
    if (k.resource == name || Lower(k.kind) == Lower(name)) return &k;
  }
  return nullptr;
}

std::string_view ApiGroup(const KindInfo& kind) {
  size_t slash = kind.api_version.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : kind.api_version.substr(0, slash);
}

}  // namespace podflow::model
