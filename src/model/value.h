// Value: a small ordered document tree (null, bool, int, number, string,
// array, object) — what a manifest looks like once its scalars are resolved.
// The codec prints objects through it as YAML or JSON, keeping field order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace YAML {
class Node;
}

namespace podflow::model {

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kNumber, kString, kArray, kObject };

  Value() = default;
  static Value Bool(bool b) { Value v(Kind::kBool); v.bool_ = b; return v; }
  static Value Int(int64_t i) { Value v(Kind::kInt); v.int_ = i; return v; }
  static Value Number(double d) { Value v(Kind::kNumber); v.number_ = d; return v; }
  static Value String(std::string s) { Value v(Kind::kString); v.string_ = std::move(s); return v; }
  static Value Array() { return Value(Kind::kArray); }
  static Value Object() { return Value(Kind::kObject); }

  Kind kind() const { return kind_; }
  bool bool_value() const { return bool_; }
  int64_t int_value() const { return int_; }
  double number_value() const { return number_; }
  const std::string& string_value() const { return string_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }

  // REQUIRES: kind() == kArray.
  void Append(Value v) { items_.push_back(std::move(v)); }
  // REQUIRES: kind() == kObject. Keeps insertion order.
  void Set(std::string key, Value v) { members_.emplace_back(std::move(key), std::move(v)); }
  // The member called `key`, or nullptr.
  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);

  friend bool operator==(const Value& a, const Value& b);

 private:
  explicit Value(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double number_ = 0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// Compact JSON (`indent` 0) or indented JSON.
std::string ToJson(const Value& value, int indent = 0);
// Block-style YAML as kubectl prints it; strings that would read back as
// another type ("80", "yes") are quoted.
std::string ToYaml(const Value& value);
// A YAML node (from yaml-cpp) with its scalars resolved as kubectl does.
// For trusted text only (it expands aliases without bound): manifests go
// through ParseYaml.
Value FromYaml(const YAML::Node& node);
// One scalar with yaml-cpp's tag ("!" quoted, "?" plain, or explicit),
// resolved as kubectl does.
Value ScalarValue(std::string_view tag, const std::string& text);

// What one manifest may grow to while it is read: bounded so that a small
// hostile text cannot exhaust memory or the stack.
struct ParseLimits {
  int max_depth = 200;             // nested mappings and sequences
  int64_t max_nodes = 2'000'000;   // every node, aliases expanded
  int64_t max_bytes = 64 << 20;    // the text of every scalar and key, aliases expanded
};

// Reads a YAML (or JSON) stream into one Value per document (an empty
// document is null). Refuses, with "line L, column C: what", text that is
// not UTF-8 (a UTF-16 stream with its byte order mark is read as such),
// is not YAML, nests deeper than `limits.max_depth`, has more than
// `limits.max_nodes` nodes or `limits.max_bytes` of text (anchored copies
// and alias expansions counted), has a mapping key that is not a scalar, or
// expands aliases excessively (go-yaml's rule: more than 100 aliased nodes
// making up more than 99% of the nodes, down to 10% from 400,000 to
// 4,000,000 nodes).
Result<std::vector<Value>> ParseYaml(std::string_view text, const ParseLimits& limits = {});

}  // namespace podflow::model
