#include "log/change_ring.h"

#include <cassert>

namespace podflow::log_internal {

ChangeRing::ChangeRing(size_t max_revisions, size_t max_bytes)
    : max_revisions_(max_revisions == 0 ? 1 : max_revisions), max_bytes_(max_bytes) {}

size_t ChangeRing::SizeOf(const RevisionChanges& rc) {
  size_t n = sizeof(RevisionChanges) + 64 + rc.writer.size();
  for (const Change& c : rc.changes) n += sizeof(Change) + c.kv.key.size() + c.kv.value.size();
  return n;
}

void ChangeRing::Append(std::vector<RevisionChangesPtr> revisions, Revision head) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& rc : revisions) {
      assert(ring_.empty() || rc->revision.value() == ring_.back()->revision.value() + 1);
      bytes_ += SizeOf(*rc);
      ring_.push_back(std::move(rc));
    }
    head_ = head;
    TrimLocked();
  }
  cv_.notify_all();
}

void ChangeRing::SetHead(Revision head) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    head_ = head;
  }
  cv_.notify_all();
}

Revision ChangeRing::head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return head_;
}

void ChangeRing::TrimLocked() {
  // Keep at least the newest revision so a caught-up reader never has to go
  // to storage.
  while (ring_.size() > 1 && (ring_.size() > max_revisions_ || bytes_ > max_bytes_)) {
    bytes_ -= SizeOf(*ring_.front());
    ring_.pop_front();
  }
}

bool ChangeRing::Read(Revision from, size_t max, std::vector<RevisionChangesPtr>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (from > head_) return true;
  if (ring_.empty() || from < ring_.front()->revision) return false;
  size_t index = static_cast<size_t>(from.value() - ring_.front()->revision.value());
  for (size_t i = index; i < ring_.size() && out->size() < max; ++i) out->push_back(ring_[i]);
  return true;
}

Revision ChangeRing::WaitFor(Revision want, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t generation = wake_generation_;
  cv_.wait_until(lock, deadline, [&] {
    return head_ >= want || closed_ || wake_generation_ != generation;
  });
  return head_;
}

void ChangeRing::WakeAll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wake_generation_;
  }
  cv_.notify_all();
}

void ChangeRing::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace podflow::log_internal
