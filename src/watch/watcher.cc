#include <algorithm>

#include "watch/filter.h"
#include "watch/watch.h"

namespace podflow {

namespace {

// Revisions fetched from the feed per read.
constexpr size_t kRevisionsPerRead = 256;


}  // namespace

Result<std::unique_ptr<Watcher>> Watcher::Open(EventLog* log, WatchOptions options) {
  if (log == nullptr) return Status::Invalid("watch: no log");
  if (options.key.empty() && !options.prefix && options.range_end.empty()) {
    return Status::Invalid("watch: key is empty");
  }
  if (options.start_revision.value() < 0) return Status::Invalid("watch: negative start revision");
  int64_t start = options.start_revision.value();
  if (start == 0) start = log->CurrentRevision().value() + 1;
  return std::unique_ptr<Watcher>(new Watcher(log, std::move(options), start));
}

Watcher::Watcher(EventLog* log, WatchOptions options, int64_t start)
    : log_(log),
      options_(std::move(options)),
      next_rev_(start),
      last_delivery_(std::chrono::steady_clock::now()) {
  if (options_.prefix) {
    end_ = PrefixEnd(options_.key);
  } else if (!options_.range_end.empty()) {
    end_ = options_.range_end;
  } else {
    end_ = options_.key + '\0';
  }
}

Watcher::~Watcher() = default;

void Watcher::Close() {
  closed_.store(true);
  log_->WakeWaiters();
}

bool Watcher::InRange(std::string_view key) const {
  return key >= options_.key && (end_.empty() || key < end_);
}

WatchBatch Watcher::Convert(const RevisionChanges& rc) {
  WatchBatch batch;
  batch.kind = WatchBatch::Kind::kEvents;
  batch.revision = rc.revision;
  batch.committed_at = rc.committed_at;
  const bool need_old = options_.prev_kv || static_cast<bool>(options_.filter);
  for (const Change& change : rc.changes) {
    if (!InRange(change.kv.key)) continue;
    std::optional<KeyValue> old;
    // A put at version 1 starts a generation: there is no previous value.
    const bool may_have_old = change.type == ChangeType::kDelete || change.kv.version > 1;
    if (need_old && may_have_old) {
      Result<std::optional<KeyValue>> prev =
          log_->Get(change.kv.key, Revision(rc.revision.value() - 1));
      if (!prev.ok()) {
        WatchBatch failed;
        failed.kind = prev.status().code() == Code::kCompacted ? WatchBatch::Kind::kCompacted
                                                                : WatchBatch::Kind::kError;
        failed.revision = log_->CompactRevision();
        failed.status = prev.status();
        return failed;
      }
      old = std::move(*prev);
    }
    std::optional<WatchEvent> event = watch_internal::ToWatchEvent(change, old, options_.filter);
    if (!event) continue;
    if (options_.prev_kv) event->prev_kv = std::move(old);
    batch.events.push_back(std::move(*event));
  }
  return batch;
}

WatchBatch Watcher::Next(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  auto outcome = [&](WatchBatch::Kind kind) {
    WatchBatch b;
    b.kind = kind;
    b.revision = Revision(next_rev_ - 1);
    return b;
  };
  bool read_some = false;  // a read happened in this call: the deadline now bounds the next
  for (;;) {
    if (closed_.load()) return outcome(WatchBatch::Kind::kClosed);
    if (compacted_) {
      WatchBatch b = outcome(WatchBatch::Kind::kCompacted);
      b.revision = log_->CompactRevision();
      return b;
    }
    // Deliver the next revision that has events for this watcher.
    while (pending_pos_ < pending_.size()) {
      WatchBatch batch = Convert(*pending_[pending_pos_]);
      if (batch.kind == WatchBatch::Kind::kCompacted) {
        compacted_ = true;
        return batch;
      }
      if (batch.kind == WatchBatch::Kind::kError) return batch;
      ++pending_pos_;
      next_rev_ = batch.revision.value() + 1;
      if (!batch.events.empty()) {
        last_delivery_ = Clock::now();
        return batch;
      }
      // A filter may skip many revisions in a row: that is idleness too.
      if (options_.progress_interval.count() > 0 &&
          Clock::now() >= last_delivery_ + options_.progress_interval) {
        last_delivery_ = Clock::now();
        return outcome(WatchBatch::Kind::kProgress);
      }
    }
    pending_.clear();
    pending_pos_ = 0;
    // A filter that skips everything must not keep a caller (e.g. a server
    // serving many watchers with timeout 0) here for a whole catch-up.
    if (read_some && Clock::now() >= deadline) return outcome(WatchBatch::Kind::kTimedOut);
    // Read more; if there is nothing new, we are caught up.
    Result<std::vector<RevisionChangesPtr>> more =
        log_->ReadChanges(Revision(next_rev_), kRevisionsPerRead);
    if (!more.ok()) {
      if (more.status().code() == Code::kCompacted) {
        compacted_ = true;
        continue;
      }
      WatchBatch b = outcome(WatchBatch::Kind::kError);
      b.status = more.status();
      return b;
    }
    if (!more->empty()) {
      pending_ = std::move(*more);
      read_some = true;
      continue;
    }
    const Clock::time_point now = Clock::now();
    Clock::time_point wake = deadline;
    if (options_.progress_interval.count() > 0) {
      const Clock::time_point progress_due = last_delivery_ + options_.progress_interval;
      if (now >= progress_due) {
        last_delivery_ = now;
        return outcome(WatchBatch::Kind::kProgress);
      }
      wake = std::min(wake, progress_due);
    }
    if (now >= deadline) return outcome(WatchBatch::Kind::kTimedOut);
    log_->WaitForRevision(Revision(next_rev_), wake);
  }
}

}  // namespace podflow
