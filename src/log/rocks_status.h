// The one place RocksDB statuses become podflow Statuses. Private to src/log.
#pragma once

#include <string_view>

#include <rocksdb/status.h>

#include "base/status.h"

namespace podflow::log_internal {

// OK -> OK; Corruption -> Corruption; anything else -> IOError. `what` says
// which operation failed ("write batch", "open /data/log", ...).
Status FromRocks(const rocksdb::Status& s, std::string_view what);

}  // namespace podflow::log_internal
