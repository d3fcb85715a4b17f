// The bus: ZeroMQ channels carrying verified FlatBuffers frames. The only
// module that touches ZeroMQ: nothing here names a ZeroMQ type, and every
// ZeroMQ error becomes a Status inside the bus.
//
// Every frame is one msg::Envelope, checked with the FlatBuffers Verifier
// before use: a malformed frame is logged and dropped, never trusted.
// Patterns, one per kind of conversation:
//  - request/reply: RpcServer (ROUTER front, a pool of REP workers behind an
//    inproc DEALER) and RpcClient (DEALER, replies matched by Envelope.id);
//  - push/pull: Pusher / Puller (decisions, reports);
//  - streams with credits: StreamServer / StreamClient (watch events). A
//    client opens a stream with a frame of its own kind, the server answers
//    with frames while the client has credits, and the client grants more
//    as it consumes them, so a slow client never makes the server buffer.
// Endpoints are ZeroMQ addresses (inproc://, ipc://, tcp://) resolved from
// the pipeline file by the caller; inproc endpoints need one shared Context.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/result.h"
#include "messages_generated.h"

namespace podflow::bus {

// A CURVE key pair, each key Z85-encoded (40 characters). A peer's key has
// no secret half.
struct CurveKeys {
  std::string public_key;
  std::string secret_key;
};

// A new key pair from ZeroMQ's own generator.
Result<CurveKeys> GenerateCurveKeys();
// Invalid (naming `what`) unless `z85` is a Z85-encoded 32-byte key.
Status CheckCurveKey(std::string_view z85, const std::string& what);

// What a process proves and accepts on every tcp:// and ipc:// socket
// (inproc:// never leaves the process and needs neither). Sockets that
// bind serve CURVE with `server` and admit a peer only when its public key
// is in `peers` (ZeroMQ's ZAP handshake); the peer is then known by the
// identity its key maps to. Sockets that connect authenticate as one of
// `identities` (the process's own, with secret keys), `default_identity`
// when they name none.
struct Security {
  CurveKeys server;  // the secret half only where the process binds
  std::map<std::string, CurveKeys> identities;
  std::string default_identity;
  std::map<std::string, std::string> peers;  // public key (Z85) -> identity
};

// The ZeroMQ context every socket of a process is made from. Outlives the
// sockets made from it. Not copyable. Thread-safe.
class Context {
 public:
  Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  // From now on every tcp:// and ipc:// socket made from this context is
  // authenticated and encrypted with `security`'s keys (call it once,
  // before the first socket). Invalid when a key is malformed or the
  // default identity has no keys; IOError when the ZAP handler cannot start.
  Status Secure(Security security);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// A received frame that passed the Verifier. Owns its bytes. Move-only.
class Frame {
 public:
  struct Storage;
  Frame();
  explicit Frame(std::unique_ptr<Storage> storage);
  Frame(Frame&&) noexcept;
  Frame& operator=(Frame&&) noexcept;
  ~Frame();

  const msg::Envelope& envelope() const { return *msg::GetEnvelope(data_); }
  std::string_view bytes() const { return std::string_view(reinterpret_cast<const char*>(data_), size_); }

 private:
  std::unique_ptr<Storage> storage_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Finishes `fbb` as an Envelope holding `body`; returns the frame's bytes.
std::string FinishFrame(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                        flatbuffers::Offset<void> body, uint64_t id = 0);

// The body a handler built into the builder it was given (NONE: no body).
struct ReplyBody {
  msg::Body type = msg::Body::NONE;
  flatbuffers::Offset<void> body;
};

// Request/reply server. Handlers run on `workers` threads at once, so they
// must be thread-safe; each gets its own builder for the reply, and the
// identity of the peer that sent the request: the one its CURVE key
// authenticated (tcp://, ipc:// on a secured context), the one an inproc
// client of this process named, or "" (anonymous: an unsecured context).
// Requests of an unexpected shape are answered with an empty frame and
// never reach the handler. Not copyable. Stop() (or the destructor) joins
// every thread.
class RpcServer {
 public:
  using Handler = std::function<ReplyBody(const msg::Envelope& request, std::string_view peer,
                                          flatbuffers::FlatBufferBuilder& reply)>;

  RpcServer(Context& context, std::string endpoint, int workers, Handler handler);
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;
  ~RpcServer();

  // Binds and starts the threads. IOError when the endpoint cannot be bound.
  Status Start();
  void Stop();

 private:
  struct Sockets;
  void ProxyLoop();
  void ForwardRequests();
  void ForwardReplies();
  void WorkerLoop();

  Context& context_;
  const std::string endpoint_;
  const std::string backend_;  // inproc address of the worker side
  const int workers_;
  Handler handler_;
  std::atomic<bool> stopping_{false};   // the workers finish their request and end
  std::atomic<bool> forwarded_{false};  // the workers ended: the forwarding loop ends
  std::unique_ptr<Sockets> sockets_;
  std::thread proxy_thread_;
  std::vector<std::thread> worker_threads_;
};

// Request/reply client: one request at a time; use from one thread at a
// time. Speaks as `identity` (one of the context's; "" its default). Not
// copyable.
class RpcClient {
 public:
  RpcClient(Context& context, std::string endpoint, std::string identity = {});
  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;
  ~RpcClient();

  // Sends the request built in `fbb` and waits up to `timeout` for its reply.
  // Unavailable when no reply came in time (the socket is then reset, so a
  // late reply cannot be mistaken for the next one's).
  Result<Frame> Call(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                     flatbuffers::Offset<void> body, std::chrono::milliseconds timeout);

  const std::string& endpoint() const { return endpoint_; }

