#include "bus/bus.h"

#include <thread>

#include <catch2/catch.hpp>

#include "bus/zmq_internal.h"

namespace podflow::bus {
namespace {

using namespace std::chrono_literals;

// A read handler that answers with one kv named after the requested key.
ReplyBody EchoRead(const msg::Envelope& request, std::string_view, flatbuffers::FlatBufferBuilder& fbb) {
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
  Context ctx;
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
  Context ctx;
  Context other;  // another process's: its clients really go over the endpoint
  for (const std::string endpoint : {"tcp://127.0.0.1:17931", "ipc:///tmp/podflow-bus-test.sock"}) {
    RpcServer server(ctx, endpoint, 1, EchoRead);
    REQUIRE(server.Start().ok());
    RpcClient client(other, endpoint);
    auto reply = Read(client, "k", 7);
    REQUIRE(reply.ok());
    CHECK(reply->envelope().body_as_ReadReply()->revision() == 7);
  }
}

// Answers a read with the identity of the peer that sent it.
ReplyBody WhoAsked(const msg::Envelope&, std::string_view peer, flatbuffers::FlatBufferBuilder& fbb) {
  auto reply = msg::CreateReadReply(fbb, 0, 0, false, fbb.CreateString(peer));
  return {msg::Body::ReadReply, reply.Union()};
}

// What a client process holds: the server's public key and the keys of
// the one identity it speaks as.
Security SpeakingAs(const std::string& name, const CurveKeys& keys, const CurveKeys& server) {
  Security side;
  side.server.public_key = server.public_key;
  side.identities[name] = keys;
  side.default_identity = name;
  return side;
}

Result<std::string> Asker(Context& ctx, const std::string& endpoint, const std::string& identity) {
  RpcClient client(ctx, endpoint, identity);
  Result<Frame> reply = Read(client, "k", 1, 1500ms);
  if (!reply.ok()) return reply.status();
  return reply->envelope().body_as_ReadReply()->continue_token()->str();
}

TEST_CASE("A secured server knows each peer by the identity its CURVE key proves") {
  auto server_keys = GenerateCurveKeys();
  auto binding_keys = GenerateCurveKeys();
  auto status_keys = GenerateCurveKeys();
  REQUIRE((server_keys.ok() && binding_keys.ok() && status_keys.ok()));
  Security served;
  served.server = *server_keys;
  served.identities["binding"] = *binding_keys;
  served.default_identity = "binding";
  served.peers[binding_keys->public_key] = "binding";
  served.peers[status_keys->public_key] = "status";
  Context ctx;
  REQUIRE(ctx.Secure(served).ok());
  const std::string endpoint = "tcp://127.0.0.1:17933";
  RpcServer server(ctx, endpoint, 1, WhoAsked);
  REQUIRE(server.Start().ok());

  // The process's own clients speak with its keys too.
  Result<std::string> own = Asker(ctx, endpoint, "");
  INFO(own.status().ToString());
  REQUIRE(own.ok());
  CHECK(*own == "binding");
  CHECK(Asker(ctx, endpoint, "status").status().code() == Code::kInvalid);  // no keys for it here

  // Another process with status's keys is status, over CURVE.
  const Security status_side = SpeakingAs("status", *status_keys, *server_keys);
  Context other;
  REQUIRE(other.Secure(status_side).ok());
  Result<std::string> remote = Asker(other, endpoint, "");
  REQUIRE(remote.ok());
  CHECK(*remote == "status");

  // Keys nobody listed, or none at all: no answer.
  Security stranger = status_side;
  stranger.identities["status"] = *GenerateCurveKeys();
  Context strange;
  REQUIRE(strange.Secure(stranger).ok());
  CHECK(Asker(strange, endpoint, "").status().code() == Code::kUnavailable);
  Context plain;
  CHECK(Asker(plain, endpoint, "").status().code() == Code::kUnavailable);

  // Malformed keys are refused before anything is made.
  Security bad = status_side;
  bad.server.public_key = "short";
  Context unused;
  CHECK(unused.Secure(bad).code() == Code::kInvalid);
}

// Off the process, a routing id is only the peer's word: it names no one.
TEST_CASE("A peer from off the process cannot name itself with its routing id") {
  Context ctx;
  const std::string endpoint = "tcp://127.0.0.1:17934";
  RpcServer server(ctx, endpoint, 1, WhoAsked);
  REQUIRE(server.Start().ok());
  Context other;
  zmq::socket_t raw(NativeContext(other), zmq::socket_type::dealer);
  raw.set(zmq::sockopt::linger, 0);
  raw.set(zmq::sockopt::routing_id, "admission#1");
  raw.connect(endpoint);
  flatbuffers::FlatBufferBuilder fbb;
  auto req = msg::CreateReadRequest(fbb, fbb.CreateString("k"), 0, false, 1);
  raw.send(zmq::message_t(), zmq::send_flags::sndmore);
  raw.send(FinishMessage(fbb, msg::Body::ReadRequest, req.Union(), 1), zmq::send_flags::none);
  REQUIRE(WaitReadable(raw, 2s));
  std::vector<zmq::message_t> reply = ReceiveParts(raw);
  REQUIRE(reply.size() == 2);
  Result<Frame> frame = VerifyFrame(std::move(reply[1]));
  REQUIRE(frame.ok());
  CHECK(frame->envelope().body_as_ReadReply()->continue_token()->str().empty());
}

// A push/pull channel told who sends on it drops everyone else's frames.
TEST_CASE("A secured Puller takes frames only from the identities that send on its channel") {
  auto server_keys = GenerateCurveKeys();
  auto scheduling_keys = GenerateCurveKeys();
  auto admin_keys = GenerateCurveKeys();
  REQUIRE((server_keys.ok() && scheduling_keys.ok() && admin_keys.ok()));
  Security served;
  served.server = *server_keys;
  served.peers[scheduling_keys->public_key] = "scheduling";
  served.peers[admin_keys->public_key] = "admin";
  Context ctx;
  REQUIRE(ctx.Secure(served).ok());
  const std::string endpoint = "tcp://127.0.0.1:17935";
  Puller puller(ctx, endpoint, {"scheduling"});
  REQUIRE(puller.Bind().ok());

  auto push_as = [&](const std::string& name, const CurveKeys& keys, Context& pushing) {
    REQUIRE(pushing.Secure(SpeakingAs(name, keys, *server_keys)).ok());
    Pusher pusher(pushing, endpoint);
    flatbuffers::FlatBufferBuilder fbb;
    auto req = msg::CreateReadRequest(fbb, fbb.CreateString(name));
    REQUIRE(pusher.Push(FinishFrame(fbb, msg::Body::ReadRequest, req.Union())).ok());
  };
  Context admin_ctx, scheduling_ctx;
  push_as("admin", *admin_keys, admin_ctx);
  push_as("scheduling", *scheduling_keys, scheduling_ctx);
  Result<Frame> first = puller.Pull(3s);
  REQUIRE(first.ok());
  CHECK(first->envelope().body_as_ReadRequest()->key()->str() == "scheduling");
  CHECK_FALSE(puller.Pull(300ms).ok());
}

TEST_CASE("A malformed request is dropped and the server keeps serving") {
  Context ctx;
  RpcServer server(ctx, "inproc://bus-test-bad", 1, EchoRead);
  REQUIRE(server.Start().ok());
  {
    zmq::socket_t raw(NativeContext(ctx), zmq::socket_type::dealer);
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
  Context ctx;
  RpcClient client(ctx, "inproc://bus-test-nobody");
  auto reply = Read(client, "k", 1, 50ms);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == Code::kUnavailable);
}

TEST_CASE("Push/pull delivers verified frames in order and skips garbage") {
  Context ctx;
  Puller puller(ctx, "inproc://bus-test-pull");
  REQUIRE(puller.Bind().ok());
  Pusher pusher(ctx, "inproc://bus-test-pull");
  {
    zmq::socket_t raw(NativeContext(ctx), zmq::socket_type::push);
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

namespace podflow::bus {
namespace {

using namespace std::chrono_literals;

// A source that counts from 0 to `end` (exclusive), one frame per number,
// the last one ending the stream; `available` says how far it may go now.
class CountingSource final : public StreamSource {
 public:
  CountingSource(int end, std::atomic<int>* available) : end_(end), available_(available) {}
  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override {
    if (next_ >= end_ || next_ >= available_->load()) return {};
    auto d = msg::CreateDecision(fbb, 0, 0, next_);
    ++next_;
    return {{msg::Body::Decision, d.Union()}, next_ == end_};
  }
  bool Behind() const override { return next_ < std::min(end_, available_->load()); }

 private:
  const int end_;
  std::atomic<int>* available_;
  int next_ = 0;
};

struct StreamFixture {
  Context ctx;
  std::atomic<int> available{0};
  std::atomic<int> opened{0};
  std::unique_ptr<StreamServer> server;

  explicit StreamFixture(const std::string& endpoint, int end = 1000) {
    server = std::make_unique<StreamServer>(ctx, endpoint, [this, end](const msg::Envelope& open) {
      ++opened;
      CHECK(open.body_type() == msg::Body::ReadRequest);
      return std::make_unique<CountingSource>(end, &available);
    });
    REQUIRE(server->Start().ok());
  }
};

std::unique_ptr<StreamClient> OpenCounting(Context& ctx, const std::string& endpoint, uint32_t credits) {
  auto client = StreamClient::Open(ctx, endpoint, credits, [](flatbuffers::FlatBufferBuilder& fbb, uint64_t) {
    return ReplyBody{msg::Body::ReadRequest, msg::CreateReadRequest(fbb).Union()};
  });
  REQUIRE(client.ok());
  return std::move(*client);
}

// The numbers the stream delivers within `wait` of silence.
std::vector<int64_t> Drain(StreamClient& client, std::chrono::milliseconds wait = 300ms) {
  std::vector<int64_t> got;
  while (true) {
    auto frame = client.Next(wait);
    REQUIRE(frame.ok());
    if (!frame->has_value()) return got;
    const msg::Decision* d = (*frame)->envelope().body_as_Decision();
    REQUIRE(d != nullptr);
    CHECK((*frame)->envelope().id() == client.id());
    got.push_back(d->pod_mod_revision());
  }
}

TEST_CASE("A stream sends no more frames than the client has credits for") {
  StreamFixture f("inproc://bus-test-stream-credits");
  f.available = 1000;
  // A raw client that opens with 8 credits and grants none: the server stops
  // at 8 frames, however much its source has.
  zmq::socket_t raw(NativeContext(f.ctx), zmq::socket_type::dealer);
  raw.connect("inproc://bus-test-stream-credits");
  flatbuffers::FlatBufferBuilder fbb;
  raw.send(FinishMessage(fbb, msg::Body::ReadRequest, msg::CreateReadRequest(fbb).Union(), 7, 8),
           zmq::send_flags::none);
  std::this_thread::sleep_for(300ms);
  std::vector<int64_t> got;
  zmq::message_t message;
  while (raw.recv(message, zmq::recv_flags::dontwait)) {
    auto frame = VerifyFrame(std::move(message));
    REQUIRE(frame.ok());
    CHECK(frame->envelope().id() == 7);
    got.push_back(frame->envelope().body_as_Decision()->pod_mod_revision());
  }
  CHECK(got == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // Granting 5 more brings exactly 5 more.
  fbb.Clear();
  raw.send(FinishMessage(fbb, msg::Body::StreamCredit, msg::CreateStreamCredit(fbb, 5).Union(), 7),
           zmq::send_flags::none);
  std::this_thread::sleep_for(300ms);
  int more = 0;
  while (raw.recv(message, zmq::recv_flags::dontwait)) ++more;
  CHECK(more == 5);
}

TEST_CASE("A stream client grants credits as it consumes: everything arrives once, in order") {
  StreamFixture f("inproc://bus-test-stream-order");
  f.available = 1000;
  auto client = OpenCounting(f.ctx, "inproc://bus-test-stream-order", 8);
  std::vector<int64_t> got = Drain(*client);
  REQUIRE(got.size() == 1000);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<int64_t>(i));
}

TEST_CASE("A stream follows its source when woken, and ends with its last frame") {
  StreamFixture f("inproc://bus-test-stream-wake", 30);
  auto client = OpenCounting(f.ctx, "inproc://bus-test-stream-wake", 64);
  CHECK(Drain(*client, 150ms).empty());
  f.available = 10;
  f.server->Wake();
  CHECK(Drain(*client).size() == 10);
  f.available = 30;
  f.server->Wake();
  CHECK(Drain(*client).size() == 20);
  // The last frame ended the stream on the server's side.
  for (int i = 0; i < 50 && f.server->open_streams() > 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(f.server->open_streams() == 0);
  CHECK(f.opened == 1);
}

TEST_CASE("A cancelled stream is dropped; garbage on the stream channel is ignored") {
  StreamFixture f("inproc://bus-test-stream-cancel");
  {
    zmq::socket_t raw(NativeContext(f.ctx), zmq::socket_type::dealer);
    raw.connect("inproc://bus-test-stream-cancel");
    raw.send(zmq::str_buffer("not a frame"), zmq::send_flags::none);
    raw.send(zmq::str_buffer("two"), zmq::send_flags::sndmore);
    raw.send(zmq::str_buffer("parts"), zmq::send_flags::none);
  }
  {
    auto client = OpenCounting(f.ctx, "inproc://bus-test-stream-cancel", 16);
    for (int i = 0; i < 50 && f.server->open_streams() == 0; ++i) std::this_thread::sleep_for(10ms);
    CHECK(f.server->open_streams() == 1);
  }  // the destructor cancels
  f.server->Wake();
  for (int i = 0; i < 50 && f.server->open_streams() > 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(f.server->open_streams() == 0);
  CHECK(f.opened == 1);
  // Still serving.
  f.available = 3;
  auto client = OpenCounting(f.ctx, "inproc://bus-test-stream-cancel", 16);
  CHECK(Drain(*client).size() == 3);
}

TEST_CASE("A stream client refuses fewer than 2 credits") {
  Context ctx;
  auto client = StreamClient::Open(ctx, "inproc://bus-test-nobody", 1, [](flatbuffers::FlatBufferBuilder& fbb, uint64_t) {
    return ReplyBody{msg::Body::ReadRequest, msg::CreateReadRequest(fbb).Union()};
  });
  CHECK(client.status().code() == Code::kInvalid);
}

}  // namespace
}  // namespace podflow::bus
