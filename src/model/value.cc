#include "model/value.h"

#include <charconv>
#include <cmath>

#include <yaml-cpp/yaml.h>

#include "model/scalar.h"

namespace podflow::model {

const Value* Value::Find(std::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value* Value::Find(std::string_view key) {
  for (auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Value::Kind::kNull: return true;
    case Value::Kind::kBool: return a.bool_ == b.bool_;
    case Value::Kind::kInt: return a.int_ == b.int_;
    case Value::Kind::kNumber: return a.number_ == b.number_;
    case Value::Kind::kString: return a.string_ == b.string_;
    case Value::Kind::kArray: return a.items_ == b.items_;
    case Value::Kind::kObject: return a.members_ == b.members_;
  }
  return false;
}

namespace {

void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          static const char* kHex = "0123456789abcdef";
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

std::string NumberText(double d) {
  if (!std::isfinite(d)) return "null";  // JSON has no inf/nan
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, end);
}

void Newline(std::string& out, int indent, int depth) {
  if (indent == 0) return;
  out.push_back('\n');
  out.append(static_cast<size_t>(indent * depth), ' ');
}

void WriteJson(std::string& out, const Value& v, int indent, int depth) {
  switch (v.kind()) {
    case Value::Kind::kNull: out += "null"; return;
    case Value::Kind::kBool: out += v.bool_value() ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.int_value()); return;
    case Value::Kind::kNumber: out += NumberText(v.number_value()); return;
    case Value::Kind::kString: AppendJsonString(out, v.string_value()); return;
    case Value::Kind::kArray: {
      if (v.items().empty()) { out += "[]"; return; }
      out.push_back('[');
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out.push_back(',');
        first = false;
        Newline(out, indent, depth + 1);
        WriteJson(out, item, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out.push_back(']');
      return;
    }
    case Value::Kind::kObject: {
      if (v.members().empty()) { out += "{}"; return; }
      out.push_back('{');
      bool first = true;
      for (const auto& [key, member] : v.members()) {
        if (!first) out.push_back(',');
        first = false;
        Newline(out, indent, depth + 1);
        AppendJsonString(out, key);
        out += indent ? ": " : ":";
        WriteJson(out, member, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out.push_back('}');
      return;
    }
  }
}

void EmitString(YAML::Emitter& out, const std::string& s) {
  if (ResolvePlainScalar(s).kind != ScalarKind::kString) {
    out << YAML::DoubleQuoted << s;
  } else {
    out << s;
  }
}

void WriteYaml(YAML::Emitter& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: out << YAML::Null; return;
    case Value::Kind::kBool: out << (v.bool_value() ? "true" : "false"); return;
    case Value::Kind::kInt: out << v.int_value(); return;
    case Value::Kind::kNumber: out << NumberText(v.number_value()); return;
    case Value::Kind::kString: EmitString(out, v.string_value()); return;
    case Value::Kind::kArray:
      if (v.items().empty()) { out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq; return; }
      out << YAML::BeginSeq;
      for (const Value& item : v.items()) WriteYaml(out, item);
      out << YAML::EndSeq;
      return;
    case Value::Kind::kObject:
      if (v.members().empty()) { out << YAML::Flow << YAML::BeginMap << YAML::EndMap; return; }
      out << YAML::BeginMap;
      for (const auto& [key, member] : v.members()) {
        out << YAML::Key;
        EmitString(out, key);
        out << YAML::Value;
        WriteYaml(out, member);
      }
      out << YAML::EndMap;
      return;
  }
}

}  // namespace

std::string ToJson(const Value& value, int indent) {
  std::string out;
  WriteJson(out, value, indent, 0);
  return out;
}

std::string ToYaml(const Value& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  WriteYaml(out, value);
  std::string text = out.c_str();
  text.push_back('\n');
  return text;
}

Value ScalarValue(std::string_view tag, const std::string& text) {
  // Quoted ("!") and !!str scalars are strings; plain ones resolve as YAML 1.1.
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return Value::String(text);
  ResolvedScalar r = ResolvePlainScalar(text);
  switch (r.kind) {
    case ScalarKind::kNull: return Value();
    case ScalarKind::kBool: return Value::Bool(r.bool_value);
    case ScalarKind::kInt: return r.int_overflow ? Value::Number(r.float_value) : Value::Int(r.int_value);
    case ScalarKind::kFloat: return Value::Number(r.float_value);
    case ScalarKind::kString: return Value::String(text);
  }
  return Value::String(text);
}

Value FromYaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Value();
    case YAML::NodeType::Scalar:
      return ScalarValue(node.Tag(), node.Scalar());
    case YAML::NodeType::Sequence: {
      Value array = Value::Array();
      for (const auto& item : node) array.Append(FromYaml(item));
      return array;
    }
    case YAML::NodeType::Map: {
      Value object = Value::Object();
      for (const auto& entry : node) object.Set(entry.first.Scalar(), FromYaml(entry.second));
      return object;
    }
  }
  return Value();
}

}  // namespace podflow::model
