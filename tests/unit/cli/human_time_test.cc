#include "cli/human_time.h"

#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>

#include "cli/tabwriter.h"

namespace podflow::cli {
namespace {

using std::chrono::seconds;

TEST_CASE("HumanDuration follows apimachinery's duration.HumanDuration", "[cli][time]") {
  struct Case {
    int64_t seconds;
    const char* want;
  };
  const int64_t m = 60, h = 3600, d = 86400, y = 365 * d;
  const Case cases[] = {
      {-5, "<invalid>"}, {-1, "0s"},        {0, "0s"},          {1, "1s"},
      {45, "45s"},       {119, "119s"},     {120, "2m"},        {125, "2m5s"},
      {9 * m + 59, "9m59s"}, {10 * m, "10m"}, {10 * m + 30, "10m"}, {179 * m, "179m"},
      {3 * h, "3h"},     {3 * h + 4 * m, "3h4m"}, {7 * h + 59 * m, "7h59m"}, {8 * h, "8h"},
      {47 * h, "47h"},   {2 * d, "2d"},     {2 * d + 3 * h, "2d3h"}, {7 * d + 23 * h, "7d23h"},
      {8 * d, "8d"},     {400 * d, "400d"}, {2 * y, "2y"},      {2 * y + 10 * d, "2y10d"},
      {8 * y, "8y"},     {20 * y, "20y"},
  };
  for (const Case& c : cases) {
    INFO(c.seconds);
    CHECK(HumanDuration(seconds(c.seconds)) == c.want);
  }
}

TEST_CASE("ParseRfc3339 reads RFC 3339 with fractions and offsets", "[cli][time]") {
  auto base = ParseRfc3339("2025-01-14T12:00:00Z");
  REQUIRE(base);
  CHECK(ParseRfc3339("2025-01-14T13:00:00+01:00") == base);
  CHECK(ParseRfc3339("2025-01-14T11:59:59.5Z").value() < *base);
  CHECK(ParseRfc3339("2025-01-14T12:00:05.123456Z").value() - *base > seconds(5));
  CHECK_FALSE(ParseRfc3339(""));
  CHECK_FALSE(ParseRfc3339("yesterday"));
  CHECK_FALSE(ParseRfc3339("2025-01-14T12:00:00"));
  CHECK(TimestampSince("", *base) == "<unknown>");
  CHECK(TimestampSince("2025-01-14T11:57:55Z", *base) == "2m5s");
}

TEST_CASE("FormatRfc1123Z prints Go's RFC1123Z", "[cli][time]") {
  setenv("TZ", "UTC", 1);
  tzset();
  CHECK(FormatRfc1123Z("2025-01-14T10:00:00Z") == "Tue, 14 Jan 2025 10:00:00 +0000");
}

TEST_CASE("TabWriter aligns as Go's text/tabwriter", "[cli][tabwriter]") {
  SECTION("kubectl get: min width 6, padding 3, last cell unpadded") {
    TabWriter w(6, 3);
    w.Write("NAME\tREADY\tSTATUS\n");
    w.Write("a\t1/1\tRunning\n");
    CHECK(w.String() ==
          "NAME   READY   STATUS\n"
          "a      1/1     Running\n");
  }
  SECTION("a line without a cell in a column ends that column's block") {
    TabWriter w(0, 2);
    w.Write("Name:\tnginx\nService Account:\tdefault\nIPs:\n  IP:\t10.0.0.1\nQoS:\tBestEffort\n");
    CHECK(w.String() ==
          "Name:             nginx\n"
          "Service Account:  default\n"
          "IPs:\n"
          "  IP:  10.0.0.1\n"
          "QoS:   BestEffort\n");
  }
  SECTION("nested columns are computed per block") {
    TabWriter w(0, 2);
    w.Write("a\tbb\tc\naaaa\tb\tc\n\tx\n");
    CHECK(w.String() ==
          "a     bb  c\n"
          "aaaa  b   c\n"
          "      x\n");
  }
  SECTION("Flush starts new blocks") {
    TabWriter w(0, 2);
    w.Write("long label:\tv\n");
    w.Flush();
    w.Write("a:\tv\n");
    CHECK(w.String() == "long label:  v\na:  v\n");
  }
}

}  // namespace
}  // namespace podflow::cli
