// Kubernetes field-selector transition semantics for one change. Private to
// src/watch; Watcher uses it.
#pragma once

#include <optional>

#include "log/log.h"
#include "watch/watch.h"

namespace podflow::watch_internal {

// Builds the event a watcher delivers for `change`, given the key's previous
// value `old` (nullopt: did not exist) and an optional filter; nullopt when
// the watcher should not see it. Does not set prev_kv.
std::optional<WatchEvent> ToWatchEvent(const Change& change, const std::optional<KeyValue>& old,
                                       const WatchFilter& filter);

}  // namespace podflow::watch_internal
