// libFuzzer target: bytes from any peer, as the bus receives them.
//
// The input is split into the parts of one multipart message (its first
// byte says how many; the rest is cut evenly), sent from a raw DEALER to a
// request/reply server whose handler reads the request as the stages do,
// and then a well-formed call must still be answered: no input may crash
// the process, or leave the one worker dead or hung. Every part is also
// verified in process, and a frame that passes the Verifier is read by the
// decoders the stages use (reports, watch responses, submits).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bus/bus.h"
#include "bus/zmq_internal.h"
#include "client/wire.h"
#include "model/codec.h"
#include "model/report.h"

namespace {

using namespace podflow;
using namespace std::chrono_literals;

// What the stages do with a verified request: decode what it carries.
void ReadAsStagesDo(const msg::Envelope& envelope, std::string_view bytes) {
  switch (envelope.body_type()) {
    case msg::Body::Report:
    case msg::Body::ReportBatch:
      (void)model::DecodeReports(bytes);
      break;
    case msg::Body::WatchResponse:
      (void)client::FromMsg(*envelope.body_as_WatchResponse());
      break;
    case msg::Body::SubmitRequest:
      if (const auto* manifest = envelope.body_as_SubmitRequest()->manifest()) {
        (void)model::DecodeManifests(
            std::string_view(reinterpret_cast<const char*>(manifest->data()), manifest->size()));
      }
      break;
    default:
      break;
  }
}

bus::ReplyBody Handler(const msg::Envelope& request, std::string_view, flatbuffers::FlatBufferBuilder& fbb) {
  const msg::ReadRequest* read = request.body_as_ReadRequest();
  if (read == nullptr) return {};
  return {msg::Body::ReadReply, msg::CreateReadReply(fbb, 0, read->revision()).Union()};
}

struct Server {
  bus::Context context;
  bus::RpcServer server{context, "inproc://fuzz-frames", 1, Handler};
  zmq::socket_t raw{bus::NativeContext(context), zmq::socket_type::dealer};
  bus::RpcClient client{context, "inproc://fuzz-frames"};
  Server() {
    if (!server.Start().ok()) std::abort();
    raw.set(zmq::sockopt::linger, 0);
    raw.connect("inproc://fuzz-frames");
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* s = new Server();  // lives for the process: libFuzzer never returns
  std::vector<std::string> parts;
  if (size > 0) {
    const size_t count = 1 + data[0] % 4;
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    const size_t each = rest.size() / count;
    for (size_t i = 0; i < count; ++i) {
      parts.emplace_back(rest.substr(i * each, i + 1 == count ? std::string_view::npos : each));
    }
  }
  for (const std::string& part : parts) {
    Result<bus::Frame> frame = bus::VerifyFrame(zmq::message_t(part.data(), part.size()));
    if (frame.ok()) ReadAsStagesDo(frame->envelope(), frame->bytes());
  }
  // Over the socket: delimiter, then the parts as sent by any peer. A reply
  // may or may not come (REP drops a message with no body); whatever came
  // for earlier inputs is drained.
  s->raw.send(zmq::message_t(), parts.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
  for (size_t i = 0; i < parts.size(); ++i) {
    s->raw.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  while (bus::WaitReadable(s->raw, 0ms)) (void)bus::ReceiveParts(s->raw);
  // The one worker still answers a well-formed call.
  flatbuffers::FlatBufferBuilder fbb;
  auto read = msg::CreateReadRequest(fbb, fbb.CreateString("k"), 0, false, 7);
  Result<bus::Frame> reply = s->client.Call(fbb, msg::Body::ReadRequest, read.Union(), 5s);
  if (!reply.ok() || reply->envelope().body_as_ReadReply() == nullptr) std::abort();
  return 0;
}
