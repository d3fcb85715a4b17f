// The bus: ZeroMQ channels carrying verified FlatBuffers frames (design §3).
//
// Every frame is one msg::Envelope, checked with the FlatBuffers Verifier
// before use: a malformed frame is logged and dropped, never trusted.
// Patterns, one per kind of conversation:
//  - request/reply: RpcServer (ROUTER front, a pool of REP workers behind an
//    inproc DEALER, joined by zmq::proxy_steerable) and RpcClient (DEALER,
//    replies matched to requests by Envelope.id);
//  - push/pull: Pusher / Puller (decisions, reports);
//  - streams with credits are built on RpcServer's ROUTER by the watch
//    service (src/stages/persistence).
// Endpoints are plain ZeroMQ addresses (inproc://, ipc://, tcp://) resolved
// from the pipeline file by the caller.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "base/result.h"
#include "messages_generated.h"

namespace podflow::bus {

// A received frame that passed the Verifier. Owns its bytes.
class Frame {
 public:
  Frame() = default;
  explicit Frame(zmq::message_t message) : message_(std::move(message)) {}

  const msg::Envelope& envelope() const { return *msg::GetEnvelope(message_.data()); }
  std::string_view bytes() const {
    return std::string_view(static_cast<const char*>(message_.data()), message_.size());
  }

 private:
  zmq::message_t message_;
};

// Verifies `message` as an Envelope. Invalid names the size and what failed.
Result<Frame> VerifyFrame(zmq::message_t message);

// Finishes `fbb` as an Envelope holding `body`; returns the frame bytes.
zmq::message_t FinishFrame(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                           flatbuffers::Offset<void> body, uint64_t id = 0);

// The reply body a handler built into the builder it was given.
struct ReplyBody {
  msg::Body type = msg::Body::NONE;
  flatbuffers::Offset<void> body;
};

// Request/reply server. Handlers run on `workers` threads at once, so they
// must be thread-safe; each gets its own builder for the reply.
// Not copyable. Stop() (or the destructor) joins every thread.
class RpcServer {
 public:
  using Handler = std::function<ReplyBody(const msg::Envelope& request,
                                          flatbuffers::FlatBufferBuilder& reply)>;

  RpcServer(zmq::context_t& context, std::string endpoint, int workers, Handler handler);
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;
  ~RpcServer();

  // Binds and starts the threads. IOError when the endpoint cannot be bound.
  Status Start();
  void Stop();

 private:
  void WorkerLoop();

  zmq::context_t& context_;
  const std::string endpoint_;
  const std::string backend_;  // inproc address of the worker side
  const std::string control_;  // inproc address of the proxy's control socket
  const int workers_;
  Handler handler_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<zmq::socket_t> frontend_;
  std::unique_ptr<zmq::socket_t> backend_socket_;
  std::thread proxy_thread_;
  std::vector<std::thread> worker_threads_;
};

// Request/reply client: one request at a time; use from one thread at a
// time. Not copyable.
class RpcClient {
 public:
  RpcClient(zmq::context_t& context, std::string endpoint);
  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;

  // Sends the request built in `fbb` and waits up to `timeout` for its reply.
  // Unavailable when no reply came in time (the socket is then reset, so a
  // late reply cannot be mistaken for the next one's).
  Result<Frame> Call(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                     flatbuffers::Offset<void> body, std::chrono::milliseconds timeout);

 private:
  void Connect();

  zmq::context_t& context_;
  const std::string endpoint_;
  std::unique_ptr<zmq::socket_t> socket_;
  uint64_t next_id_ = 1;
};

// PUSH side of a push/pull channel (connects). Not copyable.
class Pusher {
 public:
  Pusher(zmq::context_t& context, const std::string& endpoint);
  // Queues the frame; blocks up to `timeout` when the high-water mark is hit.
  Status Push(zmq::message_t frame, std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  zmq::socket_t socket_;
};

// PULL side (binds). Not copyable.
class Puller {
 public:
  Puller(zmq::context_t& context, std::string endpoint);
  Status Bind();
  // The next verified frame within `timeout`; Unavailable on timeout.
  // Malformed frames are logged and skipped.
  Result<Frame> Pull(std::chrono::milliseconds timeout);

 private:
  std::string endpoint_;
  zmq::socket_t socket_;
};

}  // namespace podflow::bus
