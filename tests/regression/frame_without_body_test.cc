// Found by the frame fuzzer (tests/fuzz/frame_fuzz.cc): the FlatBuffers
// Verifier accepts an Envelope whose body_type names a table while the body
// itself is absent, and VerifyFrame passed it on. A reader that trusted the
// type (`switch (body_type()) ... *body_as_SubmitRequest()`) dereferenced
// null. VerifyFrame now refuses a frame without its body.
#include <catch2/catch.hpp>

#include "bus/bus.h"
#include "bus/zmq_internal.h"

namespace podflow::bus {
namespace {

TEST_CASE("frames: a body type without its body is refused by VerifyFrame") {
  flatbuffers::FlatBufferBuilder fbb;
  msg::EnvelopeBuilder envelope(fbb);
  envelope.add_body_type(msg::Body::SubmitRequest);  // and no body
  envelope.add_id(1);
  msg::FinishEnvelopeBuffer(fbb, envelope.Finish());
  {
    flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
    REQUIRE(msg::VerifyEnvelopeBuffer(verifier));  // what made it dangerous
  }
  Result<Frame> frame = VerifyFrame(zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize()));
  REQUIRE_FALSE(frame.ok());
  CHECK(frame.status().message() == "frame has no body");

  // The same envelope with its body passes.
  flatbuffers::FlatBufferBuilder ok;
  auto submit = msg::CreateSubmitRequest(ok, ok.CreateString("t"));
  std::string bytes = FinishFrame(ok, msg::Body::SubmitRequest, submit.Union(), 1);
  Result<Frame> good = VerifyFrame(zmq::message_t(bytes.data(), bytes.size()));
  REQUIRE(good.ok());
  CHECK(good->envelope().body_as_SubmitRequest() != nullptr);
}

}  // namespace
}  // namespace podflow::bus
