// Log types <-> channel messages. Private to the persistence stage.
#pragma once

#include <vector>

#include "log/log.h"
#include "messages_generated.h"
#include "watch/watch.h"

namespace podflow::persistence {

flatbuffers::Offset<msg::KeyValue> ToMsg(flatbuffers::FlatBufferBuilder& fbb, const KeyValue& kv);
KeyValue FromMsg(const msg::KeyValue& kv);

// An error as the API's Status: "Failure", an HTTP-like code and a reason.
flatbuffers::Offset<msg::ApiStatus> ErrorStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                const Status& status);
// The Status an error reply carried.
Status FromMsg(const msg::ApiStatus* status);

flatbuffers::Offset<msg::WatchResponse> ToMsg(flatbuffers::FlatBufferBuilder& fbb, int64_t watch_id,
                                              const WatchBatch& batch);
WatchBatch FromMsg(const msg::WatchResponse& response);

}  // namespace podflow::persistence
