// Times as kubectl shows them: the human duration of AGE / LAST SEEN
// columns (k8s.io/apimachinery/pkg/util/duration) and the RFC 1123Z stamps
// of `describe`. RFC 3339 parsing is base/clock.h's ParseRfc3339.
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace podflow::cli {

using TimePoint = std::chrono::system_clock::time_point;

// duration.HumanDuration: "45s", "119s", "2m5s", "10m", "3h4m", "20h",
// "2d3h", "30d", "2y10d", "9y"; "0s" for a clock skew of one second,
// "<invalid>" for a time further in the future.
std::string HumanDuration(std::chrono::nanoseconds d);

// kubectl's translateTimestampSince: "<unknown>" when `timestamp` is empty
// or not a time, else HumanDuration(now - timestamp).
std::string TimestampSince(std::string_view timestamp, TimePoint now);

// Go's time.RFC1123Z in the local time zone, as kubectl describe prints
// times: "Tue, 14 Jan 2025 10:00:00 +0000". Empty text gives Go's zero time.
std::string FormatRfc1123Z(std::string_view timestamp);

}  // namespace podflow::cli
