// One watch stream's source of frames: a log Watcher read batch by batch.
// Private to the persistence stage.
#pragma once

#include <memory>

#include "bus/bus.h"
#include "log/log.h"
#include "watch/watch.h"

namespace podflow::persistence {

// The source of the stream a WatchCreate opened on `log`: one WatchResponse
// per batch; a refused watch (bad selector, compacted start) sends one
// error response and ends the stream.
std::unique_ptr<bus::StreamSource> OpenWatchSource(EventLog* log, const msg::Envelope& open);

}  // namespace podflow::persistence
