#include "stages/controllers/job.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace podflow::controllers {
namespace {

constexpr SimDuration kFailureBackoffBase = std::chrono::seconds(10);
constexpr SimDuration kFailureBackoffMax = std::chrono::minutes(10);

std::optional<int32_t> ParseIndex(std::string_view text) {
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

bool IsTracked(const PodRecord& pod) {
  return std::find(pod.finalizers.begin(), pod.finalizers.end(), kJobTrackingFinalizer) != pod.finalizers.end();
}

bool CountsAsFailed(const PodRecord& pod, const JobRecord& job) {
  if (pod.phase == api::PodPhase::Failed) return true;
  if (!job.replace_terminating) return false;
  return pod.deleting && pod.phase != api::PodPhase::Succeeded;
}

JobAccounting Account(const JobRecord& job, const std::vector<const PodRecord*>& pods) {
  JobAccounting out;
  std::map<std::string, const PodRecord*> by_uid;
  for (const PodRecord* pod : pods) by_uid[pod->uid] = pod;
  const auto settled = [&](const std::string& uid) {
    auto it = by_uid.find(uid);
    return it == by_uid.end() || !IsTracked(*it->second);
  };
  for (const std::string& uid : job.uncounted_succeeded) {
    if (settled(uid)) out.counted_succeeded.push_back(uid);
  }
  for (const std::string& uid : job.uncounted_failed) {
    if (settled(uid)) out.counted_failed.push_back(uid);
  }
  // Once the Job is decided every pod it tracks is let go, those that did
  // not succeed as failures; a Job being deleted lets go of its running
  // pods without counting them.
  for (const PodRecord* pod : pods) {
    if (!IsTracked(*pod)) continue;
    if (job.uncounted_succeeded.contains(pod->uid) || job.uncounted_failed.contains(pod->uid)) {
      out.release.push_back(pod);
    } else if (pod->phase == api::PodPhase::Succeeded) {
      out.newly_succeeded.push_back(pod->uid);
      out.release.push_back(pod);
    } else if (job.target.has_value() || CountsAsFailed(*pod, job)) {
      out.newly_failed.push_back(pod->uid);
      out.release.push_back(pod);
    } else if (job.deleting) {
      out.release.push_back(pod);
    }
  }
  return out;
}

bool PastBackoffLimit(const JobRecord& job, int32_t failed, const std::vector<const PodRecord*>& active) {
  if (failed > job.backoff_limit) return true;
  if (!job.restart_on_failure) return false;
  int64_t restarts = 0;
  for (const PodRecord* pod : active) restarts += pod->restart_total;
  return job.backoff_limit == 0 ? restarts > 0 : restarts >= job.backoff_limit;
}

std::optional<SimTime> DeadlineAt(const JobRecord& job) {
  if (!job.active_deadline_seconds || !job.start_time || job.suspended) return std::nullopt;
  return *job.start_time + std::chrono::seconds(*job.active_deadline_seconds);
}

bool CompletionsReached(const JobRecord& job, int32_t succeeded, size_t completed_indexes, size_t active) {
  if (job.indexed) return job.completions.has_value() && completed_indexes >= static_cast<size_t>(*job.completions);
  if (!job.completions) return succeeded > 0 && active == 0;
  return succeeded >= *job.completions;
}

int32_t WantActive(const JobRecord& job, int32_t succeeded, int32_t active) {
  if (!job.completions) return succeeded > 0 ? active : job.parallelism;
  return std::clamp(*job.completions - succeeded, 0, job.parallelism);
}

std::vector<int32_t> IndexesToCreate(const JobRecord& job, const std::set<int32_t>& completed,
                                     const std::set<int32_t>& running) {
  std::vector<int32_t> out;
  const int32_t room = job.parallelism - static_cast<int32_t>(running.size());
  for (int32_t i = 0; i < job.completions.value_or(0) && static_cast<int32_t>(out.size()) < room; ++i) {
    if (!completed.contains(i) && !running.contains(i)) out.push_back(i);
  }
  return out;
}

SimDuration FailureBackoff(int failures) {
  if (failures <= 0) return SimDuration(0);
  SimDuration delay = kFailureBackoffBase;
  for (int i = 1; i < failures && delay < kFailureBackoffMax; ++i) delay *= 2;
  return std::min(delay, kFailureBackoffMax);
}

std::string FormatIndexes(const std::set<int32_t>& indexes) {
  std::string out;
  const auto add = [&](int32_t first, int32_t last) {
    if (!out.empty()) out += ',';
    if (first == last) {
      out += std::to_string(first);
    } else if (first + 1 == last) {
      out += std::to_string(first) + "," + std::to_string(last);
    } else {
      out += std::to_string(first) + "-" + std::to_string(last);
    }
  };
  std::optional<int32_t> first, last;
  for (int32_t i : indexes) {
    if (last && i == *last + 1) {
      last = i;
      continue;
    }
    if (first) add(*first, *last);
    first = last = i;
  }
  if (first) add(*first, *last);
  return out;
}

Result<std::set<int32_t>> ParseIndexes(std::string_view text, int32_t completions) {
  std::set<int32_t> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view part = text.substr(at, comma - at);
    const size_t dash = part.find('-');
    const std::optional<int32_t> first = ParseIndex(part.substr(0, dash));
    const std::optional<int32_t> last = dash == std::string_view::npos ? first : ParseIndex(part.substr(dash + 1));
    if (!first || !last || *last < *first) {
      return Status::Invalid("completedIndexes: \"" + std::string(part) + "\" is not an index or a range of them");
    }
    for (int32_t i = *first; i <= *last && i < completions; ++i) out.insert(i);
    at = comma + 1;
  }
  return out;
}

}  // namespace podflow::controllers
