#include "stages/runtime/sim_time.h"

#include <cstdio>

namespace podflow::runtime {
namespace {

std::string FormatWithFraction(SimTime t, bool micro) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss hms(t - day);
  char buf[48];
  int n =
      std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                    static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                    static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                    static_cast<int>(hms.seconds().count()));
  if (micro) {
    n += std::snprintf(buf + n, sizeof(buf) - n, ".%06lld",
                       static_cast<long long>(hms.subseconds().count()) * 1000);
  }
  std::snprintf(buf + n, sizeof(buf) - n, "Z");
  return buf;
}

// Go prints fractional seconds with trailing zeros removed: 1.500s -> "1.5s".
std::string TrimmedFraction(int64_t millis) {
  if (millis == 0) return "";
  char buf[8];
  std::snprintf(buf, sizeof(buf), ".%03lld", static_cast<long long>(millis));
  std::string s(buf);
  while (s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

std::string FormatTime(SimTime t) { return FormatWithFraction(t, /*micro=*/false); }
std::string FormatMicroTime(SimTime t) { return FormatWithFraction(t, /*micro=*/true); }

std::string FormatGoDuration(SimDuration d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  if (ms < 0) ms = -ms;
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  const int64_t hours = ms / 3'600'000;
  const int64_t minutes = ms / 60'000 % 60;
  const int64_t seconds = ms / 1000 % 60;
  const std::string secs = std::to_string(seconds) + TrimmedFraction(ms % 1000) + "s";
  if (hours > 0) return sign + std::to_string(hours) + "h" + std::to_string(minutes) + "m" + secs;
  if (minutes > 0) return sign + std::to_string(minutes) + "m" + secs;
  return sign + secs;
}

}  // namespace podflow::runtime
