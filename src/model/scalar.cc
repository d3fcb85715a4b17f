#include "model/scalar.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

namespace podflow::model {
namespace {

bool OneOf(std::string_view text, std::initializer_list<std::string_view> options) {
  for (auto o : options) {
    if (text == o) return true;
  }
  return false;
}

std::string WithoutUnderscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

}  // namespace

ResolvedScalar ResolvePlainScalar(std::string_view text) {
  ResolvedScalar r;
  if (OneOf(text, {"", "~", "null", "Null", "NULL"})) {
    r.kind = ScalarKind::kNull;
    return r;
  }
  if (OneOf(text, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
    r.kind = ScalarKind::kBool;
    r.bool_value = true;
    return r;
  }
  if (OneOf(text, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    r.kind = ScalarKind::kBool;
    return r;
  }
  if (OneOf(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    r.kind = ScalarKind::kFloat;
    r.float_value = std::numeric_limits<double>::infinity();
    return r;
  }
  if (OneOf(text, {"-.inf", "-.Inf", "-.INF"})) {
    r.kind = ScalarKind::kFloat;
    r.float_value = -std::numeric_limits<double>::infinity();
    return r;
  }
  if (OneOf(text, {".nan", ".NaN", ".NAN"})) {
    r.kind = ScalarKind::kFloat;
    r.float_value = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  // Integers: decimal, 0x hex, 0b binary, 0o / leading-0 octal, with `_`.
  static const std::regex kInt(
      R"(^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$)");
  static const std::regex kFloat(
      R"(^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$)");
  std::string plain(text);
  if (std::regex_match(plain, kInt)) {
    std::string digits = WithoutUnderscores(text);
    bool negative = digits[0] == '-';
    size_t start = (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
    int base = 10;
    if (digits.size() > start + 1 && digits[start] == '0') {
      char p = digits[start + 1];
      if (p == 'x') { base = 16; start += 2; }
      else if (p == 'b') { base = 2; start += 2; }
      else if (p == 'o') { base = 8; start += 2; }
      else { base = 8; start += 1; }
    }
    errno = 0;
    unsigned long long magnitude = std::strtoull(digits.c_str() + start, nullptr, base);
    r.kind = ScalarKind::kInt;
    if (errno == ERANGE || magnitude > static_cast<unsigned long long>(INT64_MAX) + (negative ? 1 : 0)) {
      r.int_overflow = true;
    } else {
      r.int_value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    }
    r.float_value = std::strtod(WithoutUnderscores(text).c_str(), nullptr);
    return r;
  }
  if (std::regex_match(plain, kFloat)) {
    r.kind = ScalarKind::kFloat;
    r.float_value = std::strtod(WithoutUnderscores(text).c_str(), nullptr);
    return r;
  }
  r.kind = ScalarKind::kString;
  return r;
}

std::string_view ScalarKindName(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kNull: return "null";
    case ScalarKind::kBool: return "boolean";
    case ScalarKind::kInt: return "integer";
    case ScalarKind::kFloat: return "number";
    case ScalarKind::kString: return "string";
  }
  return "value";
}

}  // namespace podflow::model
