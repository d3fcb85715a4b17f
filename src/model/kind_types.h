// The C++ root table of every kind, for code that works on any kind with
// its generated type: VisitKind(kind, f) calls f.template operator()<T>()
// with T the kind's root table (api::Pod, api::Deployment, ...). Every
// kind's root table is named as the kind.
//
// This list and Kinds() (kinds.cc) name the same kinds; a unit test checks
// that every kind is visited.
#pragma once

#include <string_view>

#include "api_generated.h"
#include "model/codec.h"

namespace podflow::model {

#define PODFLOW_KIND_TYPES(X)                                                                               \
  X(Pod) X(Node) X(Namespace) X(Service) X(Endpoints) X(Event) X(PersistentVolume) X(PersistentVolumeClaim) \
  X(LimitRange) X(ResourceQuota) X(PriorityClass) X(ConfigMap) X(Secret) X(ServiceAccount)                  \
  X(EndpointSlice) X(Deployment) X(ReplicaSet) X(DaemonSet) X(StatefulSet) X(Job) X(CronJob) X(Role)       \
  X(ClusterRole) X(RoleBinding) X(ClusterRoleBinding) X(PodDisruptionBudget) X(StorageClass) X(CSINode)    \
  X(CSIDriver) X(Lease)

// The kind whose root table is T: KindNameOf<api::Pod>::value == "Pod".
template <typename T>
struct KindNameOf;
#define PODFLOW_KIND_NAME_OF(T)                         \
  template <>                                           \
  struct KindNameOf<api::T> {                           \
    static constexpr std::string_view value = #T;       \
  };
PODFLOW_KIND_TYPES(PODFLOW_KIND_NAME_OF)
#undef PODFLOW_KIND_NAME_OF

// Calls f.template operator()<T>() with the root table of `kind`; false
// when the kind has no C++ type here (a bug: see the unit test).
template <typename F>
bool VisitKind(const KindInfo& kind, F&& f) {
#define PODFLOW_VISIT_KIND(T)             \
  if (kind.kind == #T) {                  \
    f.template operator()<api::T>();      \
    return true;                          \
  }
  PODFLOW_KIND_TYPES(PODFLOW_VISIT_KIND)
#undef PODFLOW_VISIT_KIND
  return false;
}

}  // namespace podflow::model
