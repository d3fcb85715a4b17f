// A runtime report: what one node observed about one pod at one step (the
// pod status snapshot) and the kubelet events of that step. Several travel
// in one msg::ReportBatch frame, runtime -> status.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "pod_generated.h"

namespace podflow::model {

struct ReportEvent {
  std::string type;    // "Normal", "Warning"
  std::string reason;  // "Pulling", "Pulled", "Created", "Started", "Failed", "BackOff"
  std::string message;
  std::string time;        // RFC 3339
  std::string field_path;  // "spec.containers{nginx}"; empty for the pod

  friend bool operator==(const ReportEvent&, const ReportEvent&) = default;
};

struct Report {
  std::string node_name;
  std::string pod_key;  // "/registry/pods/default/nginx"
  std::string pod_uid;
  int64_t observed_mod_revision = 0;  // the pod revision the runtime acted on
  // Facts the runtime observed: phase, hostIP(s), podIP(s), startTime, the
  // PodReadyToStartContainers condition, init and app container statuses.
  // The status stage derives Initialized / ContainersReady / Ready.
  api::PodStatusT status;
  std::vector<ReportEvent> events;
};

// Merges the reports of one pod made by the same Advance() into one, in
// place, keeping the order of first appearance: the last status stands,
// the events are all kept in order. Kubelet's status manager does the same:
// it writes a pod's latest status, not every intermediate one.
void CoalesceReports(std::vector<Report>& reports);

// Reports as one Envelope frame (Body::ReportBatch), ready to send.
std::string EncodeReports(std::span<const Report* const> reports, uint64_t envelope_id = 0);
std::string EncodeReports(std::span<const Report> reports, uint64_t envelope_id = 0);

// Reads a frame back: the reports of a ReportBatch, or a single Report's.
// Corruption when the Verifier rejects it, Invalid when it holds another
// body.
Result<std::vector<Report>> DecodeReports(std::string_view frame);

}  // namespace podflow::model
