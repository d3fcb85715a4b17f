// A request/reply channel (the api and submit channels) that received a
// request of more than one part from any local peer killed the process: the
// REP worker read one part, replied while parts were unread, and ZeroMQ's
// "Operation cannot be accomplished in current state" escaped the worker
// thread (terminate). Reported with a DEALER sending ['', 'x', 'y'] to
// tcp://127.0.0.1:7711, and with a valid envelope followed by an extra part.
#include <string>

#include <catch2/catch.hpp>

#include "bus/bus.h"
#include "bus/zmq_internal.h"

namespace podflow::bus {
namespace {

using namespace std::chrono_literals;

// Answers every read with its own revision.
ReplyBody Echo(const msg::Envelope& request, std::string_view, flatbuffers::FlatBufferBuilder& fbb) {
  const msg::ReadRequest* read = request.body_as_ReadRequest();
  if (read == nullptr) return {};
  return {msg::Body::ReadReply, msg::CreateReadReply(fbb, 0, read->revision()).Union()};
}

std::string ReadFrame(int64_t revision) {
  flatbuffers::FlatBufferBuilder fbb;
  auto req = msg::CreateReadRequest(fbb, fbb.CreateString("/registry/pods/default/a"), 0, false, revision);
  return FinishFrame(fbb, msg::Body::ReadRequest, req.Union(), 1);
}

// The reply to one raw request (delimiter then `parts`), or nullopt if none
// came within a second.
std::optional<zmq::message_t> Ask(zmq::socket_t& raw, const std::vector<std::string>& parts) {
  raw.send(zmq::message_t(), zmq::send_flags::sndmore);
  for (size_t i = 0; i < parts.size(); ++i) {
    raw.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  if (!WaitReadable(raw, 1s)) return std::nullopt;
  std::vector<zmq::message_t> reply = ReceiveParts(raw);
  if (reply.size() != 2) return std::nullopt;
  return std::move(reply[1]);
}

zmq::socket_t RawDealer(Context& ctx, const std::string& endpoint) {
  zmq::socket_t raw(NativeContext(ctx), zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.connect(endpoint);
  return raw;
}

// Whether a well-formed read through a fresh client gets its answer.
bool Served(Context& ctx, const std::string& endpoint, int64_t revision) {
  RpcClient client(ctx, endpoint);
  flatbuffers::FlatBufferBuilder fbb;
  auto req = msg::CreateReadRequest(fbb, fbb.CreateString("k"), 0, false, revision);
  auto reply = client.Call(fbb, msg::Body::ReadRequest, req.Union(), 2s);
  return reply.ok() && reply->envelope().body_as_ReadReply() != nullptr &&
         reply->envelope().body_as_ReadReply()->revision() == revision;
}

TEST_CASE("rpc: a request of several parts is refused and the one worker keeps serving") {
  Context ctx;
  const std::string endpoint = "tcp://127.0.0.1:17941";
  // One worker: had it died, nothing would answer the last call.
  RpcServer server(ctx, endpoint, 1, Echo);
  REQUIRE(server.Start().ok());
  zmq::socket_t raw = RawDealer(ctx, endpoint);

  for (int round = 0; round < 3; ++round) {
    // As reported: two parts of garbage after the delimiter.
    auto garbage = Ask(raw, {"x", "y"});
    REQUIRE(garbage.has_value());
    CHECK_FALSE(VerifyFrame(std::move(*garbage)).ok());  // the empty refusal
    // A valid envelope with an extra part is refused whole, not half-read.
    auto extra = Ask(raw, {ReadFrame(5), "trailer"});
    REQUIRE(extra.has_value());
    CHECK_FALSE(VerifyFrame(std::move(*extra)).ok());
  }

  CHECK(Served(ctx, endpoint, 42));
}

// Beside the multipart case: a request larger than any real one (a 3 MiB
// manifest at most) is not buffered and answered; ZeroMQ drops the peer
// that sent it, and everyone else is served as before.
TEST_CASE("rpc: a request over the incoming size limit is dropped with its peer") {
  Context ctx;
  const std::string endpoint = "tcp://127.0.0.1:17942";
  RpcServer server(ctx, endpoint, 1, Echo);
  REQUIRE(server.Start().ok());
  zmq::socket_t raw = RawDealer(ctx, endpoint);
  CHECK_FALSE(Ask(raw, {std::string(kMaxIncomingBytes + 1, 'x')}).has_value());

  CHECK(Served(ctx, endpoint, 9));
}

}  // namespace
}  // namespace podflow::bus
