// Simulated time: the runtime never reads a clock; callers pass "now" in.
// Times are Unix milliseconds on the system clock's epoch.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace podflow::runtime {

using SimDuration = std::chrono::milliseconds;
using SimTime = std::chrono::sys_time<SimDuration>;

inline SimTime FromUnixMillis(int64_t ms) { return SimTime(SimDuration(ms)); }
inline int64_t ToUnixMillis(SimTime t) { return t.time_since_epoch().count(); }
// The system clock as a SimTime. Only the stages' loops read it; the logic
// they drive is handed the result.
inline SimTime WallClockNow() {
  return std::chrono::time_point_cast<SimDuration>(std::chrono::system_clock::now());
}

// RFC 3339 in UTC at second precision, as metav1.Time serializes:
// "2024-05-01T12:00:00Z". Sub-second parts are truncated.
std::string FormatTime(SimTime t);

// RFC 3339 with microseconds, as metav1.MicroTime: "2024-05-01T12:00:00.250000Z".
std::string FormatMicroTime(SimTime t);

// A duration as Go's time.Duration.String() prints it, which is what kubelet
// messages contain: "0s", "500ms", "1.5s", "2m3.25s", "1h0m0s".
std::string FormatGoDuration(SimDuration d);

}  // namespace podflow::runtime
