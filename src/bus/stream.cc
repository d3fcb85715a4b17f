// Streams with credits: StreamServer (ROUTER, one thread) and StreamClient
// (DEALER).
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bus/zmq_internal.h"

namespace podflow::bus {

struct StreamServer::Sockets {
  zmq::socket_t router;
  int wake_fd = -1;  // an eventfd: Wake() makes it readable
  ~Sockets() {
    if (wake_fd >= 0) close(wake_fd);
  }
};

struct StreamServer::Stream {
  std::string identity;
  uint64_t id = 0;
  std::unique_ptr<StreamSource> source;
  uint32_t credits = 0;
  std::optional<zmq::message_t> unsent;  // a frame the connection could not take yet
  bool unsent_is_last = false;
  std::chrono::steady_clock::time_point heard;  // the client's last frame for this stream
};

StreamServer::StreamServer(Context& context, std::string endpoint, Opener opener, StreamLimits limits)
    : context_(context), endpoint_(std::move(endpoint)), opener_(std::move(opener)), limits_(limits) {}

StreamServer::~StreamServer() { Stop(); }

Status StreamServer::Start() {
  try {
    sockets_ = std::make_unique<Sockets>();
    sockets_->router = zmq::socket_t(NativeContext(context_), zmq::socket_type::router);
    sockets_->router.set(zmq::sockopt::linger, 0);
    sockets_->router.set(zmq::sockopt::maxmsgsize, kMaxIncomingBytes);
    // Sending to a client that is gone fails at once instead of silently.
    sockets_->router.set(zmq::sockopt::router_mandatory, 1);
    if (Status bound = BindServer(context_, sockets_->router, endpoint_); !bound.ok()) {
      sockets_.reset();
      return bound;
    }
  } catch (const zmq::error_t& e) {
    sockets_.reset();
    return FromZmq(Code::kIOError, "cannot bind " + endpoint_, e);
  }
  sockets_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sockets_->wake_fd < 0) {
    sockets_.reset();
    return Status::IOError("eventfd for " + endpoint_ + ": " + std::string(std::strerror(errno)));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void StreamServer::Wake() {
  if (!sockets_ || sockets_->wake_fd < 0) return;
  const uint64_t one = 1;
  // A full counter already means "wake up": nothing to do on failure.
  [[maybe_unused]] ssize_t n = write(sockets_->wake_fd, &one, sizeof(one));
}

void StreamServer::Stop() {
  if (stopping_.exchange(true)) return;
  Wake();
  if (thread_.joinable()) thread_.join();
  streams_.clear();
  peer_streams_.clear();
  open_streams_ = 0;
  sockets_.reset();
}

void StreamServer::Loop() {
  constexpr auto kTick = std::chrono::milliseconds(100);
  while (!stopping_) {
    zmq::pollitem_t items[] = {{sockets_->router.handle(), 0, ZMQ_POLLIN, 0},
                               {nullptr, sockets_->wake_fd, ZMQ_POLLIN, 0}};
    // A stream still catching up is served again at once; otherwise wait
    // for a frame, a wake-up or the tick.
    try {
      zmq::poll(items, 2, behind_ ? std::chrono::milliseconds(0) : kTick);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) BusLog()->warn("{}: poll: {}", endpoint_, e.what());
      continue;
    }
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(sockets_->wake_fd, &count, sizeof(count));
    }
    if (items[0].revents & ZMQ_POLLIN) ReceiveAll();
    ServeStreams();
    ExpireIdle();
    open_streams_ = streams_.size();
  }
}

void StreamServer::ReceiveAll() {
  while (true) {
    std::vector<zmq::message_t> parts = ReceiveParts(sockets_->router);
    if (parts.empty()) return;
    if (parts.size() != 2) {
      BusLog()->warn("{}: dropped a message of {} parts", endpoint_, parts.size() - 1);
      continue;
    }
    Result<Frame> frame = VerifyFrame(std::move(parts[1]));
    if (!frame.ok()) {
      BusLog()->warn("{}: dropped a frame: {}", endpoint_, frame.status().message());
      continue;
    }
    const msg::Envelope& envelope = frame->envelope();
    std::pair<std::string, uint64_t> key{parts[0].to_string(), envelope.id()};
    const auto now = std::chrono::steady_clock::now();
    if (const msg::StreamCredit* credit = envelope.body_as_StreamCredit()) {
      auto it = streams_.find(key);
      if (it != streams_.end()) {
        it->second.credits += credit->credits();
        it->second.heard = now;
      }
    } else if (envelope.body_type() == msg::Body::StreamCancel) {
      if (auto it = streams_.find(key); it != streams_.end()) Erase(it);
    } else {
      if (auto it = streams_.find(key); it != streams_.end()) Erase(it);  // opened again: starts over
      if (auto peer = peer_streams_.find(key.first);
          peer != peer_streams_.end() && peer->second >= limits_.max_streams_per_peer) {
        BusLog()->warn("{}: dropped a stream open: the client already has {} streams", endpoint_,
                       limits_.max_streams_per_peer);
        continue;
      }
      Stream stream;
      stream.heard = now;
      stream.identity = key.first;
      stream.id = key.second;
      stream.credits = envelope.credits();
      try {
        stream.source = opener_(envelope);
      } catch (const std::exception& e) {
        BusLog()->error("{}: could not open a stream: {}", endpoint_, e.what());
        continue;
      }
      streams_[key] = std::move(stream);
      ++peer_streams_[key.first];
    }
  }
}

