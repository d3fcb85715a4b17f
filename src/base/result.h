// Result<T>: a value or a non-OK Status.
#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "base/status.h"

namespace podflow {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result built from an OK status carries no value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

// Returns early from the enclosing function when `expr` is not OK.
#define PODFLOW_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::podflow::Status _pf_status = (expr);       \
    if (!_pf_status.ok()) return _pf_status;     \
  } while (0)

}  // namespace podflow
