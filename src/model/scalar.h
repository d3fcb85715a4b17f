// How a YAML scalar resolves, by the rules kubectl's YAML-to-JSON conversion
// uses (YAML 1.1: `yes`/`on` are booleans, `0x1F` is an integer, `~` is null).
// A quoted scalar is always a string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace podflow::model {

enum class ScalarKind { kNull, kBool, kInt, kFloat, kString };

struct ResolvedScalar {
  ScalarKind kind = ScalarKind::kString;
  bool bool_value = false;
  int64_t int_value = 0;   // kInt
  double float_value = 0;  // kFloat (also set for kInt)
  bool int_overflow = false;  // an integer literal outside int64
};

// Resolves a plain (unquoted) scalar.
ResolvedScalar ResolvePlainScalar(std::string_view text);

// The JSON type name of a kind, for error messages ("string", "number", ...).
std::string_view ScalarKindName(ScalarKind kind);

}  // namespace podflow::model
