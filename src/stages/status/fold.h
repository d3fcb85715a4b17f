// FoldReport: a runtime report folded into the stored pod, as kubelet's
// status manager would write it, plus the Events to create.
//
// What is taken from where:
//  - from the report: phase (a terminal phase already stored is never left),
//    hostIP(s), podIP(s), container and init container statuses, message,
//    reason, the PodReadyToStartContainers condition;
//  - derived here (conditions.h): Initialized, ContainersReady, Ready;
//  - kept from the stored pod: PodScheduled (binding's), any other
//    condition, startTime once set, qosClass, nominatedNodeName.
// A condition's lastTransitionTime changes only when its status does.
//
// Which reports are ignored (verdict != kApplied; nothing to write, no
// events): a pod uid that is not the stored pod's (the pod was deleted and
// maybe re-created under the same name); a node that is not the pod's
// spec.nodeName; a report whose observed_mod_revision is older than one
// already folded for that uid (ReportLedger) — reports from one runtime
// arrive in order, so an older revision can only come from a runtime that
// acted on an outdated view (e.g. restarted and replaying). Equal revisions
// are later steps of the same view and are folded.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "model/events.h"
#include "model/report.h"
#include "pod_generated.h"

namespace podflow::status {

enum class FoldVerdict { kApplied, kUidMismatch, kNodeMismatch, kStale };
std::string_view FoldVerdictName(FoldVerdict verdict);

// The highest observed_mod_revision folded per pod uid. Owned by the status
// stage; after a restart it is empty, so the first report per pod is taken.
// Thread safety: none.
class ReportLedger {
 public:
  int64_t LastFolded(std::string_view pod_uid) const;
  void Record(const model::Report& report);
  void Forget(std::string_view pod_uid);  // the pod was deleted
  size_t size() const { return last_.size(); }

 private:
  std::unordered_map<std::string, int64_t> last_;
};

struct FoldResult {
  FoldVerdict verdict = FoldVerdict::kApplied;
  std::string why;                  // for the log when ignored
  api::PodStatusT status;           // the pod's new status (kApplied)
  std::vector<api::EventT> events;  // one per report event (kApplied)
};

// Folds `report` into `current_pod` at `now` (transition times). Names
// events with `namer`. Records the report in `ledger` when applied.
// REQUIRES: current_pod.metadata and .spec set.
FoldResult FoldReport(const api::PodT& current_pod, const model::Report& report, SimTime now,
                      model::EventNamer& namer, ReportLedger& ledger);

}  // namespace podflow::status
