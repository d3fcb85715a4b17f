#include "stages/runtime/report_outbox.h"

#include <algorithm>

#include "base/logging.h"

namespace podflow::runtime {

std::string StatusFingerprint(const api::PodStatusT& status) {
  flatbuffers::FlatBufferBuilder fbb(512);
  auto pack = [&](const std::vector<std::unique_ptr<api::ContainerStatusT>>& list) {
    std::vector<flatbuffers::Offset<api::ContainerStatus>> out;
    out.reserve(list.size());
    for (const auto& c : list) out.push_back(api::ContainerStatus::Pack(fbb, c.get()));
    return fbb.CreateVector(out);
  };
  auto containers = pack(status.container_statuses);
  auto inits = pack(status.init_container_statuses);
  auto ip = fbb.CreateString(status.pod_ip);
  api::PodStatusBuilder b(fbb);
  b.add_phase(status.phase);
  b.add_pod_ip(ip);
  b.add_container_statuses(containers);
  b.add_init_container_statuses(inits);
  fbb.Finish(b.Finish());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

ReportOutbox::ReportOutbox(Push push) : push_(std::move(push)) {}

size_t ReportOutbox::PushFrames(std::span<const model::Report* const> reports, Status* refused) {
  size_t taken = 0;
  size_t per_frame = kMaxPerFrame;
  while (taken < reports.size()) {
    const size_t n = std::min(per_frame, reports.size() - taken);
    std::string frame = model::EncodeReports(reports.subspan(taken, n));
    if (frame.size() > kFrameBytes && n > 1) {
      per_frame = n / 2;  // large statuses: fewer to a frame
      continue;
    }
    if (Status pushed = push_(frame); !pushed.ok()) {
      *refused = std::move(pushed);
      break;
    }
    taken += n;
    per_frame = kMaxPerFrame;
  }
  return taken;
}

void ReportOutbox::Send(std::vector<model::Report> reports, Clock::time_point now) {
  static auto log = Logger("stage.runtime");
  std::vector<model::Report> due = std::move(unsent_);
  unsent_.clear();
  for (model::Report& r : reports) due.push_back(std::move(r));
  model::CoalesceReports(due);
  if (due.empty()) return;
  std::vector<const model::Report*> frames;
  frames.reserve(due.size());
  for (const model::Report& r : due) frames.push_back(&r);
  Status refused;
  const size_t taken = PushFrames(frames, &refused);
  for (size_t i = 0; i < taken; ++i) {
    model::Report& sent = due[i];
    Awaiting a;
    a.fingerprint = StatusFingerprint(sent.status);
    sent.events.clear();  // sent once; a resend carries the status only
    a.report = std::move(sent);  // encoded again only if it is resent (rare)
    a.due = now + kFirstResend;
    a.seq = next_seq_++;
    // Quiet is measured from when there was something to wait for.
    if (!last_shown_ || awaiting_.empty()) last_shown_ = now;
    std::string key = a.report.pod_key;
    awaiting_[std::move(key)] = std::move(a);
  }
  if (taken == due.size()) return;
  log->warn("status stage not taking reports ({}); keeping {} for later", refused.ToString(), due.size() - taken);
  unsent_.assign(std::make_move_iterator(due.begin() + static_cast<std::ptrdiff_t>(taken)),
                 std::make_move_iterator(due.end()));
  if (unsent_.size() > kMaxUnsent) {
    log->error("dropping {} reports: the status stage has not taken any for too long", unsent_.size());
    unsent_.clear();
  }
}

void ReportOutbox::Observe(const std::string& pod_key, const api::PodStatus* stored, Clock::time_point now) {
  auto it = awaiting_.find(pod_key);
  if (it == awaiting_.end()) return;  // nothing sent that is not shown yet
  api::PodStatusT status;
  if (stored != nullptr) stored->UnPackTo(&status);
  if (it->second.fingerprint != StatusFingerprint(status)) return;
  shown_seq_ = std::max(shown_seq_, it->second.seq);
  last_shown_ = now;
  awaiting_.erase(it);
}

void ReportOutbox::Forget(const std::string& pod_key) { awaiting_.erase(pod_key); }

bool ReportOutbox::Settled(const std::string& pod_key) const {
  return !awaiting_.contains(pod_key) &&
         std::none_of(unsent_.begin(), unsent_.end(), [&](const model::Report& r) { return r.pod_key == pod_key; });
}

void ReportOutbox::ResendOverdue(Clock::time_point now) {
  static auto log = Logger("stage.runtime");
  // Deadlines are seconds apart: a look every kScanInterval is enough, and
  // keeps the loop from walking every pod on every step.
  if (now < next_scan_) return;
  next_scan_ = now + kScanInterval;
  // Reports sent before `lost_before` came after one shown at least
  // kOrderGrace ago: still not shown, they were lost.
  shown_at_scan_.emplace_back(now, shown_seq_);
  while (shown_at_scan_.size() > 1 && shown_at_scan_[1].first <= now - kOrderGrace) shown_at_scan_.pop_front();
  const uint64_t lost_before =
      shown_at_scan_.front().first <= now - kOrderGrace ? shown_at_scan_.front().second : 0;
  const bool quiet = last_shown_ && now - *last_shown_ >= kQuiet;
  std::vector<Awaiting*> lost;
  for (auto it = awaiting_.begin(); it != awaiting_.end();) {
    Awaiting& a = it->second;
    if (now < a.due || !(a.seq < lost_before || quiet)) {
      ++it;
      continue;
    }
    if (a.resends == kMaxResends) {
      log->warn("{}: the stored status still does not show the runtime's after {} resends; giving up",
                it->first, kMaxResends);
      it = awaiting_.erase(it);
      continue;
    }
    lost.push_back(&a);
    ++it;
  }
  if (lost.empty()) return;
  // In the order they were first sent (the status stage folds in order).
  std::ranges::sort(lost, {}, &Awaiting::seq);
  std::vector<const model::Report*> frames;
  frames.reserve(lost.size());
  for (const Awaiting* a : lost) frames.push_back(&a->report);
  // What the status stage did not take now goes at the next scan.
  Status refused;
  const size_t taken = PushFrames(frames, &refused);
  for (size_t i = 0; i < taken; ++i) {
    Awaiting& a = *lost[i];
    ++a.resends;
    a.seq = next_seq_++;
    a.due = now + kFirstResend * (1 << a.resends);
  }
}

}  // namespace podflow::runtime
