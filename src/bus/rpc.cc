// Request/reply: RpcServer (ROUTER -> proxy -> REP workers) and RpcClient.
#include "bus/zmq_internal.h"

namespace podflow::bus {

struct RpcServer::Sockets {
  std::unique_ptr<zmq::socket_t> frontend;
  std::unique_ptr<zmq::socket_t> backend;
  std::shared_ptr<zmq::socket_t> control;
};

RpcServer::RpcServer(Context& context, std::string endpoint, int workers, Handler handler)
    : context_(context),
      endpoint_(std::move(endpoint)),
      backend_(UniqueInproc("workers")),
      control_(UniqueInproc("control")),
      workers_(workers),
      handler_(std::move(handler)) {}

RpcServer::~RpcServer() { Stop(); }

Status RpcServer::Start() {
  zmq::context_t& zmq_context = NativeContext(context_);
  sockets_ = std::make_unique<Sockets>();
  try {
    sockets_->frontend = std::make_unique<zmq::socket_t>(zmq_context, zmq::socket_type::router);
    sockets_->frontend->set(zmq::sockopt::linger, 0);
    sockets_->frontend->set(zmq::sockopt::maxmsgsize, kMaxIncomingBytes);
    sockets_->frontend->bind(endpoint_);
    sockets_->backend = std::make_unique<zmq::socket_t>(zmq_context, zmq::socket_type::dealer);
    sockets_->backend->set(zmq::sockopt::linger, 0);
    sockets_->backend->bind(backend_);
    // The control socket exists before the proxy starts, so that Stop()
    // can always reach it.
    sockets_->control = std::make_shared<zmq::socket_t>(zmq_context, zmq::socket_type::pair);
    sockets_->control->bind(control_);
  } catch (const zmq::error_t& e) {
    sockets_.reset();
    return FromZmq(Code::kIOError, "cannot bind " + endpoint_, e);
  }
  proxy_thread_ = std::thread([this] {
    try {
      zmq::proxy_steerable(*sockets_->frontend, *sockets_->backend, zmq::socket_ref(), *sockets_->control);
    } catch (const zmq::error_t& e) {
      if (!stopping_) BusLog()->error("proxy for {} stopped: {}", endpoint_, e.what());
    }
  });
  for (int i = 0; i < workers_; ++i) worker_threads_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

void RpcServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (proxy_thread_.joinable()) {
    try {
      zmq::socket_t control(NativeContext(context_), zmq::socket_type::pair);
      control.connect(control_);
      control.send(zmq::str_buffer("TERMINATE"), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      BusLog()->error("stopping the proxy for {}: {}", endpoint_, e.what());
    }
    proxy_thread_.join();
  }
  for (std::thread& t : worker_threads_) t.join();
  worker_threads_.clear();
  sockets_.reset();
}

namespace {

// Answers one request (every part of it already read) on a REP socket.
// Nothing a request does may end the worker: a throwing handler or a failed
// send costs that one request, with one log line. Never throws.
void ServeOne(const std::string& endpoint, const RpcServer::Handler& handler, zmq::socket_t& socket,
              std::vector<zmq::message_t>& parts, flatbuffers::FlatBufferBuilder& fbb) {
  fbb.Clear();
  ReplyBody reply;
  uint64_t id = 0;
  try {
    if (parts.size() != 1) {
      BusLog()->warn("{}: dropped a request of {} parts", endpoint, parts.size());
    } else if (Result<Frame> frame = VerifyFrame(std::move(parts[0])); !frame.ok()) {
      BusLog()->warn("{}: dropped a request: {}", endpoint, frame.status().message());
    } else {
      id = frame->envelope().id();
      reply = handler(frame->envelope(), fbb);
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
    // A request of several parts is read whole (REP answers only after
    // every part was taken) and refused.
    std::vector<zmq::message_t> parts = ReceiveParts(*socket);
    if (parts.empty()) continue;
    ServeOne(endpoint_, handler_, *socket, parts, fbb);
  }
}

// ---- RpcClient ----

struct RpcClient::Socket {
  zmq::socket_t socket;
};

RpcClient::RpcClient(Context& context, std::string endpoint)
    : context_(context), endpoint_(std::move(endpoint)) {
  Connect();
}

RpcClient::~RpcClient() = default;

void RpcClient::Connect() {
  socket_.reset();
  try {
    auto socket = std::make_unique<Socket>(Socket{zmq::socket_t(NativeContext(context_), zmq::socket_type::dealer)});
    socket->socket.set(zmq::sockopt::linger, 0);
    socket->socket.connect(endpoint_);
    socket_ = std::move(socket);
  } catch (const zmq::error_t& e) {
    BusLog()->error("cannot connect to {}: {}", endpoint_, e.what());
  }
}

Result<Frame> RpcClient::Call(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                              flatbuffers::Offset<void> body, std::chrono::milliseconds timeout) {
  if (!socket_) Connect();
  if (!socket_) return Status::Unavailable("cannot connect to " + endpoint_);
  zmq::socket_t& socket = socket_->socket;
  const uint64_t id = next_id_++;
  zmq::message_t frame = FinishMessage(fbb, type, body, id);
  try {
    // A DEALER talking to REP workers sends the empty delimiter REQ would.
    socket.send(zmq::message_t(), zmq::send_flags::sndmore);
    socket.send(frame, zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    Connect();
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
  Connect();  // drop whatever may still arrive for this call
  return Status::Unavailable("no reply from " + endpoint_ + " within " +
                             std::to_string(timeout.count()) + "ms");
}

}  // namespace podflow::bus
