// A container's log file in the container runtime's (CRI) format, as
// kubelet reads it: one record per line,
//   2024-05-01T12:00:00.250000000Z stdout F the line
// (F: a full line; P: part of a longer one, continued by the next record),
// with size-based rotation: past `max_bytes` the file is renamed
// "<file>.<YYYYMMDD-HHMMSS>.<nanoseconds>" and a new one started; at most
// `max_files` files are kept (kubelet's containerLogMaxSize and
// containerLogMaxFiles). Logs are served from the current file only, as
// kubelet serves them.
//
// Thread safety: a writer belongs to one thread; ReadCriLog may run beside it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace podflow::runtime::process {

struct CriLogLimits {
  int64_t max_bytes = 10 * 1024 * 1024;  // kubelet's containerLogMaxSize, 10Mi
  int max_files = 5;                     // containerLogMaxFiles
};

// A record longer than this is split into P records (the runtime's limit).
inline constexpr size_t kCriMaxLine = 16 * 1024;

class CriLogWriter {
 public:
  CriLogWriter(std::string path, CriLogLimits limits);
  ~CriLogWriter();
  CriLogWriter(const CriLogWriter&) = delete;
  CriLogWriter& operator=(const CriLogWriter&) = delete;

  // Opens the file, empty (a run's file is its own, also across a restart of
  // the runtime); Unavailable naming it when it cannot.
  Status Open();
  // What the process wrote on `stream` ("stdout" or "stderr") at `at`:
  // complete lines are written at once, a trailing part is kept for the next
  // write (or Flush).
  void Write(std::string_view stream, std::string_view data, std::chrono::system_clock::time_point at);
  // Writes what is left of both streams' last lines (the process ended).
  void Flush(std::chrono::system_clock::time_point at);

 private:
  void Record(std::string_view stream, bool partial, std::string_view text,
              std::chrono::system_clock::time_point at);
  void Rotate(std::chrono::system_clock::time_point at);

  std::string path_;
  CriLogLimits limits_;
  int fd_ = -1;
  int64_t size_ = 0;
  std::string pending_out_, pending_err_;
  std::chrono::system_clock::time_point last_rotation_{};
};

struct CriLogRecord {
  std::chrono::system_clock::time_point at;
  std::string stream;
  std::string text;  // the whole line: P records joined to their F
};

// The records of `path` (not of its rotated files); P records are joined.
// Lines that are not records are skipped.
std::vector<CriLogRecord> ReadCriLog(const std::string& path);

}  // namespace podflow::runtime::process
