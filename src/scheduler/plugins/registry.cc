#include "scheduler/plugins/registry.h"

#include "scheduler/plugins/default_preemption/default_preemption.h"
#include "scheduler/plugins/image_locality/image_locality.h"
#include "scheduler/plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "scheduler/plugins/node_affinity/node_affinity.h"
#include "scheduler/plugins/node_name/node_name.h"
#include "scheduler/plugins/node_ports/node_ports.h"
#include "scheduler/plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"
#include "scheduler/plugins/node_pressure/node_pressure.h"
#include "scheduler/plugins/node_resources_balanced_allocation/balanced_allocation.h"
#include "scheduler/plugins/node_resources_fit/fit.h"
#include "scheduler/plugins/node_unschedulable/node_unschedulable.h"
#include "scheduler/plugins/node_volume_limits/node_volume_limits.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"
#include "scheduler/plugins/taint_toleration/taint_toleration.h"
#include "scheduler/plugins/volume_binding/volume_binding.h"
#include "scheduler/plugins/volume_restrictions/volume_restrictions.h"
#include "scheduler/plugins/volume_zone/volume_zone.h"

namespace podflow::scheduler::plugins {

Result<Registry> NewInTreeRegistry() {
  Registry r;
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeName>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeUnschedulable>());
  PODFLOW_RETURN_IF_ERROR(r.Register<TaintToleration>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeAffinity>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodePorts>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeResourcesFit>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeResourcesBalancedAllocation>());
  PODFLOW_RETURN_IF_ERROR(r.Register<ImageLocality>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodePreferAvoidPods>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodePressure>());
  PODFLOW_RETURN_IF_ERROR(r.Register<VolumeRestrictions>());
  PODFLOW_RETURN_IF_ERROR(r.Register<NodeVolumeLimits>());
  PODFLOW_RETURN_IF_ERROR(r.Register<VolumeBinding>());
  PODFLOW_RETURN_IF_ERROR(r.Register<VolumeZone>());
  PODFLOW_RETURN_IF_ERROR(r.Register<PodTopologySpread>());
  PODFLOW_RETURN_IF_ERROR(r.Register<InterPodAffinity>());
  PODFLOW_RETURN_IF_ERROR(r.Register<DefaultPreemption>());
  return r;
}

}  // namespace podflow::scheduler::plugins
