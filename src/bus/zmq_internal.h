// The bus's own view of ZeroMQ: private to src/bus (and the bus's tests,
// which talk to its sockets with raw ones). Nothing outside src/bus
// includes this header.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "base/logging.h"
#include "bus/bus.h"

namespace podflow::bus {

// 16 random hex digits.
std::string RandomHex();

struct Context::Impl {
  zmq::context_t zmq;
  mutable std::mutex mutex;
  std::shared_ptr<const Security> security;  // null: sockets are not secured
  std::atomic<bool> stopping{false};
  std::thread zap;  // the ZAP handler of a secured context
  std::atomic<uint64_t> next_client{0};
  // Random per context: in-process routing ids nobody off the process can
  // guess (and take first).
  const std::string client_prefix = RandomHex();

  // The ZAP handler ends before the ZeroMQ context is terminated.
  ~Impl();
  std::shared_ptr<const Security> Secured() const {
    std::lock_guard<std::mutex> lock(mutex);
    return security;
  }
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

// Whether `endpoint` stays inside the process (inproc://).
bool IsInproc(std::string_view endpoint);

// Binds a server socket to `endpoint`. Off-process, it serves CURVE with
// the context's server key when the context is secured. Invalid when a
// secured process has no server secret key; IOError when the endpoint
// cannot be bound.
Status BindServer(Context& context, zmq::socket_t& socket, const std::string& endpoint);

// Connects a client socket to `endpoint` as `identity` (the context's
// default when empty): on inproc://, with a routing id naming the identity
// (unique per socket, with a random part) that RpcServer reads back;
// off-process, with the identity's CURVE keys on a secured context.
// Invalid when a secured context has no keys for the identity.
Status ConnectClient(Context& context, zmq::socket_t& socket, const std::string& endpoint,
                     const std::string& identity);

// Who sent `part` (a part of a request a ROUTER received, `routing_id` its
// first part): the identity ZAP gave its CURVE key (every peer from off the
// process on a secured context has one), else the identity an in-process
// client named in its routing id, else "".
std::string PeerIdentity(const zmq::message_t& routing_id, zmq::message_t& part);

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
