// ChangeRing: the bounded in-memory window of recently committed revisions
// that watchers read from, shared by all of them. Private to src/log.
//
// The committer appends each committed revision (in order, without gaps);
// the oldest revisions fall out when the ring exceeds its revision count or
// byte budget. Watchers whose next revision fell out read storage instead.
//
// Thread safety: all methods are safe to call concurrently. Append() never
// waits for readers: they copy shared pointers out under a short lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "log/log.h"

namespace podflow::log_internal {

class ChangeRing {
 public:
  ChangeRing(size_t max_revisions, size_t max_bytes);
  ChangeRing(const ChangeRing&) = delete;
  ChangeRing& operator=(const ChangeRing&) = delete;

  // Appends revisions (REQUIRES: each is the previous one + 1), publishes
  // `head` as the current revision and wakes waiters.
  void Append(std::vector<RevisionChangesPtr> revisions, Revision head);

  // Publishes `head` without changes (used at open).
  void SetHead(Revision head);
  Revision head() const;

  // Copies up to `max` revisions starting at `from` into `out`. Returns false
  // (and copies nothing) if `from` is older than the oldest revision held.
  // Returns true with nothing copied when from > head.
  bool Read(Revision from, size_t max, std::vector<RevisionChangesPtr>* out) const;

  // See EventLog::WaitForRevision.
  Revision WaitFor(Revision want, std::chrono::steady_clock::time_point deadline);
  void WakeAll();
  // Makes every current and future WaitFor return at once.
  void Close();

  static size_t SizeOf(const RevisionChanges& rc);

 private:
  void TrimLocked();  // REQUIRES: mu_ held

  const size_t max_revisions_;
  const size_t max_bytes_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RevisionChangesPtr> ring_;  // GUARDED_BY(mu_), consecutive revisions
  size_t bytes_ = 0;                     // GUARDED_BY(mu_)
  Revision head_;                        // GUARDED_BY(mu_)
  uint64_t wake_generation_ = 0;         // GUARDED_BY(mu_)
  bool closed_ = false;                  // GUARDED_BY(mu_)
};

}  // namespace podflow::log_internal
