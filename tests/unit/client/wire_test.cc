// The wire form of the api channel keeps what it carries.
#include "client/wire.h"

#include <catch2/catch.hpp>

namespace podflow::client {
namespace {

TEST_CASE("Every error code crosses the bus as itself, with its message") {
  for (int c = static_cast<int>(Code::kInvalid); c <= static_cast<int>(Code::kInternal); ++c) {
    const Status sent(static_cast<Code>(c), "what went wrong: " + std::to_string(c));
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(ErrorStatus(fbb, sent));
    const Status received = FromMsg(flatbuffers::GetRoot<msg::ApiStatus>(fbb.GetBufferPointer()));
    INFO(CodeName(sent.code()));
    CHECK(received.code() == sent.code());
    CHECK(received.message() == sent.message());
  }
}

TEST_CASE("An error without an exact code is read from its reason") {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(msg::CreateApiStatus(fbb, fbb.CreateString("Failure"), 409, fbb.CreateString("AlreadyExists"),
                                  fbb.CreateString("exists")));
  const Status received = FromMsg(flatbuffers::GetRoot<msg::ApiStatus>(fbb.GetBufferPointer()));
  CHECK(received.code() == Code::kAlreadyExists);
  CHECK(FromMsg(nullptr).ok());
}

}  // namespace
}  // namespace podflow::client
