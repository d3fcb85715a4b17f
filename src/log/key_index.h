// KeyIndex: the in-memory index of live keys -> LatestEntry (create/mod
// revision, version, sub, TTL expiry), loaded at open from the 'l' entries,
// so that guards are checked without reading storage. Also the queue of
// pending TTL expiries. Private to src/log.
//
// Thread safety: none; the owner (RocksLog) guards it with its index mutex.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "log/log_format.h"

namespace podflow::log_internal {

class KeyIndex {
 public:
  // nullptr if `key` is not live.
  const log_format::LatestEntry* Find(std::string_view key) const;

  // Records that `key` is live with `entry` (replacing any TTL it had).
  void Set(std::string_view key, const log_format::LatestEntry& entry);
  // Records that `key` was deleted.
  void Erase(std::string_view key);

  // Up to `max` keys whose TTL expired at or before now_ms, soonest first,
  // with the mod_revision of the put that set the TTL.
  std::vector<std::pair<std::string, int64_t>> Expired(int64_t now_ms, size_t max) const;

  size_t size() const { return live_.size(); }
  size_t pending_expiries() const { return expiries_.size(); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, log_format::LatestEntry, StringHash, std::equal_to<>> live_;
  std::set<std::pair<int64_t, std::string>> expiries_;  // (expires_at_ms, key)
};

}  // namespace podflow::log_internal
