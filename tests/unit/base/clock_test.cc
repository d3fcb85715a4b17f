// base/clock.h: the one RFC 3339 formatter and parser, and Go's durations.
#include "base/clock.h"

#include <catch2/catch.hpp>

namespace podflow {
namespace {

TEST_CASE("Go duration format, as kubelet messages print it") {
  CHECK(FormatGoDuration(SimDuration(0)) == "0s");
  CHECK(FormatGoDuration(SimDuration(500)) == "500ms");
  CHECK(FormatGoDuration(SimDuration(1500)) == "1.5s");
  CHECK(FormatGoDuration(SimDuration(15981)) == "15.981s");
  CHECK(FormatGoDuration(SimDuration(123'250)) == "2m3.25s");
  CHECK(FormatGoDuration(SimDuration(3'600'000)) == "1h0m0s");
  CHECK(FormatRfc3339(FromUnixMillis(1'714'564'800'250)) == "2024-05-01T12:00:00Z");
  CHECK(FormatRfc3339Micro(FromUnixMillis(1'714'564'800'250)) == "2024-05-01T12:00:00.250000Z");
}

TEST_CASE("Go durations read as time.ParseDuration reads them, and what FormatGoDuration writes reads back") {
  CHECK(ParseGoDuration("0") == SimDuration(0));
  CHECK(ParseGoDuration("300ms") == SimDuration(300));
  CHECK(ParseGoDuration("1.5s") == SimDuration(1500));
  CHECK(ParseGoDuration("2m") == SimDuration(120'000));
  CHECK(ParseGoDuration("1h30m") == SimDuration(5'400'000));
  CHECK(ParseGoDuration(".5s") == SimDuration(500));
  for (int64_t ms : {0, 500, 1500, 15981, 123'250, 3'600'000, 90'061'001}) {
    CHECK(ParseGoDuration(FormatGoDuration(SimDuration(ms))) == SimDuration(ms));
  }
  for (const char* bad : {"", "5", "s", "1x", "-1s", "1.s5", "1 s", "99999999999999999999h", "9999999999h"}) {
    INFO(bad);
    CHECK_FALSE(ParseGoDuration(bad).has_value());
  }
}

TEST_CASE("IsRfc3339 checks the shape metav1.Time accepts") {
  CHECK(IsRfc3339("2024-01-02T03:04:05Z"));
  CHECK(IsRfc3339("2024-01-02t03:04:05.5z"));
  CHECK(IsRfc3339("2024-01-02T03:04:05.123456789+02:00"));
  CHECK(IsRfc3339("2024-13-02T03:04:05Z"));  // shape only: fields are not range-checked
  CHECK_FALSE(IsRfc3339("2024-01-02 03:04:05Z"));
  CHECK_FALSE(IsRfc3339("2024-01-02T03:04:05"));
  CHECK_FALSE(IsRfc3339("2024-01-02T03:04:05.Z"));
  CHECK_FALSE(IsRfc3339("2024-01-02T03:04:05+0200"));
  CHECK_FALSE(IsRfc3339(""));
}

TEST_CASE("ParseRfc3339 also takes a space, and rejects out-of-range fields") {
  const auto base = ParseRfc3339("2024-05-01T12:00:00Z");
  REQUIRE(base);
  CHECK(ParseRfc3339("2024-05-01 12:00:00Z") == base);
  CHECK(ParseRfc3339("2024-05-01T10:00:00-02:00") == base);
  CHECK_FALSE(ParseRfc3339("2024-13-01T12:00:00Z"));
  CHECK_FALSE(ParseRfc3339("2024-05-01T24:00:00Z"));
  CHECK(FormatRfc3339(std::chrono::floor<SimDuration>(*base)) == "2024-05-01T12:00:00Z");
}

TEST_CASE("FormatRfc3339 floors a system_clock time to the second") {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1'714'564'800)) +
                 std::chrono::nanoseconds(999'999'999);
  CHECK(FormatRfc3339(t) == "2024-05-01T12:00:00Z");
  CHECK(FormatRfc3339(FromUnixMillis(-1)) == "1969-12-31T23:59:59Z");
}

}  // namespace
}  // namespace podflow
