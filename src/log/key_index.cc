#include "log/key_index.h"

namespace podflow::log_internal {

const log_format::LatestEntry* KeyIndex::Find(std::string_view key) const {
  auto it = live_.find(key);
  return it == live_.end() ? nullptr : &it->second;
}

void KeyIndex::Set(std::string_view key, const log_format::LatestEntry& entry) {
  auto it = live_.find(key);
  if (it == live_.end()) {
    it = live_.emplace(std::string(key), entry).first;
  } else {
    if (it->second.expires_at_ms != 0) {
      expiries_.erase({it->second.expires_at_ms, std::string(key)});
    }
    it->second = entry;
  }
  if (entry.expires_at_ms != 0) expiries_.emplace(entry.expires_at_ms, std::string(key));
}

void KeyIndex::Erase(std::string_view key) {
  auto it = live_.find(key);
  if (it == live_.end()) return;
  if (it->second.expires_at_ms != 0) expiries_.erase({it->second.expires_at_ms, it->first});
  live_.erase(it);
}

std::vector<std::pair<std::string, int64_t>> KeyIndex::Expired(int64_t now_ms, size_t max) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (auto it = expiries_.begin(); it != expiries_.end() && out.size() < max; ++it) {
    if (it->first > now_ms) break;
    const log_format::LatestEntry* e = Find(it->second);
    if (e != nullptr) out.emplace_back(it->second, e->mod_revision);
  }
  return out;
}

}  // namespace podflow::log_internal
