// Store: a thread-safe copy of everything under a prefix, kept current by an
// Informer on a thread of its own — what kube-apiserver's admission plugins
// and the controllers read instead of asking the log on every request. A
// read may lag the log by the watch's delay; callers that must not act on a
// miss ask the log itself (ApiClient::Get) before they do.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"

namespace podflow::client {

class Store {
 public:
  Store(bus::Context& context, std::string api_endpoint, std::string watch_endpoint, std::string prefix);
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store() { Stop(); }

  // Starts following the log; what is there arrives with the first list.
  void Start();
  // Asks the thread to end after the read in flight, without waiting:
  // several stores stop in the time of one (then Stop each).
  void RequestStop() { stopping_ = true; }
  void Stop();

  // The value stored at `key` as far as this copy knows, or nullopt.
  std::optional<std::string> Get(const std::string& key) const;
  // The values under `prefix` (within the store's), in key order.
  std::vector<KeyValue> List(const std::string& prefix) const;
  // Grows with every change the copy takes: equal versions, equal content.
  uint64_t version() const { return version_.load(); }

 private:
  void Loop();

  Informer informer_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> values_;  // GUARDED_BY(mu_)
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace podflow::client
