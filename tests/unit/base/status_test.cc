#include "base/result.h"
#include "base/status.h"
#include "base/types.h"

#include <catch2/catch.hpp>

namespace podflow {
namespace {

Result<int> Half(int v) {
  if (v % 2 != 0) return Status::Invalid("odd: " + std::to_string(v));
  return v / 2;
}

TEST_CASE("Status carries its code and message") {
  Status ok;
  CHECK(ok.ok());
  CHECK(ok.ToString() == "OK");
  Status bad = Status::Compacted("required revision has been compacted");
  CHECK_FALSE(bad.ok());
  CHECK(bad.code() == Code::kCompacted);
  CHECK(bad.ToString() == "Compacted: required revision has been compacted");
}

TEST_CASE("Result holds a value or a failed status") {
  auto good = Half(8);
  REQUIRE(good.ok());
  CHECK(*good == 4);
  auto bad = Half(3);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kInvalid);
  CHECK(bad.status().message() == "odd: 3");
}

TEST_CASE("Revisions compare as revisions") {
  CHECK(Revision(3) < Revision(4));
  CHECK(Revision(7) == Revision(7));
  CHECK(Revision().value() == 0);
}

}  // namespace
}  // namespace podflow
