// Replay: reading the event log back as a history of the cluster — what
// `podflow-replay` prints. The one public header of src/replay.
//
// Everything here reads an EventLog (normally OpenLogReadOnly() over a
// running pipeline's data dir) and never writes. Stored values are decoded by
// their key: /registry/<resource>/[<namespace>/]<name> names the kind
// (model::FindResource); anything else is shown as its size.
//
// Thread safety: the functions keep no state; a caller's EventLog is used as
// EventLog allows (concurrently safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/types.h"
#include "log/log.h"
#include "model/codec.h"
#include "model/value.h"
#include "scheduling_generated.h"

namespace podflow::replay {

// What a change did to its key, as a Kubernetes watch says it.
enum class EventType { kAdded, kModified, kDeleted };
std::string_view EventTypeName(EventType type);  // "ADDED", "MODIFIED", "DELETED"

// --- Objects by key ---

// The kind a log key names (/registry/pods/default/nginx -> Pod), or nullptr.
const model::KindInfo* KindOfKey(std::string_view key);

// The stored object as Kubernetes prints it (model::ToValue), or nullopt when
// the key names no kind or the bytes fail verification for it.
std::optional<model::Value> ObjectValue(std::string_view key, std::string_view value);

// One line about a stored object, by kind:
//   Pod    "phase=Pending node=<none>", "phase=Running node=node-2 ip=10.244.1.5"
//   Event  "Normal Scheduled: Successfully assigned default/nginx to node-2"
//   Node   "Ready cpu=4 memory=8Gi"
//   Service, Endpoints, other kinds: a short line; unknown keys "<N bytes>".
//   Scheduling decisions (scheduler::kDecisionPrefix): "decision: node-2 (2 of 3 nodes feasible)".
std::string Summarize(std::string_view key, std::string_view value);

// --- Events between revisions ---

struct Event {
  Revision revision;
  EventType type = EventType::kAdded;
  std::string key;
  std::string writer;           // the stage that wrote the revision ("" if not recorded)
  int64_t committed_at_ms = 0;  // Unix ms (0 if not recorded)
  // kAdded / kModified: the new value. kDeleted: the value the key had just
  // before the delete ("" when that is no longer in the log).
  std::string value;
  std::string summary;  // Summarize(key, value); for kDeleted of the old value
};

struct EventQuery {
  Revision from;       // first revision (inclusive); 0: the oldest still kept
  Revision to;         // last revision (inclusive); 0: the head
  std::string prefix;  // only keys starting with this ("" = all)
};

// Every change in [from, to] in revision order (op order within one).
// Compacted: `from` is at or below the compact revision. Invalid: from > to.
// FutureRevision: `to` is past the head.
Result<std::vector<Event>> ListEvents(EventLog& log, const EventQuery& query);

// --- State at a revision ---

struct StateEntry {
  KeyValue kv;
  std::string summary;
};

struct State {
  Revision revision;                // the revision read at
  std::vector<StateEntry> entries;  // in key order
};

// Every live key (with `prefix`) at `at` (0: the head). Errors as
// EventLog::Range().
Result<State> StateAt(EventLog& log, Revision at, const std::string& prefix = "");

// --- One pod's timeline ---

// One field that differs between two versions of an object. `before` and
// `after` are compact JSON ("\"node-2\"", "3", "{...}") or "<none>" when the
// field is absent (Kubernetes omits zero values).
struct FieldChange {
  std::string path;  // "spec.nodeName", "status.conditions[type=Ready].status"
  std::string before;
  std::string after;

