// Strong types for ids and counters: a Revision is not a size_t.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>

namespace podflow {

// A value of type T that does not mix with other NamedTypes or with T itself
// unless asked to with .value().
template <typename T, typename Tag>
class NamedType {
 public:
  using value_type = T;
  constexpr NamedType() = default;
  constexpr explicit NamedType(T v) : value_(v) {}
  constexpr T value() const { return value_; }
  constexpr auto operator<=>(const NamedType&) const = default;

 private:
  T value_{};
};

// The log's global revision: +1 per committed transaction that changes
// something. Revision 0 means "none" (a key that does not exist, or "the
// head" where a read takes a revision).
using Revision = NamedType<int64_t, struct RevisionTag>;

inline std::ostream& operator<<(std::ostream& os, Revision r) { return os << r.value(); }

}  // namespace podflow

template <typename T, typename Tag>
struct std::hash<podflow::NamedType<T, Tag>> {
  size_t operator()(const podflow::NamedType<T, Tag>& v) const noexcept {
    return std::hash<T>{}(v.value());
  }
};
