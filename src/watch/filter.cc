#include "watch/filter.h"

namespace podflow::watch_internal {

namespace {

// A DELETE event carrying the old value, at the event's revision.
WatchEvent DeleteCarrying(const Change& change, const KeyValue& old) {
  WatchEvent e;
  e.type = ChangeType::kDelete;
  e.kv = old;
  e.kv.mod_revision = change.kv.mod_revision;
  return e;
}

}  // namespace

std::optional<WatchEvent> ToWatchEvent(const Change& change, const std::optional<KeyValue>& old,
                                       const WatchFilter& filter) {
  const bool is_put = change.type == ChangeType::kPut;
  if (!filter) {
    if (!is_put && old) return DeleteCarrying(change, *old);
    WatchEvent e;
    e.type = change.type;
    e.kv = change.kv;
    e.created = is_put && change.kv.version == 1;
    return e;
  }
  const bool new_matches = is_put && filter(change.kv);
  const bool old_matches = old.has_value() && filter(*old);
  if (new_matches) {
    WatchEvent e;
    e.type = ChangeType::kPut;
    e.kv = change.kv;
    e.created = !old_matches;
    return e;
  }
  if (old_matches) {
    WatchEvent e = DeleteCarrying(change, *old);
    e.left_filter = is_put;
    return e;
  }
  return std::nullopt;
}

}  // namespace podflow::watch_internal
