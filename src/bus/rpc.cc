// Request/reply: RpcServer (ROUTER -> forwarding loop -> REP workers) and
// RpcClient.
#include "bus/zmq_internal.h"

namespace podflow::bus {

struct RpcServer::Sockets {
  zmq::socket_t frontend;
  zmq::socket_t backend;
};

RpcServer::RpcServer(Context& context, std::string endpoint, int workers, Handler handler)
    : context_(context),
      endpoint_(std::move(endpoint)),
      backend_(UniqueInproc("workers")),
      workers_(workers),
      handler_(std::move(handler)) {}

RpcServer::~RpcServer() { Stop(); }

Status RpcServer::Start() {
  zmq::context_t& zmq_context = NativeContext(context_);
  sockets_ = std::make_unique<Sockets>();
  try {
    sockets_->frontend = zmq::socket_t(zmq_context, zmq::socket_type::router);
    sockets_->frontend.set(zmq::sockopt::linger, 0);
    sockets_->frontend.set(zmq::sockopt::maxmsgsize, kMaxIncomingBytes);
    if (Status bound = BindServer(context_, sockets_->frontend, endpoint_); !bound.ok()) {
      sockets_.reset();
      return bound;
    }
    sockets_->backend = zmq::socket_t(zmq_context, zmq::socket_type::dealer);
    sockets_->backend.set(zmq::sockopt::linger, 0);
    // Waits for a worker (they connect as they start), never for ever.
    sockets_->backend.set(zmq::sockopt::sndtimeo, 1000);
    sockets_->backend.bind(backend_);
  } catch (const zmq::error_t& e) {
    sockets_.reset();
    return FromZmq(Code::kIOError, "cannot bind " + endpoint_, e);
  }
  proxy_thread_ = std::thread([this] { ProxyLoop(); });
  for (int i = 0; i < workers_; ++i) worker_threads_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

// The workers end first (each after the request it serves), then the
// forwarding loop, after passing on their last replies.
void RpcServer::Stop() {
  if (stopping_.exchange(true)) return;
  for (std::thread& t : worker_threads_) t.join();
  worker_threads_.clear();
  forwarded_ = true;
  if (proxy_thread_.joinable()) proxy_thread_.join();
  sockets_.reset();
}

namespace {

// At most this many messages are moved one way before the other way gets
// its turn.
constexpr int kForwardBatch = 64;

// Sends every part; false when the first could not be queued within the
// socket's send timeout (nothing was sent). Throws zmq::error_t.
bool SendParts(zmq::socket_t& socket, std::vector<zmq::message_t>& parts) {
  for (size_t i = 0; i < parts.size(); ++i) {
    const zmq::send_flags flags = i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (!socket.send(parts[i], flags) && i == 0) return false;
  }
  return true;
}

}  // namespace

// The one thread that owns both sockets: requests go from the ROUTER to the
// workers with the peer's identity beside them, replies come back.
void RpcServer::ProxyLoop() {
  while (!forwarded_) {
    zmq::pollitem_t items[] = {{sockets_->frontend.handle(), 0, ZMQ_POLLIN, 0},
                               {sockets_->backend.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) BusLog()->warn("{}: poll: {}", endpoint_, e.what());
      continue;
    }
    if (items[1].revents & ZMQ_POLLIN) ForwardReplies();
    if ((items[0].revents & ZMQ_POLLIN) && !stopping_) ForwardRequests();
  }
  ForwardReplies();  // what the workers answered last
}

// A request from a client is [routing id, "", frame]. It goes to a worker
// as [routing id, "", peer identity, frame]: the REP worker sees
// [identity, frame] and its reply comes back addressed. Any other shape is
// answered with an empty frame here (the client's Verifier refuses it).
void RpcServer::ForwardRequests() {
  for (int n = 0; n < kForwardBatch; ++n) {
    std::vector<zmq::message_t> parts = ReceiveParts(sockets_->frontend);
    if (parts.empty()) return;
    try {
      if (parts.size() != 3 || parts[1].size() != 0) {
        BusLog()->warn("{}: dropped a request of {} parts", endpoint_, parts.size() - 1);
        std::vector<zmq::message_t> refusal;
        refusal.push_back(std::move(parts[0]));
        refusal.emplace_back();
        refusal.emplace_back();
        SendParts(sockets_->frontend, refusal);
        continue;
      }
      std::string peer = PeerIdentity(parts[0], parts[2]);
      std::vector<zmq::message_t> request;
      request.push_back(std::move(parts[0]));
      request.push_back(std::move(parts[1]));
      request.emplace_back(peer.data(), peer.size());
      request.push_back(std::move(parts[2]));
      // No worker took it within the send timeout: dropped (the client
      // times out) rather than holding the replies back any longer.
      if (!SendParts(sockets_->backend, request)) {
        BusLog()->warn("{}: dropped a request: no worker took it within 1 s", endpoint_);
      }
    } catch (const zmq::error_t& e) {
      BusLog()->warn("{}: forwarding a request: {}", endpoint_, e.what());
    }
  }
}

void RpcServer::ForwardReplies() {
  for (int n = 0; n < kForwardBatch; ++n) {
    std::vector<zmq::message_t> parts = ReceiveParts(sockets_->backend);
    if (parts.empty()) return;
    try {
      // A client that is gone: ROUTER drops the reply.
      SendParts(sockets_->frontend, parts);
    } catch (const zmq::error_t& e) {
      BusLog()->warn("{}: forwarding a reply: {}", endpoint_, e.what());
    }
  }
}

namespace {

// Answers one request ([peer identity, frame], both read) on a REP socket.
// Nothing a request does may end the worker: a throwing handler or a failed
// send costs that one request, with one log line. Never throws.
void ServeOne(const std::string& endpoint, const RpcServer::Handler& handler, zmq::socket_t& socket,
              std::vector<zmq::message_t>& parts, flatbuffers::FlatBufferBuilder& fbb) {
  fbb.Clear();
  ReplyBody reply;
  uint64_t id = 0;
  try {
    if (parts.size() != 2) {
      BusLog()->warn("{}: dropped a request of {} parts", endpoint, parts.size());
    } else if (Result<Frame> frame = VerifyFrame(std::move(parts[1])); !frame.ok()) {
      BusLog()->warn("{}: dropped a request: {}", endpoint, frame.status().message());
    } else {
      id = frame->envelope().id();
      reply = handler(frame->envelope(), parts[0].to_string_view(), fbb);
    }
  } catch (const std::exception& e) {
    BusLog()->error("{}: a request failed: {}", endpoint, e.what());
    reply = ReplyBody{};
    fbb.Clear();
  }
  try {
    // REP must answer every request; a dropped one gets an empty frame the
    // client's verifier rejects.
    if (reply.type == msg::Body::NONE) {
      socket.send(zmq::message_t(), zmq::send_flags::none);
    } else {
      socket.send(FinishMessage(fbb, reply.type, reply.body, id), zmq::send_flags::none);
    }
  } catch (const std::exception& e) {
    BusLog()->warn("{}: could not reply: {}", endpoint, e.what());
  }
}

}  // namespace

void RpcServer::WorkerLoop() {
  std::optional<zmq::socket_t> socket;
  try {
    socket.emplace(NativeContext(context_), zmq::socket_type::rep);
    socket->set(zmq::sockopt::linger, 0);
    socket->connect(backend_);
  } catch (const zmq::error_t& e) {
    BusLog()->error("a worker of {} could not start: {}", endpoint_, e.what());
    return;
  }
  flatbuffers::FlatBufferBuilder fbb(1024);
  while (!stopping_) {
    if (!WaitReadable(*socket, std::chrono::milliseconds(100))) continue;
    std::vector<zmq::message_t> parts = ReceiveParts(*socket);
    if (parts.empty()) continue;
    ServeOne(endpoint_, handler_, *socket, parts, fbb);
  }
}

// ---- RpcClient ----

struct RpcClient::Socket {
  zmq::socket_t socket;
};

RpcClient::RpcClient(Context& context, std::string endpoint, std::string identity)
    : context_(context), endpoint_(std::move(endpoint)), identity_(std::move(identity)) {
  if (Status s = Connect(); !s.ok()) BusLog()->error("{}", s.message());
}

RpcClient::~RpcClient() = default;

Status RpcClient::Connect() {
  socket_.reset();
  try {
    auto socket = std::make_unique<Socket>(Socket{zmq::socket_t(NativeContext(context_), zmq::socket_type::dealer)});
    socket->socket.set(zmq::sockopt::linger, 0);
    PODFLOW_RETURN_IF_ERROR(ConnectClient(context_, socket->socket, endpoint_, identity_));
    socket_ = std::move(socket);
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kUnavailable, "cannot connect to " + endpoint_, e);
  }
  return Status::Ok();
}

Result<Frame> RpcClient::Call(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                              flatbuffers::Offset<void> body, std::chrono::milliseconds timeout) {
  if (!socket_) PODFLOW_RETURN_IF_ERROR(Connect());
  zmq::socket_t& socket = socket_->socket;
  const uint64_t id = next_id_++;
  zmq::message_t frame = FinishMessage(fbb, type, body, id);
  try {
    // A DEALER talking to REP workers sends the empty delimiter REQ would.
    socket.send(zmq::message_t(), zmq::send_flags::sndmore);
    socket.send(frame, zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    (void)Connect();
    return FromZmq(Code::kUnavailable, "sending to " + endpoint_, e);
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (!WaitReadable(socket, left)) continue;
    std::vector<zmq::message_t> parts = ReceiveParts(socket);
    if (parts.empty()) continue;
    Result<Frame> reply = VerifyFrame(std::move(parts.back()));
    if (!reply.ok()) return Status::Invalid(endpoint_ + ": " + reply.status().message());
    if (reply->envelope().id() != id) continue;  // a late reply to an earlier call
    return reply;
  }
  (void)Connect();  // drop whatever may still arrive for this call
  return Status::Unavailable("no reply from " + endpoint_ + " within " +
                             std::to_string(timeout.count()) + "ms");
}

}  // namespace podflow::bus
