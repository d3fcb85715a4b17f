#include "model/cron_schedule.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <vector>

#include "model/field_error.h"

namespace podflow::model {
namespace {

struct CronField {
  int lo;
  int hi;
  std::vector<std::string_view> names;  // names for lo, lo+1, ... (months, weekdays)
};

const CronField kFields[5] = {
    {0, 59, {}},
    {0, 23, {}},
    {1, 31, {}},
    {1, 12, {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
    {0, 6, {"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
};

bool CronValue(std::string_view s, const CronField& f, int& out) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t i = 0; i < f.names.size(); ++i) {
    if (lower == f.names[i]) {
      out = f.lo + static_cast<int>(i);
      return true;
    }
  }
  if (s.empty() || s.size() > 4) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

std::string NotInt(std::string_view s) {
  return "failed to parse int from " + std::string(s) + ": strconv.Atoi: parsing " + GoQuote(s) +
         ": invalid syntax";
}

// One field: a comma list of `*`, `?`, N, N-M, each with an optional /STEP
// (N/STEP runs to the field's maximum), as bits; `star` for `*` and `?`.
Result<uint64_t> ParseField(std::string_view text, const CronField& f, uint64_t star) {
  uint64_t bits = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    std::string_view part = text.substr(start, i - start);
    start = i + 1;
    std::string_view range = part;
    int step = 1;
    const bool stepped = part.find('/') != std::string_view::npos;
    if (stepped) {
      const size_t slash = part.find('/');
      range = part.substr(0, slash);
      if (!CronValue(part.substr(slash + 1), CronField{0, 0, {}}, step)) {
        return Status::Invalid(NotInt(part.substr(slash + 1)));
      }
      if (step == 0)
        return Status::Invalid("step of range should be a positive number: " + std::string(part));
    }
    int a = f.lo;
    int b = f.hi;
    uint64_t extra = 0;
    if (range == "*" || range == "?") {
      extra = star;
    } else {
      const size_t dash = range.find('-');
      const std::string_view first = range.substr(0, dash);
      if (!CronValue(first, f, a)) return Status::Invalid(NotInt(first));
      if (dash != std::string_view::npos) {
        if (!CronValue(range.substr(dash + 1), f, b))
          return Status::Invalid(NotInt(range.substr(dash + 1)));
      } else if (!stepped) {
        b = a;
      }
    }
    const std::string expr(part);
    if (a < f.lo) {
      return Status::Invalid("beginning of range (" + std::to_string(a) + ") below minimum (" +
                             std::to_string(f.lo) + "): " + expr);
    }
    if (b > f.hi) {
      return Status::Invalid("end of range (" + std::to_string(b) + ") above maximum (" +
                             std::to_string(f.hi) + "): " + expr);
    }
    if (a > b) {
      return Status::Invalid("beginning of range (" + std::to_string(a) +
                             ") beyond end of range (" + std::to_string(b) + "): " + expr);
    }
    for (int v = a; v <= b; v += step) bits |= uint64_t{1} << v;
    if (step == 1) bits |= extra;  // a stepped `*` is no longer a star
  }
  return bits;
}

// Go's time.ParseDuration grammar: one or more decimal numbers, each with
// an optional fraction and a unit (ns, us, µs, ms, s, m, h).
bool IsGoDuration(std::string_view d) {
  if (d == "0") return true;
  if (d.empty()) return false;
  size_t i = 0;
  while (i < d.size()) {
    const size_t digits = i;
    while (i < d.size() && ((d[i] >= '0' && d[i] <= '9') || d[i] == '.')) ++i;
    if (i == digits) return false;
    bool unit = false;
    for (std::string_view u : {"ns", "us", "\u00b5s", "ms", "s", "m", "h"}) {
      if (d.substr(i).starts_with(u) && !(u == "m" && d.substr(i).starts_with("ms"))) {
        i += u.size();
        unit = true;
        break;
      }
    }
    if (!unit) return false;
  }
  return true;
}

bool Has(uint64_t bits, unsigned v) { return (bits >> v) & 1U; }

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  CronSchedule out;
  if (text.starts_with("@")) {
    static constexpr std::pair<std::string_view, std::string_view> kDescriptors[] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
    };
    for (const auto& [name, expression] : kDescriptors) {
      if (text == name) return Parse(expression);
    }
    if (text.starts_with("@every ")) {
      const std::string_view d = text.substr(7);
      if (!IsGoDuration(d)) {
        return Status::Invalid("failed to parse duration " + std::string(text) +
                               ": time: invalid duration " + GoQuote(d));
      }
      // Whole seconds, at least one (robfig's Every); units below the
      // millisecond count as less than a second.
      const SimDuration delay = ParseGoDuration(d).value_or(SimDuration(0));
      out.every_ = std::max(
          std::chrono::duration_cast<SimDuration>(std::chrono::floor<std::chrono::seconds>(delay)),
          SimDuration(1000));
      return out;
    }
    return Status::Invalid("unrecognized descriptor: " + std::string(text));
  }
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  if (fields.size() != 5) {
    std::string listed;
    for (std::string_view f : fields) listed += (listed.empty() ? "" : " ") + std::string(f);
    return Status::Invalid("expected exactly 5 fields, found " + std::to_string(fields.size()) +
                           ": [" + listed + "]");
  }
  uint64_t* slots[5] = {&out.minute_, &out.hour_, &out.dom_, &out.month_, &out.dow_};
  for (size_t f = 0; f < 5; ++f) {
    Result<uint64_t> bits = ParseField(fields[f], kFields[f], kStar);
    if (!bits.ok()) return bits.status();
    *slots[f] = *bits;
  }
  return out;
}

std::optional<SimTime> CronSchedule::Next(SimTime t) const {
  using namespace std::chrono;
  // The next whole second.
  const sys_seconds from = floor<seconds>(t) + seconds(1);
  if (every_) return SimTime(floor<seconds>(t)) + *every_;
  // Field by field, as robfig's SpecSchedule.Next: a field that does not
  // match moves on to its next value, the smaller fields at their start;
  // a field wrapping around starts over from the month.
  sys_days day = floor<days>(from);
  hh_mm_ss<seconds> clock(from - day);
  int hour = static_cast<int>(clock.hours().count());
  int minute = static_cast<int>(clock.minutes().count());
  const bool second_zero = clock.seconds().count() == 0;
  // The first minute at or after `from` whose second is 0.
  if (!second_zero) {
    ++minute;
    if (minute == 60) {
      minute = 0;
      if (++hour == 24) {
        hour = 0;
        day += days(1);
      }
    }
  }
  const year limit = year_month_day(day).year() + years(5);
  auto day_matches = [&](sys_days d) {
    const year_month_day ymd(d);
    const bool dom = Has(dom_, static_cast<unsigned>(ymd.day()));
    const bool dow = Has(dow_, weekday(d).c_encoding());
    if ((dom_ & kStar) != 0 || (dow_ & kStar) != 0) return dom && dow;
    return dom || dow;
  };
  while (year_month_day(day).year() <= limit) {
    const year_month_day ymd(day);
    if (!Has(month_, static_cast<unsigned>(ymd.month()))) {
      day = sys_days(year_month_day(ymd.year(), ymd.month(), std::chrono::day(1)) + months(1));
      hour = minute = 0;
      continue;
    }
    if (!day_matches(day)) {
      day += days(1);
      hour = minute = 0;
      continue;
    }
    while (hour < 24 && !Has(hour_, static_cast<unsigned>(hour))) {
      ++hour;
      minute = 0;
    }
    if (hour == 24) {
      day += days(1);
      hour = minute = 0;
      continue;
    }
    while (minute < 60 && !Has(minute_, static_cast<unsigned>(minute))) ++minute;
    if (minute == 60) {
      minute = 0;
      if (++hour == 24) {
        hour = 0;
        day += days(1);
      }
      continue;
    }
    return SimTime(day + hours(hour) + minutes(minute));
  }
  return std::nullopt;
}

}  // namespace podflow::model
