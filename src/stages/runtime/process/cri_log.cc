#include "stages/runtime/process/cri_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "base/clock.h"

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

// "20240501-120000.250000000", the suffix of a rotated file: fixed width,
// so that names sort as the rotations happened.
std::string RotationStamp(std::chrono::system_clock::time_point at) {
  const std::time_t t = std::chrono::system_clock::to_time_t(at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[48];
  const size_t n = std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count() % 1'000'000'000;
  std::snprintf(buf + n, sizeof buf - n, ".%09lld", static_cast<long long>(nanos));
  return buf;
}

// The rotated files of `path`, oldest first (their stamps sort by time).
std::vector<std::string> RotatedFiles(const std::string& path) {
  std::vector<std::string> out;
  const fs::path p(path);
  std::error_code ec;
  const std::string prefix = p.filename().string() + ".";
  for (const auto& entry : fs::directory_iterator(p.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // a full disk loses log lines, as the runtime's logger does
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

CriLogWriter::CriLogWriter(std::string path, CriLogLimits limits) : path_(std::move(path)), limits_(limits) {}

CriLogWriter::~CriLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status CriLogWriter::Open() {
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  // A run's file is its own: one left by an earlier runtime under the same
  // run number (a pod started over after a restart) is not appended to.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) return Status::Unavailable("container log " + path_ + ": " + std::strerror(errno));
  struct stat st {};
  size_ = ::fstat(fd_, &st) == 0 ? st.st_size : 0;  // 0: made anew
  return Status::Ok();
}

void CriLogWriter::Write(std::string_view stream, std::string_view data, std::chrono::system_clock::time_point at) {
  std::string& pending = stream == "stderr" ? pending_err_ : pending_out_;
  pending.append(data);
  size_t start = 0;
  for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(pending.data() + start, nl - start);
    while (line.size() > kCriMaxLine) {
      Record(stream, true, line.substr(0, kCriMaxLine), at);
      line.remove_prefix(kCriMaxLine);
    }
    Record(stream, false, line, at);
  }
  pending.erase(0, start);
  while (pending.size() > kCriMaxLine) {
    Record(stream, true, std::string_view(pending).substr(0, kCriMaxLine), at);
    pending.erase(0, kCriMaxLine);
  }
}

void CriLogWriter::Flush(std::chrono::system_clock::time_point at) {
  if (!pending_out_.empty()) Record("stdout", false, pending_out_, at);
  if (!pending_err_.empty()) Record("stderr", false, pending_err_, at);
  pending_out_.clear();
  pending_err_.clear();
}

void CriLogWriter::Record(std::string_view stream, bool partial, std::string_view text,
                          std::chrono::system_clock::time_point at) {
  if (fd_ < 0) return;
  std::string record = FormatRfc3339Nano(at);
  record += ' ';
  record += stream;
  record += partial ? " P " : " F ";
  record += text;
  record += '\n';
  WriteAll(fd_, record);
  size_ += static_cast<int64_t>(record.size());
  if (!partial && size_ >= limits_.max_bytes) Rotate(at);  // a long line stays in one file
}

void CriLogWriter::Rotate(std::chrono::system_clock::time_point at) {
  // Each rotation's stamp is later than the one before (lines read together
  // share a time), so names sort as the rotations happened.
  if (at <= last_rotation_) at = last_rotation_ + std::chrono::nanoseconds(1);
  std::error_code ec;
  std::string rotated = path_ + "." + RotationStamp(at);
  for (; fs::exists(rotated, ec); at += std::chrono::nanoseconds(1)) rotated = path_ + "." + RotationStamp(at);
  last_rotation_ = at;
  fs::rename(path_, rotated, ec);
  if (ec) {
    size_ = 0;  // cannot rotate: go on in this file rather than try at every line
    return;
  }
  ::close(fd_);
  fd_ = -1;
  std::vector<std::string> old = RotatedFiles(path_);
  const size_t keep = static_cast<size_t>(std::max(limits_.max_files - 1, 0));
  for (size_t i = 0; i + keep < old.size(); ++i) fs::remove(old[i], ec);
  (void)Open();
}

std::vector<CriLogRecord> ReadCriLog(const std::string& path) {
  const std::vector<std::string> files = {path};
  std::vector<CriLogRecord> out;
  std::string partial_out, partial_err;
  for (const std::string& file : files) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      // <time> <stream> <tag> <text>
      const size_t a = line.find(' ');
      const size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
      if (b == std::string::npos || b + 2 > line.size() || (line.size() > b + 2 && line[b + 2] != ' ')) continue;
      const std::optional<std::chrono::system_clock::time_point> at = ParseRfc3339(std::string_view(line).substr(0, a));
      const std::string stream = line.substr(a + 1, b - a - 1);
      if (!at || (stream != "stdout" && stream != "stderr")) continue;
      const char tag = line[b + 1];
      std::string text = line.size() > b + 3 ? line.substr(b + 3) : std::string();
      std::string& partial = stream == "stderr" ? partial_err : partial_out;
      if (tag == 'P') {
        partial += text;
        continue;
      }
      if (tag != 'F') continue;
      out.push_back({*at, stream, partial + text});
      partial.clear();
    }
  }
  return out;
}

}  // namespace podflow::runtime::process
