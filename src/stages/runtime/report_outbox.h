// ReportOutbox: the runtime's reports on their way to the status stage,
// kept until the stored pod shows them.
//
// Reports travel push/pull, and a status stage killed with reports in its
// socket buffers loses them; the pods they were about would stay Pending
// with nothing left to report. So, as kubelet's status manager does, the
// outbox is level-triggered: it remembers the last status it sent per pod,
// compares it with the pod's status as the informer delivers it, and sends
// the status again (without its events, which were sent once) while the
// stored pod does not show it.
//
// A status stage that is merely behind must not get every report twice, so
// a report is sent again only when it is overdue (3 s, then 6, 12, 24, 48 s
// after its last send) and it was lost, not queued: reports are folded in
// the order they were sent, so a report sent after it being shown for a
// second already means it was lost; with nothing shown at all for 10 s (a
// restarted status stage, and nothing new to report), it is assumed lost.
// After 5 resends it is given up with one log line (a report the status
// stage refuses, e.g. for a pod deleted meanwhile, must not go forever).
//
// Reports travel several pods to a frame (kMaxPerFrame, and no frame much
// over kFrameBytes unless one report is), in the order they were made.
//
// What "shows it" means: the fields the status stage copies from a report
// verbatim — phase, podIP, and the init and app container statuses — are
// equal. Thread safety: none; the runtime loop's thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/report.h"
#include "pod_generated.h"

namespace podflow::runtime {

class ReportOutbox {
 public:
  using Clock = std::chrono::steady_clock;
  // Hands one frame to the status stage; Unavailable when it cannot now.
  using Push = std::function<Status(std::string_view frame)>;

  static constexpr std::chrono::milliseconds kFirstResend{3000};
  static constexpr std::chrono::milliseconds kScanInterval{500};
  static constexpr std::chrono::milliseconds kOrderGrace{1000};
  static constexpr std::chrono::milliseconds kQuiet{10'000};
  static constexpr int kMaxResends = 5;
  // Reports kept while the status stage does not take them (merged per pod,
  // so this bounds pods, not steps).
  static constexpr size_t kMaxUnsent = 100'000;
  static constexpr size_t kMaxPerFrame = 64;
  static constexpr size_t kFrameBytes = 4 << 20;  // the bus takes frames up to 16 MiB

  explicit ReportOutbox(Push push);

  // Sends `reports` after those not taken last time, merged per pod. Stops
  // at the first one not taken and keeps the rest for the next call.
  void Send(std::vector<model::Report> reports, Clock::time_point now);

  // The pod's status as stored (nullptr: none yet), as the informer
  // delivers it: the status sent for it is acknowledged when this shows it.
  // Cheap for a pod with nothing awaiting.
  void Observe(const std::string& pod_key, const api::PodStatus* stored, Clock::time_point now);
  void Forget(const std::string& pod_key);  // the pod is gone from this runtime

  // Sends again the status of every pod whose stored status does not show
  // it by its deadline.
  void ResendOverdue(Clock::time_point now);

  // Nothing sent for the pod awaits being shown, and nothing is unsent:
  // its stored status is the last this runtime reported.
  bool Settled(const std::string& pod_key) const;

  size_t awaiting() const { return awaiting_.size(); }
  size_t unsent() const { return unsent_.size(); }

 private:
  struct Awaiting {
    std::string fingerprint;  // of the status sent
    model::Report report;     // the status-only report, to send again
    Clock::time_point due;
    uint64_t seq = 0;  // order of the last send
    int resends = 0;
  };

  // Pushes `reports` in order, in frames; how many were taken (a frame not
  // taken stops it, and `refused` says why).
  size_t PushFrames(std::span<const model::Report* const> reports, Status* refused);

  Push push_;
  std::vector<model::Report> unsent_;                 // not taken by the status stage yet
  std::unordered_map<std::string, Awaiting> awaiting_;  // pod key -> last status sent
  Clock::time_point next_scan_{};                      // ResendOverdue looks no sooner
  uint64_t next_seq_ = 1;
  uint64_t shown_seq_ = 0;               // the latest-sent report the stored pods showed
  std::optional<Clock::time_point> last_shown_;  // when a report was last shown (or the first send)
  std::deque<std::pair<Clock::time_point, uint64_t>> shown_at_scan_;  // shown_seq_ per scan, recent
};

// The fields of a pod status the status stage copies from a report, packed;
// equal for equal fields.
std::string StatusFingerprint(const api::PodStatusT& status);

}  // namespace podflow::runtime