void StreamServer::ServeStreams() {
  // At most this many frames per stream per round, so that one busy stream
  // cannot starve the others.
  constexpr int kFramesPerRound = 64;
  enum class Sent { kSent, kFull, kGone };
  auto send = [&](Stream& s) {
    try {
      if (!sockets_->router.send(zmq::buffer(s.identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return Sent::kFull;
      }
      zmq::message_t copy;
      copy.copy(*s.unsent);  // keeps the frame if the send fails
      sockets_->router.send(copy, zmq::send_flags::dontwait);
      return Sent::kSent;
    } catch (const zmq::error_t& e) {
      if (e.num() != EHOSTUNREACH) BusLog()->warn("{}: sending: {}", endpoint_, e.what());
      return Sent::kGone;
    }
  };
  behind_ = false;
  flatbuffers::FlatBufferBuilder fbb(1024);
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& s = it->second;
    bool remove = false;
    for (int n = 0; n < kFramesPerRound && s.credits > 0; ++n) {
      if (!s.unsent) {
        fbb.Clear();
        StreamSource::Next next;
        try {
          next = s.source->Produce(fbb);
        } catch (const std::exception& e) {
          // One stream's failure ends that stream, not the server.
          BusLog()->error("{}: a stream failed: {}", endpoint_, e.what());
          remove = true;
          break;
        }
        if (next.body.type == msg::Body::NONE) break;
        s.unsent = FinishMessage(fbb, next.body.type, next.body.body, s.id);
        s.unsent_is_last = next.last;
      }
      Sent sent = send(s);
      if (sent == Sent::kFull) break;
      if (sent == Sent::kGone) {
        remove = true;
        break;
      }
      s.unsent.reset();
      --s.credits;
      if (s.unsent_is_last) {
        remove = true;
        break;
      }
    }
    if (!remove && s.credits > 0 && !s.unsent && s.source->Behind()) behind_ = true;
    it = remove ? Erase(it) : std::next(it);
  }
}

void StreamServer::ExpireIdle() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = streams_.begin(); it != streams_.end();) {
    const Stream& s = it->second;
    it = s.credits == 0 && now - s.heard > limits_.idle_expiry ? Erase(it) : std::next(it);
  }
}

StreamServer::Streams::iterator StreamServer::Erase(Streams::iterator it) {
  auto peer = peer_streams_.find(it->first.first);
  if (peer != peer_streams_.end() && --peer->second == 0) peer_streams_.erase(peer);
  return streams_.erase(it);
}

// ---- StreamClient ----

struct StreamClient::Socket {
  zmq::socket_t socket;
};

namespace {
std::atomic<uint64_t> next_stream_id{1};
}

StreamClient::StreamClient(Context& context, uint32_t credits)
    : socket_(std::make_unique<Socket>(Socket{zmq::socket_t(NativeContext(context), zmq::socket_type::dealer)})),
      credits_(credits),
      id_(next_stream_id.fetch_add(1)) {
  socket_->socket.set(zmq::sockopt::linger, 0);
}

StreamClient::~StreamClient() {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto cancel = msg::CreateStreamCancel(fbb);
  try {
    socket_->socket.send(FinishMessage(fbb, msg::Body::StreamCancel, cancel.Union(), id_), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The server drops streams of clients that are gone anyway.
  }
}

Result<std::unique_ptr<StreamClient>> StreamClient::Open(Context& context, const std::string& endpoint,
                                                         uint32_t credits, const OpenBuilder& build,
                                                         const std::string& identity) {
  if (credits < 2) return Status::Invalid("a stream needs at least 2 credits");
  std::unique_ptr<StreamClient> client;
  try {
    client.reset(new StreamClient(context, credits));
    PODFLOW_RETURN_IF_ERROR(ConnectClient(context, client->socket_->socket, endpoint, identity));
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kUnavailable, "cannot connect to " + endpoint, e);
  }
  flatbuffers::FlatBufferBuilder fbb(256);
  ReplyBody open = build(fbb, client->id_);
  try {
    if (!client->socket_->socket.send(FinishMessage(fbb, open.type, open.body, client->id_, credits),
                                      zmq::send_flags::none)) {
      return Status::Unavailable("cannot open a stream on " + endpoint);
    }
  } catch (const zmq::error_t& e) {
    return FromZmq(Code::kUnavailable, "cannot open a stream on " + endpoint, e);
  }
  return client;
}

Result<std::optional<Frame>> StreamClient::Next(std::chrono::milliseconds timeout) {
  if (!WaitReadable(socket_->socket, timeout)) return std::optional<Frame>();
  std::vector<zmq::message_t> parts = ReceiveParts(socket_->socket);
  if (parts.empty()) return std::optional<Frame>();
  if (parts.size() != 1) return Status::Invalid("a message of " + std::to_string(parts.size()) + " parts on a stream");
  Result<Frame> frame = VerifyFrame(std::move(parts[0]));
  if (!frame.ok()) return frame.status();
  if (frame->envelope().id() != id_) return Status::Invalid("a frame of another stream");
  // Every frame took one credit; give half the window back at a time.
  if (++consumed_ >= credits_ / 2) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto credit = msg::CreateStreamCredit(fbb, consumed_);
    try {
      socket_->socket.send(FinishMessage(fbb, msg::Body::StreamCredit, credit.Union(), id_), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      return FromZmq(Code::kUnavailable, "granting credits", e);
    }
    consumed_ = 0;
  }
  return std::optional<Frame>(std::move(*frame));
}

}  // namespace podflow::bus
