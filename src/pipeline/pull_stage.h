// PullStage: the skeleton of a stage that pulls items off one push/pull
// channel and handles them on sharded workers (binding: decisions, status:
// reports, and the stages to come). One thread pulls and decodes frames;
// items with the same shard key go to the same worker, in order, and each
// worker takes what is queued on its lane as one batch.
//
// The stage supplies its worker type (per-worker resources such as a log
// client: no lock needed), a decoder and a handler. Not copyable. Start()
// binds the channel before returning, so nothing is pushed into the void;
// Stop() is called once after a successful Start().
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "bus/bus.h"
#include "pipeline/stage.h"
#include "pipeline/workers.h"

namespace podflow::pipeline {

template <typename Item, typename Worker>
class PullStage {
 public:
  struct Decoded {
    std::string shard_key;
    Item item;
  };
  // A frame as its items (one frame may carry several), or why it is
  // dropped (logged).
  using Decode = std::function<Result<std::vector<Decoded>>(const bus::Frame& frame)>;
  // Handles a batch on `worker`'s thread.
  using Handle = std::function<void(Worker& worker, std::vector<Item>& batch)>;
  using MakeWorker = std::function<std::unique_ptr<Worker>(size_t index)>;

  struct Spec {
    std::string channel;  // the push/pull channel to bind ("decisions")
    std::string logger;   // "stage.binding"
    size_t workers = 8;
    MakeWorker make_worker;
    Decode decode;
    Handle handle;
    // The identities whose frames the channel takes from off the process
    // (the stage that pushes on it); others are dropped. Empty: any.
    std::set<std::string> senders = {};
  };

  PullStage(StageContext& context, Spec spec) : context_(context), spec_(std::move(spec)) {}
  PullStage(const PullStage&) = delete;
  PullStage& operator=(const PullStage&) = delete;
  ~PullStage() { Stop(); }

  Status Start() {
    puller_ = std::make_unique<bus::Puller>(context_.bus, context_.Endpoint(spec_.channel), spec_.senders);
    PODFLOW_RETURN_IF_ERROR(puller_->Bind());
    for (size_t i = 0; i < spec_.workers; ++i) workers_.push_back(spec_.make_worker(i));
    lanes_ = std::make_unique<ShardedWorkers<Item>>(
        spec_.workers, [this](size_t worker, std::vector<Item>& batch) { spec_.handle(*workers_[worker], batch); });
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }

  void Stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    if (lanes_) lanes_->Stop();
    lanes_.reset();
    workers_.clear();
    puller_.reset();
  }

  // True once Stop() began: handlers end their retries early.
  bool stopping() const { return stopping_.load(); }

 private:
  void Loop() {
    auto log = Logger(spec_.logger);
    while (!stopping_) {
      // Timeouts come back as errors; malformed frames were logged by the puller.
      Result<bus::Frame> frame = puller_->Pull(std::chrono::milliseconds(100));
      if (!frame.ok()) continue;
      Result<std::vector<Decoded>> decoded = spec_.decode(*frame);
      if (!decoded.ok()) {
        log->warn("dropped a frame on the {} channel: {}", spec_.channel, decoded.status().message());
        continue;
      }
      for (Decoded& d : *decoded) lanes_->Submit(d.shard_key, std::move(d.item));
    }
  }

  StageContext& context_;
  const Spec spec_;
  std::unique_ptr<bus::Puller> puller_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<ShardedWorkers<Item>> lanes_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace podflow::pipeline
