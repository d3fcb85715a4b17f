// The bus's own view of ZeroMQ: private to src/bus (and the bus's tests,
// which talk to its sockets with raw ones). Nothing outside src/bus
// includes this header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "base/logging.h"
#include "bus/bus.h"

namespace podflow::bus {

struct Context::Impl {
  zmq::context_t zmq;
};

struct Frame::Storage {
  zmq::message_t message;
};

inline zmq::context_t& NativeContext(Context& context) { return context.impl().zmq; }

// The largest message a socket that listens to peers (RpcServer,
// StreamServer, Puller) accepts; ZeroMQ drops the peer that sends a larger
// one. Above the largest request anything sends (a 3 MiB manifest in a
// SubmitRequest, a transaction under the log's limit).
constexpr int64_t kMaxIncomingBytes = 16 << 20;

// Verifies `message` as an Envelope. Invalid names the size and what failed.
Result<Frame> VerifyFrame(zmq::message_t message);

// FinishFrame straight into a message (no copy of the bytes in between).
zmq::message_t FinishMessage(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                             flatbuffers::Offset<void> body, uint64_t id = 0, uint32_t credits = 0);

// Reads every part of the message waiting on `socket` (nothing waits:
// empty). Never throws.
std::vector<zmq::message_t> ReceiveParts(zmq::socket_t& socket);

// Waits up to `timeout` for `socket` to be readable. Never throws; a
// failed poll reads as "not readable".
bool WaitReadable(zmq::socket_t& socket, std::chrono::milliseconds timeout);

// "what failed: the ZeroMQ error" as a Status of `code`.
Status FromZmq(Code code, const std::string& what, const zmq::error_t& e);

// The bus's logger.
std::shared_ptr<spdlog::logger> BusLog();

// A process-unique inproc address for the bus's internal sockets.
std::string UniqueInproc(const std::string& what);

}  // namespace podflow::bus
