#include "bus/bus.h"

#include <catch2/catch.hpp>

namespace podflow::bus {
namespace {

using namespace std::chrono_literals;

// A read handler that answers with one kv named after the requested key.
ReplyBody EchoRead(const msg::Envelope& request, flatbuffers::FlatBufferBuilder& fbb) {
  const msg::ReadRequest* read = request.body_as_ReadRequest();
  if (read == nullptr) return {};
  auto kv = msg::CreateKeyValue(fbb, fbb.CreateString(read->key()->str() + "!"));
  auto kvs = fbb.CreateVector(std::vector<flatbuffers::Offset<msg::KeyValue>>{kv});
  auto reply = msg::CreateReadReply(fbb, kvs, read->revision());
  return {msg::Body::ReadReply, reply.Union()};
}

Result<Frame> Read(RpcClient& client, const std::string& key, int64_t revision,
                   std::chrono::milliseconds timeout = 2s) {
  flatbuffers::FlatBufferBuilder fbb;
  auto req = msg::CreateReadRequest(fbb, fbb.CreateString(key), 0, false, revision);
  return client.Call(fbb, msg::Body::ReadRequest, req.Union(), timeout);
}

TEST_CASE("Request/reply carries verified frames both ways") {
  zmq::context_t ctx;
  for (const std::string endpoint : {"inproc://bus-test-rpc"}) {
    RpcServer server(ctx, endpoint, 2, EchoRead);
    REQUIRE(server.Start().ok());
    RpcClient client(ctx, endpoint);
    for (int i = 0; i < 20; ++i) {
      auto reply = Read(client, "/registry/pods/a" + std::to_string(i), i);
      REQUIRE(reply.ok());
      const msg::ReadReply* read = reply->envelope().body_as_ReadReply();
      REQUIRE(read != nullptr);
      CHECK(read->kvs()->Get(0)->key()->str() == "/registry/pods/a" + std::to_string(i) + "!");
      CHECK(read->revision() == i);
    }
  }
}

TEST_CASE("Request/reply works over tcp and ipc too") {
  zmq::context_t ctx;
  for (const std::string endpoint : {"tcp://127.0.0.1:17931", "ipc:///tmp/podflow-bus-test.sock"}) {
    RpcServer server(ctx, endpoint, 1, EchoRead);
    REQUIRE(server.Start().ok());
    RpcClient client(ctx, endpoint);
    auto reply = Read(client, "k", 7);
    REQUIRE(reply.ok());
    CHECK(reply->envelope().body_as_ReadReply()->revision() == 7);
  }
}

TEST_CASE("A malformed request is dropped and the server keeps serving") {
  zmq::context_t ctx;
  RpcServer server(ctx, "inproc://bus-test-bad", 1, EchoRead);
  REQUIRE(server.Start().ok());
  {
    zmq::socket_t raw(ctx, zmq::socket_type::dealer);
    raw.connect("inproc://bus-test-bad");
    raw.send(zmq::message_t(), zmq::send_flags::sndmore);
    raw.send(zmq::str_buffer("this is not a flatbuffer"), zmq::send_flags::none);
    zmq::message_t delimiter, body;
    REQUIRE(raw.recv(delimiter));
    REQUIRE(raw.recv(body));
    CHECK_FALSE(VerifyFrame(std::move(body)).ok());
  }
  RpcClient client(ctx, "inproc://bus-test-bad");
  auto reply = Read(client, "still-alive", 1);
  REQUIRE(reply.ok());
  CHECK(reply->envelope().body_as_ReadReply()->kvs()->Get(0)->key()->str() == "still-alive!");
}

TEST_CASE("A call with no server times out as Unavailable") {
  zmq::context_t ctx;
  RpcClient client(ctx, "inproc://bus-test-nobody");
  auto reply = Read(client, "k", 1, 50ms);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == Code::kUnavailable);
}

TEST_CASE("Push/pull delivers verified frames in order and skips garbage") {
  zmq::context_t ctx;
  Puller puller(ctx, "inproc://bus-test-pull");
  REQUIRE(puller.Bind().ok());
  Pusher pusher(ctx, "inproc://bus-test-pull");
  {
    zmq::socket_t raw(ctx, zmq::socket_type::push);
    raw.connect("inproc://bus-test-pull");
    raw.send(zmq::str_buffer("garbage"), zmq::send_flags::none);
  }
  for (int i = 0; i < 3; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    auto d = msg::CreateDecision(fbb, fbb.CreateString("/registry/pods/default/p" + std::to_string(i)),
                                 0, i, fbb.CreateString("node-1"));
    REQUIRE(pusher.Push(FinishFrame(fbb, msg::Body::Decision, d.Union())).ok());
  }
  for (int i = 0; i < 3; ++i) {
    auto frame = puller.Pull(1s);
    REQUIRE(frame.ok());
    const msg::Decision* d = frame->envelope().body_as_Decision();
    REQUIRE(d != nullptr);
    CHECK(d->pod_mod_revision() == i);
  }
  CHECK(puller.Pull(20ms).status().code() == Code::kUnavailable);
}

}  // namespace
}  // namespace podflow::bus
