// Watches as subscriptions to the event log: from a revision, over a key, a
// prefix or a range, with optional previous values, a filter with Kubernetes
// field-selector transitions, and progress notifications (bookmarks).
//
// A Watcher reads the log's watch feed (EventLog::ReadChanges): recent
// revisions from the log's shared in-memory ring, older ones from storage.
// A watcher that falls behind therefore never blocks writers and never loses
// events: it catches up from storage, then rejoins the ring.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "base/types.h"
#include "log/log.h"

namespace podflow {

// Whether an object belongs to a watch's view (e.g. "spec.nodeName == n1").
// Called with live values only. Must be thread-compatible and cheap.
using WatchFilter = std::function<bool(const KeyValue& kv)>;

struct WatchOptions {
  std::string key;         // the key, the prefix ("" = every key) or the start
  std::string range_end;   // exclusive end; "" = just `key` (unless prefix)
  bool prefix = false;
  Revision start_revision;  // first revision to deliver (inclusive); 0 = current + 1
  bool prev_kv = false;     // attach each event's previous KeyValue
  // With a filter, an event is judged by the old and the new value:
  //   new matches, old did not -> PUT with created = true (an ADDED);
  //   old matched, new does not -> DELETE carrying the old value;
  //   both match -> PUT; neither -> skipped.
  WatchFilter filter;
  // Deliver a progress batch after this long without one (0: never).
  std::chrono::milliseconds progress_interval{0};
};

struct WatchEvent {
  ChangeType type = ChangeType::kPut;
  // kPut: the new KeyValue. kDelete: key and mod_revision = the revision of
  // the event; when the old value was read (filter or prev_kv) also the last
  // value, create_revision and version the watcher's view had.
  KeyValue kv;
  std::optional<KeyValue> prev_kv;  // when WatchOptions.prev_kv and the key existed
  // kPut: the object is new to this watcher's view: the key was created
  // (version 1) or its value entered the filter. Treat as ADDED.
  bool created = false;
  // kDelete made because the new value left the filter (the key still exists).
  bool left_filter = false;
};

// One outcome of Watcher::Next().
struct WatchBatch {
  enum class Kind {
    kEvents,     // `events` (non-empty) are every matching change of `revision`
    kProgress,   // nothing matching up to and including `revision`
    kTimedOut,   // nothing yet; delivered up to and including `revision`
    kCompacted,  // the next revision needed was compacted; `revision` is the
                 // compact revision. Final: re-list and watch again.
    kClosed,     // Close() was called. Final.
    kError,      // `status` (e.g. Corruption); a later Next() retries
  };
  Kind kind = Kind::kTimedOut;
  Revision revision;
  std::vector<WatchEvent> events;
  // kEvents: when the revision was committed, if it was served from memory
  // (see RevisionChanges::committed_at); for lag metrics.
  std::chrono::steady_clock::time_point committed_at;
  Status status;
};

// Thread safety: Next() from one thread at a time; Close() from any thread.
// Not copyable. The EventLog must outlive the Watcher.
class Watcher {
 public:
  // Invalid: empty key without prefix/range_end, negative start revision.
  // A start below the compact revision is not an error here: the first
  // Next() says kCompacted. A start at the compact revision is served (as in
  // etcd), except that an event there that needs the old value (prev_kv or a
  // filter) gives kCompacted, since that value is gone.
  static Result<std::unique_ptr<Watcher>> Open(EventLog* log, WatchOptions options);

  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;
  ~Watcher();

  // Waits up to `timeout` for the next outcome (see WatchBatch::Kind).
  WatchBatch Next(std::chrono::milliseconds timeout);

  // Makes the current and every later Next() return kClosed.
  void Close();

  // The next revision this watcher will look at.
  Revision next_revision() const { return Revision(next_rev_); }

 private:
  Watcher(EventLog* log, WatchOptions options, int64_t start);

  bool InRange(std::string_view key) const;
  // Turns one revision into events; kEvents with none means "skip".
  WatchBatch Convert(const RevisionChanges& rc);

  EventLog* const log_;
  const WatchOptions options_;
  std::string end_;  // exclusive end of the range; "" = unbounded
  int64_t next_rev_;
  std::vector<RevisionChangesPtr> pending_;  // read but not yet delivered
  size_t pending_pos_ = 0;
  bool compacted_ = false;
  std::chrono::steady_clock::time_point last_delivery_;
  std::atomic<bool> closed_{false};
};

}  // namespace podflow
