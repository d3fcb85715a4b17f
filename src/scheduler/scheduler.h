// podflow's scheduler: kube-scheduler's framework, plugins, scheduling queue
// and cache over plain values (no bus, no log). The public header of
// src/scheduler.
//
// How the scheduling stage (and podflow-replay --verify-scheduling) use it:
//
//   auto registry = plugins::NewInTreeRegistry();                // once
//   auto config = ParseSchedulerConfig(section, *registry);      // the scheduler: section
//   auto profiles = BuildProfiles(*registry, *config);
//   SchedulerCore core(*profiles);                               // cache + queue
//   for (auto& feed : core.Feeds()) { /* one informer per feed.prefix */ }
//   feed.upsert(StoredObject{key, bytes, mod_revision}, now);   // per change seen
//   while (auto outcome = core.Next(now)) { /* bind, or record FailedScheduling */ }
//   EncodeDecisionRecord(outcome.decision, context);             // stored beside it
//
// One cycle without the core, over a Snapshot the caller keeps:
//
//   auto d = Schedule(profile, *PodInfoFromPod(pending_pod), snapshot, {next_start});
#pragma once

#include "scheduler/core/scheduler_core.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/decision_record.h"
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
#include "scheduler/queue/scheduling_queue.h"
