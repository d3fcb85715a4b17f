// The simulated runtime's public header: include this one. It gathers the
// pieces (each in its own header beside it):
//   config.h       RuntimeConfig, ParseRuntimeConfig, ResolveNodes -> SimNode
//   (the registry catalog, ImageCatalog and image reference normalization,
//   is model/image_catalog.h: admission's ImagePolicy reads it too)
//   node_object.h  BuildNode / BuildNodeBytes: the Node a simulated kubelet registers;
//                  RepostedNodeStatus: its status posted again after it was marked Unknown
//   node_lease.h   NodeLeases: each node's Lease and when it is renewed
//   ip_pool.h      PodIpPool over a node's podCIDR (cidr.h: IPv4 / CIDR helpers)
//   pod_runner.h   PodRunner: one pod's lifecycle on simulated time
//   container_plan.h  what a container does (behaviour layers, probe spans)
//   pod_config.h   ConfigMaps and Secrets; a container's env and volumes as kubelet makes them
//   pod_dns.h      the /etc/hosts and /etc/resolv.conf kubelet writes for a pod
//   shell_script.h what a container's command line reads as
//   agent_set.h    NodeAgentSet: many nodes' pods, steps due at `now`
//   (SimTime and the RFC 3339 / Go-duration formats are in base/clock.h; the
//   reports it sends and kubelet's pod phase rules in model/report.h and
//   model/pod_phase.h)
#pragma once

#include "base/clock.h"
#include "model/pod_phase.h"
#include "model/report.h"
#include "stages/runtime/agent_set.h"
#include "model/image_catalog.h"
#include "stages/runtime/cidr.h"
#include "stages/runtime/config.h"
#include "stages/runtime/container_plan.h"
#include "stages/runtime/ip_pool.h"
#include "stages/runtime/node_lease.h"
#include "stages/runtime/node_object.h"
#include "stages/runtime/pod_config.h"
#include "stages/runtime/pod_dns.h"
#include "stages/runtime/pod_runner.h"
