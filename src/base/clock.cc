#include "base/clock.h"

#include <cstdio>

namespace podflow {
namespace {

// `t` in UTC with `digits` (0, 6 or 9) fraction digits, floored.
std::string FormatWithFraction(std::chrono::sys_time<std::chrono::nanoseconds> t, int digits) {
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
  const long long nanos = static_cast<long long>(hms.subseconds().count());
  if (digits == 6) n += std::snprintf(buf + n, sizeof(buf) - n, ".%06lld", nanos / 1000);
  if (digits == 9) n += std::snprintf(buf + n, sizeof(buf) - n, ".%09lld", nanos);
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

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The fields of an RFC 3339 text, as written (not range-checked).
struct Fields {
  int year, month, day, hour, minute, second;
  int64_t nanos = 0;
  int64_t offset_seconds = 0;
};

// Reads the RFC 3339 shape; `separators` are the characters accepted
// between date and time. nullopt when the text has another shape.
std::optional<Fields> Scan(std::string_view s, std::string_view separators) {
  Fields f;
  if (!Digits(s, 0, 4, &f.year) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &f.month) ||
      s[7] != '-' || !Digits(s, 8, 2, &f.day) || separators.find(s[10]) == std::string_view::npos ||
      !Digits(s, 11, 2, &f.hour) || s[13] != ':' || !Digits(s, 14, 2, &f.minute) || s[16] != ':' ||
      !Digits(s, 17, 2, &f.second)) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000;
    const size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      f.nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return std::nullopt;
    }
    f.offset_seconds = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  return f;
}

}  // namespace

std::string FormatRfc3339(SimTime t) { return FormatWithFraction(t, 0); }
std::string FormatRfc3339Micro(SimTime t) { return FormatWithFraction(t, 6); }
std::string FormatRfc3339Nano(std::chrono::system_clock::time_point t) {
  return FormatWithFraction(std::chrono::time_point_cast<std::chrono::nanoseconds>(t), 9);
}

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

std::optional<SimDuration> ParseGoDuration(std::string_view text) {
  if (text == "0") return SimDuration(0);
  if (text.empty()) return std::nullopt;
  // Each part in microseconds first, so that "1.5ms" is not lost to rounding.
  constexpr int64_t kMax = int64_t{1} << 53;  // far beyond any timeout
  int64_t total_us = 0;
  size_t i = 0;
  while (i < text.size()) {
    int64_t whole = 0;
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (whole > kMax) return std::nullopt;
      whole = whole * 10 + (text[i++] - '0');
    }
    int64_t frac = 0;
    int64_t frac_scale = 1;
    const bool digits = i > start;
    bool frac_digits = false;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (frac_scale < 1'000'000) {
          frac = frac * 10 + (text[i] - '0');
          frac_scale *= 10;
        }
        ++i;
        frac_digits = true;
      }
    }
    if (!digits && !frac_digits) return std::nullopt;
    int64_t unit_us = 0;
    if (text.substr(i, 2) == "ms") {
      unit_us = 1000;
      i += 2;
    } else if (i < text.size() && (text[i] == 'h' || text[i] == 'm' || text[i] == 's')) {
      unit_us = text[i] == 'h' ? 3'600'000'000 : text[i] == 'm' ? 60'000'000 : 1'000'000;
      ++i;
    } else {
      return std::nullopt;  // a number needs its unit
    }
    if (whole > kMax / unit_us) return std::nullopt;
    total_us += whole * unit_us + frac * unit_us / frac_scale;
    if (total_us > kMax) return std::nullopt;
  }
  return SimDuration(total_us / 1000);
}

bool IsRfc3339(std::string_view text) { return Scan(text, "Tt").has_value(); }

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  std::optional<Fields> f = Scan(text, "Tt ");
  if (!f) return std::nullopt;
  if (f->month < 1 || f->month > 12 || f->day < 1 || f->day > 31 || f->hour > 23 ||
      f->minute > 59 || f->second > 60) {
    return std::nullopt;
  }
  const int64_t seconds = DaysFromCivil(f->year, f->month, f->day) * 86400 + f->hour * 3600 +
                          f->minute * 60 + f->second - f->offset_seconds;
  using TimePoint = std::chrono::system_clock::time_point;
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::seconds(seconds) + std::chrono::nanoseconds(f->nanos)));
}

}  // namespace podflow
