// Context and frames: the envelope every message travels in.
#include "bus/zmq_internal.h"

namespace podflow::bus {

Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::~Context() = default;

Frame::Frame() = default;
Frame::Frame(std::unique_ptr<Storage> storage) : storage_(std::move(storage)) {
  data_ = static_cast<const uint8_t*>(storage_->message.data());
  size_ = storage_->message.size();
}
Frame::Frame(Frame&&) noexcept = default;
Frame& Frame::operator=(Frame&&) noexcept = default;
Frame::~Frame() = default;

Result<Frame> VerifyFrame(zmq::message_t message) {
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(message.data()), message.size());
  if (!msg::VerifyEnvelopeBuffer(verifier)) {
    return Status::Invalid("malformed frame of " + std::to_string(message.size()) +
                           " bytes: not a valid Envelope");
  }
  Frame frame(std::make_unique<Frame::Storage>(Frame::Storage{std::move(message)}));
  // The Verifier accepts a union whose type is set and whose table is
  // absent; every reader may take body_as_X() != nullptr for its type.
  if (frame.envelope().body_type() == msg::Body::NONE || frame.envelope().body() == nullptr) {
    return Status::Invalid("frame has no body");
  }
  return frame;
}

namespace {

void FinishEnvelope(flatbuffers::FlatBufferBuilder& fbb, msg::Body type, flatbuffers::Offset<void> body,
                    uint64_t id, uint32_t credits) {
  msg::EnvelopeBuilder envelope(fbb);
  envelope.add_body_type(type);
  envelope.add_body(body);
  envelope.add_id(id);
  if (credits > 0) envelope.add_credits(credits);
  msg::FinishEnvelopeBuffer(fbb, envelope.Finish());
}

}  // namespace

std::string FinishFrame(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                        flatbuffers::Offset<void> body, uint64_t id) {
  FinishEnvelope(fbb, type, body, id, 0);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

zmq::message_t FinishMessage(flatbuffers::FlatBufferBuilder& fbb, msg::Body type,
                             flatbuffers::Offset<void> body, uint64_t id, uint32_t credits) {
  FinishEnvelope(fbb, type, body, id, credits);
  return zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize());
}

std::vector<zmq::message_t> ReceiveParts(zmq::socket_t& socket) {
  std::vector<zmq::message_t> parts;
  try {
    do {
      zmq::message_t part;
      if (!socket.recv(part, zmq::recv_flags::dontwait)) break;
      parts.push_back(std::move(part));
    } while (parts.back().more());
  } catch (const zmq::error_t& e) {
    BusLog()->warn("receiving: {}", e.what());
  }
  return parts;
}

bool WaitReadable(zmq::socket_t& socket, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  try {
    zmq::poll(&item, 1, std::max(timeout, std::chrono::milliseconds(0)));
  } catch (const zmq::error_t&) {
    return false;  // EINTR or a closing context: the caller looks again
  }
  return (item.revents & ZMQ_POLLIN) != 0;
}

Status FromZmq(Code code, const std::string& what, const zmq::error_t& e) {
  return Status(code, what + ": " + e.what());
}

std::shared_ptr<spdlog::logger> BusLog() {
  static auto logger = Logger("bus");
  return logger;
}

std::string UniqueInproc(const std::string& what) {
  static std::atomic<uint64_t> counter{0};
  return "inproc://podflow-bus-" + what + "-" + std::to_string(counter.fetch_add(1));
}

}  // namespace podflow::bus
