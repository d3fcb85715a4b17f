// Time as podflow passes it around, and the text forms Kubernetes gives it.
//
// Logic never reads a clock: callers pass "now" in as a SimTime (Unix
// milliseconds on the system clock's epoch), so tests drive time by hand.
// Only the stages' loops call WallClockNow().
//
// RFC 3339 is formatted and parsed here and nowhere else:
//  - FormatRfc3339 / FormatRfc3339Micro write UTC with a 'Z', as
//    metav1.Time / metav1.MicroTime serialize;
//  - IsRfc3339 is the shape check the manifest codec applies to time fields;
//  - ParseRfc3339 reads a time the way kubectl's printers need it.
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podflow {

using SimDuration = std::chrono::milliseconds;
using SimTime = std::chrono::sys_time<SimDuration>;

inline SimTime FromUnixMillis(int64_t ms) { return SimTime(SimDuration(ms)); }
inline int64_t ToUnixMillis(SimTime t) { return t.time_since_epoch().count(); }

// The system clock as a SimTime (sub-millisecond parts truncated).
inline SimTime WallClockNow() {
  return std::chrono::time_point_cast<SimDuration>(std::chrono::system_clock::now());
}

// "2024-05-01T12:00:00Z": UTC at second precision; sub-second parts are
// dropped (floored).
std::string FormatRfc3339(SimTime t);
// The same for a system_clock time (floored to the millisecond first, which
// prints the same second).
inline std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  return FormatRfc3339(std::chrono::floor<SimDuration>(t));
}

// "2024-05-01T12:00:00.250000Z": UTC with microseconds, as metav1.MicroTime.
std::string FormatRfc3339Micro(SimTime t);
// "2024-05-01T12:00:00.250000000Z": UTC with nine fraction digits, as the
// container runtime stamps each line of a container's log.
std::string FormatRfc3339Nano(std::chrono::system_clock::time_point t);

// A duration as Go's time.Duration.String() prints it (kubelet messages
// contain these): "0s", "500ms", "1.5s", "2m3.25s", "1h0m0s".
std::string FormatGoDuration(SimDuration d);

// A non-negative duration as Go's time.ParseDuration reads one, to the
// millisecond: "0", "300ms", "1.5s", "2m", "1h30m" (units h, m, s, ms;
// a sequence of them adds up). nullopt when `text` is not such a duration.
std::optional<SimDuration> ParseGoDuration(std::string_view text);

// True when `text` has the RFC 3339 shape metav1.Time accepts:
// "2024-01-02T03:04:05Z", 'T' or 't' between date and time, an optional
// fraction, then 'Z', 'z' or a numeric offset "+hh:mm". Only the shape is
// checked: digits are not range-checked.
bool IsRfc3339(std::string_view text);

// The time `text` names, or nullopt when it is empty or malformed. Accepts
// the shape IsRfc3339 does and also a space between date and time; unlike
// IsRfc3339 it rejects out-of-range fields (month 13, hour 24, ...).
// Fractions are kept to the nanosecond; offsets are applied.
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace podflow
