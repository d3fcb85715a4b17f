// PodRunner: a container's log as kubelet serves it to `kubectl logs` —
// which run's log the container's state allows, then the lines printed by
// `now`, filtered by --since, --tail and --limit-bytes, with --timestamps.
#include "stages/runtime/kubelet_text.h"
#include "stages/runtime/pod_runner.h"

#include <algorithm>

namespace podflow::runtime {
namespace {

struct Run {
  const std::vector<std::string>* lines;
  const std::vector<SimDuration>* at;
  SimTime started;
  SimTime until;  // lines printed after this are not (yet) in the log
  std::string container_id;
};

LogAnswer Render(const Run& run, const LogQuery& query, SimTime now) {
  LogAnswer answer;
  answer.container_id = run.container_id;
  struct Line {
    SimTime at;
    const std::string* text;
  };
  std::vector<Line> kept;
  // (bounded: a since beyond ~30 years is all of it)
  const std::optional<SimTime> since =
      query.since_seconds && *query.since_seconds < 1'000'000'000
          ? std::optional<SimTime>(now - SimDuration(*query.since_seconds * 1000))
          : std::nullopt;
  const int64_t skip = query.from_line.value_or(0);
  for (size_t i = 0; i < run.lines->size(); ++i) {
    const SimDuration offset = i < run.at->size() ? (*run.at)[i] : SimDuration(0);
    const SimTime at = run.started + offset;
    if (at > run.until) break;
    answer.lines = static_cast<int64_t>(i) + 1;
    if (static_cast<int64_t>(i) < skip) continue;
    if (since && at < *since) continue;
    kept.push_back({at, &(*run.lines)[i]});
  }
  size_t first = 0;
  if (query.tail_lines && *query.tail_lines >= 0 && static_cast<size_t>(*query.tail_lines) < kept.size()) {
    first = kept.size() - static_cast<size_t>(*query.tail_lines);
  }
  std::string out;
  for (size_t i = first; i < kept.size(); ++i) {
    if (query.timestamps) out += FormatRfc3339Nano(kept[i].at) + " ";
    out += *kept[i].text;
    out += '\n';
  }
  if (query.limit_bytes && *query.limit_bytes >= 0 && static_cast<size_t>(*query.limit_bytes) < out.size()) {
    out.resize(static_cast<size_t>(*query.limit_bytes));
  }
  answer.text = std::move(out);
  return answer;
}

}  // namespace

Result<LogAnswer> PodRunner::ContainerLog(const LogQuery& query, SimTime now) const {
  const std::string& pod = assignment_.pod->metadata->name;
  const std::string who = "container " + kubelet_text::Quoted(query.container) + " in pod " + kubelet_text::Quoted(pod);
  const Box* box = nullptr;
  for (const Box& b : boxes_) {
    if (b.spec->name == query.container) box = &b;
  }
  if (box == nullptr) return Status::Invalid(who + " is not available");
  static const std::vector<std::string> kNoLines;
  static const std::vector<SimDuration> kNoTimes;
  // A process run's lines are read from its log file (their times since `started`).
  std::vector<std::string> file_lines;
  std::vector<SimDuration> file_at;
  const auto from_file = [&](int32_t run, SimTime started) {
    for (ContainerLogLine& l : node_->host()->ReadLog(PodLogDir() + "/" + box->spec->name, run)) {
      file_lines.push_back(std::move(l.text));
      file_at.push_back(std::max(l.at - started, SimDuration(0)));
    }
  };
  auto previous = [&]() -> Run {
    const std::string id = box->status->last_state && box->status->last_state->terminated
                               ? box->status->last_state->terminated->container_id
                               : "";
    if (box->previous == nullptr) return {&kNoLines, &kNoTimes, SimTime{}, SimTime{}, id};
    if (node_->host() != nullptr) {
      from_file(box->previous_run, box->previous->started);
      return {&file_lines, &file_at, box->previous->started, box->previous->ended + SimDuration(1000), id};
    }
    return {&box->previous->lines, &box->previous->at, box->previous->started, box->previous->ended, id};
  };
  auto current = [&]() -> Run {
    if (node_->host() != nullptr) {
      from_file(box->status->restart_count, box->started_at);
      return {&file_lines, &file_at, box->started_at, box->ended_at.value_or(now) + SimDuration(1000),
              box->status->container_id};
    }
    const auto& logs = box->plan.behavior.logs;
    return {logs ? &*logs : &kNoLines, &box->plan.log_at, box->started_at, box->ended_at.value_or(now),
            box->status->container_id};
  };
  const api::ContainerStatusT& s = *box->status;
  const bool last_terminated = s.last_state && s.last_state->terminated;
  const api::ContainerStateT* state = s.state.get();
  if (query.previous) {
    if (!last_terminated) return Status::Invalid("previous terminated " + who + " not found");
    return Render(previous(), query, now);
  }
  if (state && state->running) return Render(current(), query, now);
  if (state && state->terminated) {
    if (box->ended_at) return Render(current(), query, now);
    // Marked terminated without a run of its own (the pod was deleted while
    // it waited): the run before, if there was one.
    if (last_terminated) return Render(previous(), query, now);
    return Status::Invalid(who + " is terminated");
  }
  if (last_terminated) return Render(previous(), query, now);
  if (state && state->waiting) {
    const std::string& reason = state->waiting->reason;
    if (reason == kubelet_text::kErrImagePull) return Status::Invalid(who + " is waiting to start: image can't be pulled");
    if (reason == kubelet_text::kImagePullBackOff) {
      return Status::Invalid(who + " is waiting to start: trying and failing to pull image");
    }
    return Status::Invalid(who + " is waiting to start: " + reason);
  }
  return Status::Invalid(who + " is waiting to start - no logs yet");
}

}  // namespace podflow::runtime
