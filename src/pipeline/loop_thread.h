// LoopThread: the skeleton of a stage whose work is one loop on its own
// thread (scheduling, runtime, proxy): Start() runs the loop, which returns
// once `stopping` is true; Stop() sets it and joins. Not copyable.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace podflow::pipeline {

class LoopThread {
 public:
  using Loop = std::function<void(const std::atomic<bool>& stopping)>;

  LoopThread() = default;
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;
  ~LoopThread() { Stop(); }

  // REQUIRES: not started yet.
  void Start(Loop loop) {
    thread_ = std::thread([this, loop = std::move(loop)] { loop(stopping_); });
  }
  void Stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace podflow::pipeline
