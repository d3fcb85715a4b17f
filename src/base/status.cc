#include "base/status.h"

namespace podflow {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalid: return "Invalid";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kConflict: return "Conflict";
    case Code::kFutureRevision: return "FutureRevision";
    case Code::kCompacted: return "Compacted";
    case Code::kCorruption: return "Corruption";
    case Code::kIOError: return "IOError";
    case Code::kUnavailable: return "Unavailable";
    case Code::kInternal: return "Internal";
    case Code::kForbidden: return "Forbidden";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace podflow
