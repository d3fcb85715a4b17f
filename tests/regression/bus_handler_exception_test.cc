// A request/reply worker caught only ZeroMQ's errors, and only outside its
// loop: any other exception from a handler (a failed allocation, a bug in a
// stage) escaped the worker thread and terminated the process, and a failed
// send ended the worker for good. A stream's source that threw took the
// whole stream server down the same way.
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "bus/bus.h"

namespace podflow::bus {
namespace {

using namespace std::chrono_literals;

// Throws on revision 13, answers every other read with its revision.
ReplyBody ThrowOn13(const msg::Envelope& request, std::string_view, flatbuffers::FlatBufferBuilder& fbb) {
  const msg::ReadRequest* read = request.body_as_ReadRequest();
  if (read == nullptr) return {};
  if (read->revision() == 13) throw std::runtime_error("unlucky");
  return {msg::Body::ReadReply, msg::CreateReadReply(fbb, 0, read->revision()).Union()};
}

Result<Frame> Read(RpcClient& client, int64_t revision) {
  flatbuffers::FlatBufferBuilder fbb;
  auto req = msg::CreateReadRequest(fbb, fbb.CreateString("k"), 0, false, revision);
  return client.Call(fbb, msg::Body::ReadRequest, req.Union(), 2s);
}

TEST_CASE("rpc: a handler that throws costs its request only; the one worker keeps serving") {
  Context ctx;
  RpcServer server(ctx, "inproc://regression-throw", 1, ThrowOn13);
  REQUIRE(server.Start().ok());
  RpcClient client(ctx, "inproc://regression-throw");
  for (int round = 0; round < 3; ++round) {
    // The refusal is the empty frame, which the client's verifier rejects.
    CHECK_FALSE(Read(client, 13).ok());
    Result<Frame> ok = Read(client, 7);
    REQUIRE(ok.ok());
    REQUIRE(ok->envelope().body_as_ReadReply() != nullptr);
    CHECK(ok->envelope().body_as_ReadReply()->revision() == 7);
  }
}

// Sends frames numbered from 1; throws when asked for frame 3.
class Counting : public StreamSource {
 public:
  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override {
    if (++n_ == 3) throw std::runtime_error("source broke");
    return {{msg::Body::ReadReply, msg::CreateReadReply(fbb, 0, n_).Union()}, false};
  }
  bool Behind() const override { return true; }

 private:
  int64_t n_ = 0;
};

TEST_CASE("stream: a source or opener that throws ends its stream, not the server") {
  Context ctx;
  StreamServer server(ctx, "inproc://regression-stream-throw", [](const msg::Envelope& open) {
    const msg::ReadRequest* read = open.body_as_ReadRequest();
    if (read != nullptr && read->revision() < 0) throw std::runtime_error("bad open");
    return std::make_unique<Counting>();
  });
  REQUIRE(server.Start().ok());
  auto open = [&](int64_t revision) {
    return StreamClient::Open(ctx, "inproc://regression-stream-throw", 8,
                              [&](flatbuffers::FlatBufferBuilder& fbb, uint64_t) {
                                auto req = msg::CreateReadRequest(fbb, fbb.CreateString("k"), 0, false, revision);
                                return ReplyBody{msg::Body::ReadRequest, req.Union()};
                              });
  };
  {
    auto refused = open(-1);
    REQUIRE(refused.ok());
    auto nothing = (*refused)->Next(300ms);
    REQUIRE(nothing.ok());
    CHECK_FALSE(nothing->has_value());
  }
  for (int round = 0; round < 2; ++round) {
    auto stream = open(1);
    REQUIRE(stream.ok());
    for (int64_t want = 1; want <= 2; ++want) {
      auto frame = (*stream)->Next(2s);
      REQUIRE(frame.ok());
      REQUIRE(frame->has_value());
      CHECK((*frame)->envelope().body_as_ReadReply()->revision() == want);
    }
    // Frame 3 threw: the stream ended, and nothing more comes on it.
    auto after = (*stream)->Next(300ms);
    REQUIRE(after.ok());
    CHECK_FALSE(after->has_value());
  }
  CHECK(server.open_streams() == 0);
}

}  // namespace
}  // namespace podflow::bus
