#include "client/store.h"

#include "base/logging.h"

namespace podflow::client {

Store::Store(bus::Context& context, std::string api_endpoint, std::string watch_endpoint, std::string prefix)
    : informer_(context, std::move(api_endpoint), std::move(watch_endpoint), std::move(prefix)) {}

void Store::Start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Store::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

std::optional<std::string> Store::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::vector<KeyValue> Store::List(const std::string& prefix) const {
  std::vector<KeyValue> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it) {
    KeyValue kv;
    kv.key = it->first;
    kv.value = it->second;
    out.push_back(std::move(kv));
  }
  return out;
}

void Store::Loop() {
  static auto log = Logger("client.store");
  const Informer::Handlers handlers{
      [this](const KeyValue& kv) {
        std::lock_guard<std::mutex> lock(mu_);
        values_[kv.key] = kv.value;
        ++version_;
      },
      [this](const std::string& key) {
        std::lock_guard<std::mutex> lock(mu_);
        if (values_.erase(key) > 0) ++version_;
      }};
  while (!stopping_) {
    Status polled = informer_.Poll(std::chrono::milliseconds(100), handlers);
    if (!polled.ok()) {
      log->warn("following {}: {}", informer_.prefix(), polled.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
  }
}

}  // namespace podflow::client
