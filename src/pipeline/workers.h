// ShardedWorkers: a fixed set of threads, each draining its own FIFO. Items
// with the same shard key always go to the same thread, so their order is
// kept (a pod's reports), while different keys proceed in parallel (their
// writes share the log's group commits). A worker takes everything queued
// on its lane at once (up to kMaxBatch), so that a handler can write a
// batch in one transaction when the load is high.
//
// Thread safety: Submit() from any thread; Stop() once, from the owner.
// Not copyable. The handler runs on the worker threads and gets the worker's
// index, so per-worker resources (a log client, an event namer) need no lock.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace podflow::pipeline {

template <typename Item>
class ShardedWorkers {
 public:
  // Gets the items in the order they were submitted; never an empty batch.
  using Handler = std::function<void(size_t worker, std::vector<Item>& batch)>;
  static constexpr size_t kMaxBatch = 64;
  // A lane holding this many items makes Submit() wait: back-pressure on the
  // producer instead of unbounded memory.
  static constexpr size_t kMaxQueued = 4096;

  ShardedWorkers(size_t workers, Handler handler) : handler_(std::move(handler)) {
    for (size_t i = 0; i < workers; ++i) lanes_.push_back(std::make_unique<Lane>());
    for (size_t i = 0; i < workers; ++i) lanes_[i]->thread = std::thread([this, i] { Run(i); });
  }
  ShardedWorkers(const ShardedWorkers&) = delete;
  ShardedWorkers& operator=(const ShardedWorkers&) = delete;
  ~ShardedWorkers() { Stop(); }

  size_t size() const { return lanes_.size(); }

  void Submit(std::string_view shard_key, Item item) {
    Lane& lane = *lanes_[std::hash<std::string_view>{}(shard_key) % lanes_.size()];
    std::unique_lock<std::mutex> lock(lane.mu);
    lane.space.wait(lock, [&] { return lane.stopping || lane.queue.size() < kMaxQueued; });
    if (lane.stopping) return;
    lane.queue.push_back(std::move(item));
    lane.ready.notify_one();
  }

  // Finishes the batch each worker is on, drops the rest, joins the threads.
  void Stop() {
    for (auto& lane : lanes_) {
      std::lock_guard<std::mutex> lock(lane->mu);
      lane->stopping = true;
      lane->ready.notify_all();
      lane->space.notify_all();
    }
    for (auto& lane : lanes_) {
      if (lane->thread.joinable()) lane->thread.join();
    }
  }

 private:
  struct Lane {
    std::mutex mu;
    std::condition_variable ready;  // an item was queued, or stopping
    std::condition_variable space;  // an item was taken, or stopping
    std::deque<Item> queue;         // GUARDED_BY(mu)
    bool stopping = false;          // GUARDED_BY(mu)
    std::thread thread;
  };

  void Run(size_t index) {
    Lane& lane = *lanes_[index];
    std::vector<Item> batch;
    for (;;) {
      batch.clear();
      {
        std::unique_lock<std::mutex> lock(lane.mu);
        lane.ready.wait(lock, [&] { return lane.stopping || !lane.queue.empty(); });
        if (lane.stopping) return;
        while (!lane.queue.empty() && batch.size() < kMaxBatch) {
          batch.push_back(std::move(lane.queue.front()));
          lane.queue.pop_front();
        }
        lane.space.notify_all();
      }
      handler_(index, batch);
    }
  }

  Handler handler_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace podflow::pipeline
