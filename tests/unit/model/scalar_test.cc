#include "model/scalar.h"

#include <catch2/catch.hpp>

namespace podflow::model {
namespace {

TEST_CASE("Plain scalars resolve by YAML 1.1 rules, as kubectl reads them") {
  struct Case {
    const char* text;
    ScalarKind kind;
  };
  const Case cases[] = {
      {"", ScalarKind::kNull},          {"~", ScalarKind::kNull},
      {"null", ScalarKind::kNull},      {"yes", ScalarKind::kBool},
      {"on", ScalarKind::kBool},        {"False", ScalarKind::kBool},
      {"n", ScalarKind::kBool},         {"80", ScalarKind::kInt},
      {"-12", ScalarKind::kInt},        {"0x1F", ScalarKind::kInt},
      {"1_000", ScalarKind::kInt},      {"1.5", ScalarKind::kFloat},
      {"1e3", ScalarKind::kFloat},      {".inf", ScalarKind::kFloat},
      {"1.0.0", ScalarKind::kString},   {"nginx:1.14.2", ScalarKind::kString},
      {"500m", ScalarKind::kString},    {"1Gi", ScalarKind::kString},
      {"2024-01-02", ScalarKind::kString}, {"yesno", ScalarKind::kString},
  };
  for (const Case& c : cases) {
    INFO("scalar '" << c.text << "'");
    CHECK(ResolvePlainScalar(c.text).kind == c.kind);
  }
  CHECK(ResolvePlainScalar("0x1F").int_value == 31);
  CHECK(ResolvePlainScalar("010").int_value == 8);
  CHECK(ResolvePlainScalar("1_000").int_value == 1000);
  CHECK(ResolvePlainScalar("on").bool_value);
  CHECK_FALSE(ResolvePlainScalar("off").bool_value);
  CHECK(ResolvePlainScalar("99999999999999999999").int_overflow);
}

}  // namespace
}  // namespace podflow::model
