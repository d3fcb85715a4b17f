#include "model/quantity.h"

#include <catch2/catch.hpp>

namespace podflow::model {
namespace {

struct Case {
  const char* in;
  const char* canonical;
  int64_t value;  // Value(): whole units, rounded up
  int64_t milli;  // MilliValue()
};

TEST_CASE("Quantity parses as Kubernetes does and prints its canonical form") {
  const Case cases[] = {
      {"500m", "500m", 1, 500},
      {"0.5", "500m", 1, 500},
      {".5", "500m", 1, 500},
      {"2", "2", 2, 2000},
      {"1000m", "1", 1, 1000},
      {"1.5", "1500m", 2, 1500},
      {"0.1", "100m", 1, 100},
      {"1Gi", "1Gi", 1073741824, 1073741824000},
      {"1.5Gi", "1536Mi", 1610612736, 1610612736000},
      {"1024Mi", "1Gi", 1073741824, 1073741824000},
      {"100Mi", "100Mi", 104857600, 104857600000},
      {"1000Ki", "1000Ki", 1024000, 1024000000},
      {"0.5Ki", "512", 512, 512000},
      {"1.5Ki", "1536", 1536, 1536000},
      {"1G", "1G", 1000000000, 1000000000000},
      {"1000M", "1G", 1000000000, 1000000000000},
      {"128974848", "128974848", 128974848, 128974848000},
      {"129e6", "129e6", 129000000, 129000000000},
      {"129M", "129M", 129000000, 129000000000},
      {"1e3", "1e3", 1000, 1000000},
      {"12e-3", "12e-3", 1, 12},
      {"1k", "1k", 1000, 1000000},
      {"-1", "-1", -1, -1000},
      {"+3", "3", 3, 3000},
      {"1n", "1n", 1, 1},
      {"0.0000000001", "1n", 1, 1},  // below nano precision rounds up
      {"100u", "100u", 1, 1},
      {"0", "0", 0, 0},
      {"0Gi", "0", 0, 0},
      {"5.", "5", 5, 5000},
  };
  for (const Case& c : cases) {
    INFO("input " << c.in);
    auto q = Quantity::Parse(c.in);
    REQUIRE(q.ok());
    CHECK(q->ToString() == c.canonical);
    CHECK(q->Value() == c.value);
    CHECK(q->MilliValue() == c.milli);
    // Canonical text parses back to the same quantity.
    auto again = Quantity::Parse(q->ToString());
    REQUIRE(again.ok());
    CHECK(*again == *q);
    CHECK(again->ToString() == c.canonical);
  }
}

TEST_CASE("Quantity rejects what Kubernetes rejects, saying why") {
  for (const char* bad : {"", "abc", "1.2.3", "1Gb", "Mi", "1 Gi", "--1", "1e", ".", "1KiB",
                          "0x10", "1,5", "1e1000"}) {
    INFO("input '" << bad << "'");
    auto q = Quantity::Parse(bad);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == Code::kInvalid);
    CHECK(q.status().message().find("quantity \"" + std::string(bad) + "\"") == 0);
  }
}

TEST_CASE("Quantities compare by value, not by spelling") {
  CHECK(*Quantity::Parse("1Gi") == *Quantity::Parse("1073741824"));
  CHECK(*Quantity::Parse("500m") < *Quantity::Parse("1"));
  CHECK(*Quantity::Parse("1k") == *Quantity::Parse("1e3"));
  CHECK(Quantity::FromMilli(250).ToString() == "250m");
  CHECK(Quantity::FromUnits(2048, Quantity::Format::kBinarySI).ToString() == "2Ki");
}

}  // namespace
}  // namespace podflow::model
