#include <catch2/catch.hpp>

#include "base/base64.h"

namespace podflow {
namespace {

TEST_CASE("Base64 round-trips bytes of every length") {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    Result<std::string> back = Base64Decode(Base64Encode(bytes));
    REQUIRE(back.ok());
    CHECK(*back == bytes);
    bytes += static_cast<char>(i * 37);
  }
  CHECK(Base64Encode("admin") == "YWRtaW4=");
  CHECK(Base64Encode("t0p-Secret") == "dDBwLVNlY3JldA==");
  CHECK(*Base64Decode("dmFsdWUtMg0KDQo=") == "value-2\r\n\r\n");
  CHECK(*Base64Decode("YWRt\naW4=\n") == "admin");  // line breaks are skipped, as Go does
}

TEST_CASE("Bad base64 is refused where Go's decoder stops") {
  auto where = [](std::string_view text) { return Base64Decode(text).status().message(); };
  CHECK(where("YW*t") == "illegal base64 data at input byte 2");
  CHECK(where("abc") == "illegal base64 data at input byte 0");
  CHECK(where("abcdabc") == "illegal base64 data at input byte 4");
  CHECK(where("=bcd") == "illegal base64 data at input byte 0");
  CHECK(where("ab=c") == "illegal base64 data at input byte 2");
  CHECK(where("ab=") == "illegal base64 data at input byte 3");
  CHECK(where("YQ==YQ==") == "illegal base64 data at input byte 4");
  CHECK(where("not base64!") == "illegal base64 data at input byte 3");
  // Offsets count the line breaks Go skips.
  CHECK(where("YWJj\n!!!!") == "illegal base64 data at input byte 5");
  CHECK(where("YW\r\nJj\nY") == "illegal base64 data at input byte 7");
}

}  // namespace
}  // namespace podflow
