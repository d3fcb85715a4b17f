#include "pipeline/workers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace podflow::pipeline {
namespace {

TEST_CASE("sharded workers keep one key's items in order on one worker") {
  std::mutex mu;
  std::map<std::string, std::vector<int>> seen;   // key -> items in handling order
  std::map<std::string, std::set<size_t>> lanes;  // key -> workers that handled it
  std::atomic<int> handled{0};
  int empty_batches = 0;
  size_t largest = 0;
  {
    ShardedWorkers<std::pair<std::string, int>> workers(
        4, [&](size_t worker, std::vector<std::pair<std::string, int>>& batch) {
          // Catch's assertions are for the test's thread: note, check later.
          std::lock_guard<std::mutex> lock(mu);
          if (batch.empty()) ++empty_batches;
          largest = std::max(largest, batch.size());
          for (auto& item : batch) {
            seen[item.first].push_back(item.second);
            lanes[item.first].insert(worker);
            ++handled;
          }
        });
    for (int i = 0; i < 1000; ++i) {
      const std::string key = "pod-" + std::to_string(i % 17);
      workers.Submit(key, {key, i});
    }
    while (handled.load() < 1000) std::this_thread::yield();
    workers.Stop();
  }
  CHECK(empty_batches == 0);
  CHECK(largest <= ShardedWorkers<std::pair<std::string, int>>::kMaxBatch);
  REQUIRE(seen.size() == 17);
  std::set<size_t> used;
  for (const auto& [key, items] : seen) {
    CHECK(std::is_sorted(items.begin(), items.end()));
    CHECK(lanes[key].size() == 1);
    used.insert(*lanes[key].begin());
  }
  CHECK(used.size() > 1);  // distinct keys spread over the workers
}

TEST_CASE("stopping sharded workers finishes the batch in hand and drops the rest") {
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  ShardedWorkers<int> workers(1, [&](size_t, std::vector<int>&) {
    ++started;
    while (!release.load()) std::this_thread::yield();
  });
  workers.Submit("k", 0);
  while (started.load() == 0) std::this_thread::yield();
  for (int i = 1; i < 5; ++i) workers.Submit("k", i);  // queued behind the batch in hand
  std::thread stopper([&] { workers.Stop(); });
  // Let Stop() mark the lane stopped (it then waits in join) before the
  // item in hand finishes.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  release = true;
  stopper.join();
  CHECK(started.load() == 1);
  workers.Submit("k", 9);  // after Stop: ignored, does not block
  CHECK(started.load() == 1);
}

}  // namespace
}  // namespace podflow::pipeline
