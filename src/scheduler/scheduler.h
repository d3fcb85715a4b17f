// podflow's scheduler core: kube-scheduler's framework and plugins over
// plain values (no bus, no log). The public header of src/scheduler.
//
// How the scheduling stage uses it:
//
//   auto registry = plugins::NewInTreeRegistry();               // once
//   auto profile = Profile::Build(*registry, DefaultProfileConfig());
//   Snapshot cache;                                              // the informer cache
//   cache.UpsertNode(*NodeInfoFromNode(node));                   // per Node event
//   cache.AddPod(*PodInfoFromPod(bound_pod));                    // per bound Pod
//
//   auto pod = PodInfoFromPod(pending_pod);                      // per pending Pod
//   if (profile->Handles(*pod)) {
//     auto d = Schedule(*profile, *pod, cache, {next_start});
//     next_start = d->next_start_node_index;
//     if (d->scheduled()) { pod->node_name = d->node; cache.AddPod(*pod); /* assume, then bind */ }
//     else { /* FailedScheduling event: d->message */ }
//   }
#pragma once

#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/equivalence_cache.h"
#include "scheduler/framework/fit_error.h"
#include "scheduler/framework/labels.h"
#include "scheduler/framework/metrics.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/profile.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/resources.h"
#include "scheduler/framework/runner.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/framework/status.h"
#include "scheduler/plugins/registry.h"
