// Push/pull: one-way channels (decisions, reports).
#include "bus/zmq_internal.h"

namespace podflow::bus {

struct Pusher::Socket {
  zmq::socket_t socket;
  std::string endpoint;
};

Pusher::Pusher(Context& context, const std::string& endpoint, const std::string& identity)
    : socket_(std::make_unique<Socket>(Socket{zmq::socket_t(NativeContext(context), zmq::socket_type::push), endpoint})) {
  try {
    socket_->socket.set(zmq::sockopt::linger, 1000);
    if (Status connected = ConnectClient(context, socket_->socket, endpoint, identity); !connected.ok()) {
      BusLog()->error("{}", connected.message());
      return;
    }
  } catch (const zmq::error_t& e) {
    BusLog()->error("cannot connect to {}: {}", endpoint, e.what());
  }
}

Pusher::~Pusher() = default;

Status Pusher::Push(std::string_view frame, std::chrono::milliseconds timeout) {
  try {
    socket_->socket.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
    if (!socket_->socket.send(zmq::buffer(frame.data(), frame.size()), zmq::send_flags::none)) {
      return Status::Unavailable("push timed out after " + std::to_string(timeout.count()) + "ms");
    }
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kUnavailable, "pushing to " + socket_->endpoint, e);
  }
  return Status::Ok();
}

struct Puller::Socket {
  zmq::socket_t socket;
};

Puller::Puller(Context& context, std::string endpoint, std::set<std::string> senders)
    : context_(context),
      endpoint_(std::move(endpoint)),
      senders_(std::move(senders)),
      socket_(std::make_unique<Socket>(Socket{zmq::socket_t(NativeContext(context), zmq::socket_type::pull)})) {
  socket_->socket.set(zmq::sockopt::linger, 0);
  socket_->socket.set(zmq::sockopt::maxmsgsize, kMaxIncomingBytes);
}

Puller::~Puller() = default;

Status Puller::Bind() {
  return BindServer(context_, socket_->socket, endpoint_);
}

Result<Frame> Puller::Pull(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!WaitReadable(socket_->socket, left)) return Status::Unavailable("nothing on " + endpoint_);
    std::vector<zmq::message_t> parts = ReceiveParts(socket_->socket);
    if (parts.empty()) continue;
    if (parts.size() != 1) {
      BusLog()->warn("{}: dropped a message of {} parts", endpoint_, parts.size());
      continue;
    }
    if (const char* sender = zmq_msg_gets(parts[0].handle(), "User-Id");
        sender != nullptr && !senders_.empty() && !senders_.count(sender)) {
      BusLog()->warn("{}: dropped a frame from {}, which does not send on this channel", endpoint_, sender);
      continue;
    }
    Result<Frame> frame = VerifyFrame(std::move(parts[0]));
    if (frame.ok()) return frame;
    BusLog()->warn("{}: dropped a frame: {}", endpoint_, frame.status().message());
  }
}

}  // namespace podflow::bus
