// Status: the one error type of podflow. Errors are values; exceptions from
// the libraries we call are turned into a Status in the adapter that calls them.
//
// Thread safety: a Status is a value type; distinct objects may be used from
// distinct threads without synchronization.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace podflow {

// The codes a caller can branch on. Their values are frozen: they cross the
// bus (ApiStatus.error_code); add new codes at the end. Kept apart on purpose:
//  - kInvalid / kNotFound / kAlreadyExists / kConflict / kFutureRevision /
//    kCompacted / kForbidden are expected outcomes of a request ("rejected"),
//    with a reason;
//  - kCorruption / kIOError / kInternal mean something is broken.
enum class Code : int {
  kOk = 0,
  kInvalid = 1,          // the input is malformed or out of bounds
  kNotFound = 2,         // the named object does not exist
  kAlreadyExists = 3,    // a create found the object already there
  kConflict = 4,         // a guard (compare-and-swap) did not hold
  kFutureRevision = 5,   // a read or watch named a revision not yet written
  kCompacted = 6,        // a read or watch named a revision compaction dropped
  kCorruption = 7,       // stored data failed verification
  kIOError = 8,          // the storage or the network failed
  kUnavailable = 9,      // the component is closed or shutting down
  kInternal = 10,        // a bug
  kForbidden = 11,       // the caller may not do this
};

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string m) { return {Code::kInvalid, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  static Status FutureRevision(std::string m) { return {Code::kFutureRevision, std::move(m)}; }
  static Status Compacted(std::string m) { return {Code::kCompacted, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {Code::kIOError, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status Forbidden(std::string m) { return {Code::kForbidden, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "Invalid: spec.containers[0].image: Required value"
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace podflow
