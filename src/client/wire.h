// Log types <-> channel messages: the wire form of the api and watch
// channels, shared by the client (src/client) and the server (the
// persistence stage). Not part of the client's public header.
#pragma once

#include <vector>

#include "log/log.h"
#include "messages_generated.h"
#include "watch/watch.h"

namespace podflow::client {

flatbuffers::Offset<msg::KeyValue> ToMsg(flatbuffers::FlatBufferBuilder& fbb, const KeyValue& kv);
KeyValue FromMsg(const msg::KeyValue& kv);

// An error as the API's Status: "Failure", an HTTP-like code and a reason,
// with the exact podflow::Code beside them.
flatbuffers::Offset<msg::ApiStatus> ErrorStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                const Status& status);
// The Status an error reply carried: the same code and message.
Status FromMsg(const msg::ApiStatus* status);

flatbuffers::Offset<msg::WatchResponse> ToMsg(flatbuffers::FlatBufferBuilder& fbb, int64_t watch_id,
                                              const WatchBatch& batch);
WatchBatch FromMsg(const msg::WatchResponse& response);

}  // namespace podflow::client