 private:
  struct Socket;
  // A fresh socket (dropping the old one and whatever may arrive on it).
  Status Connect();

  Context& context_;
  const std::string endpoint_;
  const std::string identity_;
  std::unique_ptr<Socket> socket_;
  uint64_t next_id_ = 1;
};

// PUSH side of a push/pull channel (connects). One thread at a time. Not copyable.
class Pusher {
 public:
  // Speaks as `identity` (one of the context's; "" its default).
  Pusher(Context& context, const std::string& endpoint, const std::string& identity = {});
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;
  ~Pusher();

  // Queues a finished frame (FinishFrame); blocks up to `timeout` when the
  // high-water mark is hit, then answers Unavailable.
  Status Push(std::string_view frame, std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  struct Socket;
  std::unique_ptr<Socket> socket_;
};

// PULL side (binds). One thread at a time. Not copyable. When `senders`
// is not empty, a frame from off the process whose authenticated identity
// is not one of them is dropped with a log line.
class Puller {
 public:
  Puller(Context& context, std::string endpoint, std::set<std::string> senders = {});
  Puller(const Puller&) = delete;
  Puller& operator=(const Puller&) = delete;
  ~Puller();

  Status Bind();
  // The next verified frame within `timeout`; Unavailable on timeout.
  // Malformed frames are logged and skipped.
  Result<Frame> Pull(std::chrono::milliseconds timeout);

 private:
  struct Socket;
  Context& context_;
  std::string endpoint_;
  const std::set<std::string> senders_;
  std::unique_ptr<Socket> socket_;
};

// ---- streams with credits ----
//
// The frames of a stream carry its id in Envelope.id. The client's first
// frame opens the stream (a body of the owner's kind) with its initial
// credits in Envelope.credits; StreamCredit grants more and StreamCancel
// ends it. Every frame the server sends takes one credit.

// What a stream sends: the owner's source of frames for one open stream.
// Called on the server's thread only.
class StreamSource {
 public:
  struct Next {
    ReplyBody body;     // NONE: nothing to send now
    bool last = false;  // the stream ends with this frame
  };
  virtual ~StreamSource() = default;
  // Builds the next frame into `fbb` when there is one.
  virtual Next Produce(flatbuffers::FlatBufferBuilder& fbb) = 0;
  // True while the source has more to send at once (the server then serves
  // again without waiting for a wake-up).
  virtual bool Behind() const = 0;
};

// What one StreamServer lets its clients hold.
struct StreamLimits {
  size_t max_streams_per_peer = 256;
  std::chrono::milliseconds idle_expiry{60'000};
};

// Serves streams on one endpoint (ROUTER) from one thread. A stream whose
// client is gone or cancelled is dropped; a full connection keeps the
// stream's frame until it can be sent. Streams are bounded: one connection
// (one client socket) holds at most `max_streams_per_peer` (a further open
// is dropped with a log line), and a stream left with no credits and no
// word from its client for `idle_expiry` is dropped (its client went away
// or stopped reading; a live one re-opens). Not copyable.
class StreamServer {
 public:
  // Makes the source of a stream a client opened with `open`. Never null.
  using Opener = std::function<std::unique_ptr<StreamSource>(const msg::Envelope& open)>;
  StreamServer(Context& context, std::string endpoint, Opener opener, StreamLimits limits = {});
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;
  ~StreamServer();

  // Binds and starts the thread. IOError when the endpoint cannot be bound.
  Status Start();
  // Makes the thread serve every stream now (the data behind them moved).
  // Thread-safe and cheap; the thread also serves every `tick` (100 ms).
  void Wake();
  void Stop();

  size_t open_streams() const { return open_streams_.load(); }

 private:
  struct Sockets;
  struct Stream;
  using Streams = std::map<std::pair<std::string, uint64_t>, Stream>;
  void Loop();
  void ReceiveAll();
  void ServeStreams();
  void ExpireIdle();
  Streams::iterator Erase(Streams::iterator it);

  Context& context_;
  const std::string endpoint_;
  Opener opener_;
  const StreamLimits limits_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_streams_{0};
  std::unique_ptr<Sockets> sockets_;
  Streams streams_;                             // owned by thread_
  std::map<std::string, size_t> peer_streams_;  // thread_ only: open streams per client identity
  bool behind_ = false;  // thread_ only: a stream with credits has more at once
  std::thread thread_;
};

// One stream as its client sees it. One thread at a time. Not copyable;
// the destructor cancels the stream.
class StreamClient {
 public:
  // Opens a stream with `open` (built by `build` into the builder, given the
  // stream's id) and `credits` (at least 2) frames in flight.
  using OpenBuilder = std::function<ReplyBody(flatbuffers::FlatBufferBuilder& fbb, uint64_t stream_id)>;
  // Speaks as `identity` (one of the context's; "" its default).
  static Result<std::unique_ptr<StreamClient>> Open(Context& context, const std::string& endpoint,
                                                    uint32_t credits, const OpenBuilder& build,
                                                    const std::string& identity = {});
  StreamClient(const StreamClient&) = delete;
  StreamClient& operator=(const StreamClient&) = delete;
  ~StreamClient();

  // The stream's next frame, nullopt when none came within `timeout`; a
  // malformed frame or one of another stream is an error. Grants credits
  // back as frames are consumed.
  Result<std::optional<Frame>> Next(std::chrono::milliseconds timeout);

  uint64_t id() const { return id_; }

 private:
  struct Socket;
  StreamClient(Context& context, uint32_t credits);

  std::unique_ptr<Socket> socket_;
  const uint32_t credits_;
  const uint64_t id_;
  uint32_t consumed_ = 0;  // frames received since the last credit grant
};

}  // namespace podflow::bus
