// Channel messages: every frame is an Envelope the Verifier checks before use.
#include <catch2/catch.hpp>

#include "messages_generated.h"

namespace podflow::msg {
namespace {

std::string BuildWrite() {
  flatbuffers::FlatBufferBuilder fbb;
  auto value = fbb.CreateVector(std::vector<uint8_t>{1, 2, 3});
  auto key = fbb.CreateString("/registry/pods/default/nginx");
  auto op_off = CreateWriteOp(fbb, WriteOpType::Put, key, value, flatbuffers::Optional<int64_t>(0), 0);
  auto ops = fbb.CreateVector(std::vector<flatbuffers::Offset<WriteOp>>{op_off});
  auto req = CreateWriteRequest(fbb, ops);
  fbb.Finish(CreateEnvelope(fbb, Body::WriteRequest, req.Union()));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

bool Verifies(const std::string& frame) {
  flatbuffers::Verifier v(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
  return VerifyEnvelopeBuffer(v);
}

TEST_CASE("A write request survives the trip through bytes") {
  std::string frame = BuildWrite();
  REQUIRE(Verifies(frame));
  const Envelope* env = GetEnvelope(frame.data());
  REQUIRE(env->body_type() == Body::WriteRequest);
  const WriteRequest* req = env->body_as_WriteRequest();
  REQUIRE(req->ops()->size() == 1);
  const WriteOp* op = req->ops()->Get(0);
  CHECK(op->key()->str() == "/registry/pods/default/nginx");
  REQUIRE(op->guard_mod_revision().has_value());
  CHECK(*op->guard_mod_revision() == 0);
}

TEST_CASE("The Verifier rejects truncated and garbled frames") {
  std::string frame = BuildWrite();
  CHECK_FALSE(Verifies(frame.substr(0, frame.size() / 2)));
  CHECK_FALSE(Verifies(std::string(3, '\0')));
  std::string garbled = frame;
  // Point the root offset past the end of the buffer.
  garbled[0] = '\xff';
  garbled[1] = '\xff';
  CHECK_FALSE(Verifies(garbled));
}

TEST_CASE("Union tags are the frozen values") {
  CHECK(static_cast<int>(Body::SubmitRequest) == 1);
  CHECK(static_cast<int>(Body::WriteRequest) == 3);
  CHECK(static_cast<int>(Body::WatchResponse) == 10);
  CHECK(static_cast<int>(Body::Report) == 12);
  CHECK(static_cast<int>(Body::ReportBatch) == 22);
}

}  // namespace
}  // namespace podflow::msg
