#include "cli/human_time.h"

#include <cstdio>
#include <ctime>

namespace podflow::cli {

std::string HumanDuration(std::chrono::nanoseconds d) {
  using std::chrono::duration_cast;
  // As Go: int(d.Seconds()) truncates toward zero.
  const int64_t seconds = duration_cast<std::chrono::seconds>(d).count();
  // Up to a second in the future is clock skew between machines: "now".
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    if (s == 0) return std::to_string(minutes) + "m";
    return std::to_string(minutes) + "m" + std::to_string(s) + "s";
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  const int64_t hours = seconds / 3600;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    if (m == 0) return std::to_string(hours) + "h";
    return std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    if (h == 0) return std::to_string(hours / 24) + "d";
    return std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    if (dy == 0) return std::to_string(hours / 24 / 365) + "y";
    return std::to_string(hours / 24 / 365) + "y" + std::to_string(dy) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::string TimestampSince(std::string_view timestamp, TimePoint now) {
  std::optional<TimePoint> t = ParseRfc3339(timestamp);
  if (!t) return "<unknown>";
  return HumanDuration(now - *t);
}

std::string FormatRfc1123Z(std::string_view timestamp) {
  std::optional<TimePoint> t = ParseRfc3339(timestamp);
  if (!t) return "Mon, 01 Jan 0001 00:00:00 +0000";  // Go's zero time
  std::time_t tt = std::chrono::system_clock::to_time_t(*t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S %z", &tm);
  return buf;
}

}  // namespace podflow::cli
