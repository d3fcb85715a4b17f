#include "bus/bus.h"

#include "base/logging.h"

namespace podflow::bus {
namespace {

std::shared_ptr<spdlog::logger> BusLog() {
  static auto logger = Logger("bus");
  return logger;
}

std::string UniqueInproc(const std::string& what) {
  static std::atomic<uint64_t> counter{0};
  return "inproc://podflow-bus-" + what + "-" + std::to_string(counter.fetch_add(1));
}

}  // namespace

Result<Frame> VerifyFrame(zmq::message_t message) {
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(message.data()), message.size());
  if (!msg::VerifyEnvelopeBuffer(verifier)) {
    return Status::Invalid("malformed frame of " + std::to_string(message.size()) +
                           " bytes: not a valid Envelope");
  }
  Frame frame(std::move(message));
  if (frame.envelope().body_type() == msg::Body::NONE) {
    return Status::Invalid("frame has no body");
  }
  return frame;
}

zmq::message_t FinishFrame(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                           flatbuffers::Offset<void> body, uint64_t id) {
  msg::EnvelopeBuilder envelope(fbb);
  envelope.add_body_type(type);
  envelope.add_body(body);
  envelope.add_id(id);
  msg::FinishEnvelopeBuffer(fbb, envelope.Finish());
  return zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize());
}

// ---- RpcServer ----

RpcServer::RpcServer(zmq::context_t& context, std::string endpoint, int workers, Handler handler)
    : context_(context),
      endpoint_(std::move(endpoint)),
      backend_(UniqueInproc("workers")),
      control_(UniqueInproc("control")),
      workers_(workers),
      handler_(std::move(handler)) {}

RpcServer::~RpcServer() { Stop(); }

Status RpcServer::Start() {
  try {
    frontend_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    frontend_->set(zmq::sockopt::linger, 0);
    frontend_->bind(endpoint_);
    backend_socket_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    backend_socket_->set(zmq::sockopt::linger, 0);
    backend_socket_->bind(backend_);
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot bind " + endpoint_ + ": " + e.what());
  }
  // The control socket must exist before the proxy starts so Stop() can
  // always reach it.
  auto control = std::make_shared<zmq::socket_t>(context_, zmq::socket_type::pair);
  control->bind(control_);
  proxy_thread_ = std::thread([this, control] {
    try {
      zmq::proxy_steerable(*frontend_, *backend_socket_, nullptr, *control);
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
    zmq::socket_t control(context_, zmq::socket_type::pair);
    control.connect(control_);
    control.send(zmq::str_buffer("TERMINATE"), zmq::send_flags::none);
    proxy_thread_.join();
  }
  for (std::thread& t : worker_threads_) t.join();
  worker_threads_.clear();
  frontend_.reset();
  backend_socket_.reset();
}

void RpcServer::WorkerLoop() {
  zmq::socket_t socket(context_, zmq::socket_type::rep);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(backend_);
  flatbuffers::FlatBufferBuilder fbb(1024);
  while (!stopping_) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t request;
    if (!socket.recv(request, zmq::recv_flags::dontwait)) continue;
    fbb.Clear();
    Result<Frame> frame = VerifyFrame(std::move(request));
    ReplyBody reply;
    uint64_t id = 0;
    if (!frame.ok()) {
      BusLog()->warn("{}: dropped a request: {}", endpoint_, frame.status().message());
    } else {
      id = frame->envelope().id();
      reply = handler_(frame->envelope(), fbb);
    }
    // REP must answer every request; a dropped one gets an empty frame the
    // client's verifier rejects.
    if (reply.type == msg::Body::NONE) {
      socket.send(zmq::message_t(), zmq::send_flags::none);
    } else {
      socket.send(FinishFrame(fbb, reply.type, reply.body, id), zmq::send_flags::none);
    }
  }
}

// ---- RpcClient ----

RpcClient::RpcClient(zmq::context_t& context, std::string endpoint)
    : context_(context), endpoint_(std::move(endpoint)) {
  Connect();
}

void RpcClient::Connect() {
  socket_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
  socket_->set(zmq::sockopt::linger, 0);
  socket_->connect(endpoint_);
}

Result<Frame> RpcClient::Call(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                              flatbuffers::Offset<void> body, std::chrono::milliseconds timeout) {
  uint64_t id = next_id_++;
  zmq::message_t frame = FinishFrame(fbb, type, body, id);
  // A DEALER talking to REP workers sends the empty delimiter REQ would.
  socket_->send(zmq::message_t(), zmq::send_flags::sndmore);
  socket_->send(frame, zmq::send_flags::none);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN)) continue;
    std::vector<zmq::message_t> parts;
    zmq::recv_result_t received;
    do {
      zmq::message_t part;
      received = socket_->recv(part, zmq::recv_flags::dontwait);
      if (!received) break;
      parts.push_back(std::move(part));
    } while (parts.back().more());
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

// ---- push / pull ----

Pusher::Pusher(zmq::context_t& context, const std::string& endpoint)
    : socket_(context, zmq::socket_type::push) {
  socket_.set(zmq::sockopt::linger, 1000);
  socket_.connect(endpoint);
}

Status Pusher::Push(zmq::message_t frame, std::chrono::milliseconds timeout) {
  socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
  if (!socket_.send(frame, zmq::send_flags::none)) {
    return Status::Unavailable("push timed out after " + std::to_string(timeout.count()) + "ms");
  }
  return Status::Ok();
}

Puller::Puller(zmq::context_t& context, std::string endpoint)
    : endpoint_(std::move(endpoint)), socket_(context, zmq::socket_type::pull) {
  socket_.set(zmq::sockopt::linger, 0);
}

Status Puller::Bind() {
  try {
    socket_.bind(endpoint_);
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot bind " + endpoint_ + ": " + e.what());
  }
  return Status::Ok();
}

Result<Frame> Puller::Pull(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::max(left, std::chrono::milliseconds(0)));
    if (!(item.revents & ZMQ_POLLIN)) {
      return Status::Unavailable("nothing on " + endpoint_);
    }
    zmq::message_t message;
    if (!socket_.recv(message, zmq::recv_flags::dontwait)) continue;
    Result<Frame> frame = VerifyFrame(std::move(message));
    if (frame.ok()) return frame;
    BusLog()->warn("{}: dropped a frame: {}", endpoint_, frame.status().message());
  }
}

}  // namespace podflow::bus