  bool operator==(const FieldChange&) const = default;
};

// The fields that differ between two object trees, in document order. Arrays
// whose items are all objects with a unique "name" (else "type") are matched
// by it (`containers[name=nginx]`), others by index.
std::vector<FieldChange> DiffValues(const model::Value& before, const model::Value& after);

struct TimelineEntry {
  Revision revision;
  EventType type = EventType::kAdded;
  std::string key;        // the pod's key, or the Event object's
  bool is_event = false;  // an Event object about the pod (not the pod itself)
  std::string writer;
  int64_t committed_at_ms = 0;
  // committed_at_ms minus that of the revision that created the pod (the
  // first one seen when the creation was compacted); nullopt when either
  // time was not recorded.
  std::optional<int64_t> since_creation_ms;
  std::string summary;               // Summarize() of the new (deleted: old) value
  std::vector<FieldChange> changes;  // kModified of the pod: what changed
};

struct PodTimeline {
  std::string namespace_;
  std::string name;
  std::string key;                     // /registry/pods/<ns>/<name>
  std::vector<TimelineEntry> entries;  // in revision order
};

// Every revision that changed the pod, and every Event object (kind Event,
// involvedObject naming the pod) added or modified, from the oldest kept
// revision to the head; also the Events of the pod's owners that say they
// created or deleted it ("Created pod: NAME", "Deleted pod: NAME"), their
// summary led by the owner and the controller that wrote them
// ("ReplicaSet/frontend (replicaset-controller): Normal SuccessfulCreate:
// Created pod: frontend-x7k2p"). NotFound: nothing in the log is about the pod.
Result<PodTimeline> BuildPodTimeline(EventLog& log, std::string_view namespace_,
                                     std::string_view name);

// --- A Deployment's rollout ---

// One of the Deployment's ReplicaSets at a step: its revision annotation
// and its replicas asked for, ready and available.
struct RolloutSet {
  std::string name;
  std::string revision;  // deployment.kubernetes.io/revision ("" when none)
  int64_t replicas = 0, ready = 0, available = 0;
  bool operator==(const RolloutSet&) const = default;
};

// The Deployment and its ReplicaSets (those it controls) after one revision
// that changed any of them.
struct RolloutStep {
  Revision revision;
  int64_t committed_at_ms = 0;
  std::string writer;
  std::string deployment_revision;  // its deployment.kubernetes.io/revision
  int64_t desired = 0, updated = 0, ready = 0, available = 0;
  std::vector<RolloutSet> sets;  // by name
  // The same counts and sets (what a step shows, whatever its revision).
  bool SameAs(const RolloutStep& o) const {
    return deployment_revision == o.deployment_revision && desired == o.desired && updated == o.updated &&
           ready == o.ready && available == o.available && sets == o.sets;
  }
};

struct RolloutTimeline {
  std::string namespace_, name;
  std::vector<RolloutStep> steps;  // in revision order, each differing from the one before
};

// The Deployment's rollout, revision by revision, from the oldest kept
// revision to the head: a step wherever the Deployment or one of its
// ReplicaSets changed what a step shows. NotFound: the log holds no such
// Deployment.
Result<RolloutTimeline> BuildRolloutTimeline(EventLog& log, std::string_view namespace_, std::string_view name);

// --- Printing ---

enum class Output { kTable, kJson, kYaml };

// kTable: an aligned table with a header line (kubectl style), one row per
// event: REVISION TYPE KEY WRITER SUMMARY.
// kJson / kYaml: an array of {revision, type, key, writer, committed_at_ms,
// summary, object} (object: the decoded value, null if unknown or deleted).
std::string RenderEvents(const std::vector<Event>& events, Output output);

// kTable: KEY REVISION SUMMARY rows (REVISION = the key's mod_revision).
// kJson / kYaml: a kind: List of the full objects (keys of no known kind
// are left out, with a warning on stderr).
std::string RenderState(const State& state, Output output);

// kTable: REVISION TIME WRITER TYPE CHANGE; a modification with several
// changed fields continues on indented lines, one field each.
// kJson / kYaml: {pod, key, entries: [{revision, type, key, event, writer,
// committed_at_ms, since_creation_ms, summary, changes: [{path, from, to}]}]}.
std::string RenderTimeline(const PodTimeline& timeline, Output output);

// kTable: REVISION TIME WRITER DEPLOYMENT (its revision, desired, updated,
// ready, available) REPLICASETS (name(rN)=replicas/ready/available, ...).
// kJson / kYaml: {deployment, steps: [{revision, committed_at_ms, writer,
// deploymentRevision, desired, updated, ready, available, replicaSets:
// [{name, revision, replicas, ready, available}]}]}.
std::string RenderRollout(const RolloutTimeline& rollout, Output output);

// --- Scheduling decisions (the scheduler's stored explanations) ---

// The pod's latest stored decision (an explain::SchedulingDecision, read with
// scheduler::ReadDecisionRecord) at the head. NotFound when there is none
// (never scheduled, or expired with the events' TTL).
Result<std::string> LatestDecision(EventLog& log, std::string_view namespace_, std::string_view name);

// The stable JSON document of podflow-replay --why -o json:
//   {"pod": "ns/name", "uid", "profile", "podRevision", "revision",
//    "selected": "node-2" | null, "message", "allNodes", "feasibleNodes",
//    "tiedNodes", "tieBreakSeed", "startNodeIndex", "nominatedNode",
//    "nodes": [{"name", "passed", "plugin", "reason",
//               "scores": [{"plugin", "raw", "normalized", "weight", "weighted"}],
//               "total"}],
//    "filteredOut": [{"plugin", "reason", "count"}]}
// nodes: the recorded feasible nodes (passed: true, plugin and reason null),
// the selected one first, then by total, then the recorded rejected nodes
// (passed: false, scores [], total null). reason joins a verdict's reasons
// with ", ".
// --verify-scheduling compares these documents (`why.cc`).
model::Value DecisionValue(const explain::SchedulingDecision& record);

// podflow-replay --why: the same content as DecisionValue, as text.
std::string DecisionText(const explain::SchedulingDecision& record);

struct VerifyReport {
  size_t verified = 0;  // decisions re-run
  size_t differ = 0;    // of those, how many came out otherwise
  size_t skipped = 0;   // decisions that could not be re-run (see `notes`)
  // One line per difference ("default/web (revision 12): selected: \"a\" -> \"b\"")
  // and per skipped group of decisions.
  std::vector<std::string> notes;
};

// Re-runs every stored decision (every revision of every key under
// scheduler::kDecisionPrefix still in the log) against the cluster state it
// was made on, and compares the outcome with the record (its whole --why
// document, the next start index and the number of assumed pods).
//
// Per scheduler run (SchedulerRun record: the same profiles from the same
// config), decisions are re-run in the order they were made (seq) on one
// scheduler::SchedulerCore fed through SchedulerCore::Feeds(), exactly as the
// stage's informers fed it: each followed prefix listed at the record's
// list_revision, then its changes up to the record's revision; the decided
// pod is scheduled with the recorded start node index, and a scheduled one
// stays assumed as it did in the stage. A decision whose binding never
// happened (a conflict) is not in the log, so a later decision made while
// it was assumed can differ; the differing assumed-pod count says so.
// Decisions whose history was compacted, or whose run record is missing,
// are skipped.
Result<VerifyReport> VerifyScheduling(EventLog& log);

}  // namespace podflow::replay
