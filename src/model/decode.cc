// Decoding: a manifest document (a Value) -> a FlatBuffer of its kind, walking
// the schema by reflection. Every field error is collected with its path.
#include <algorithm>
#include <cmath>
#include <limits>

#include <flatbuffers/flatbuffers.h>

#include "api_bfbs_generated.h"
#include "base/clock.h"
#include "model/codec.h"
#include "model/codec_internal.h"
#include "model/quantity.h"

namespace podflow::model {
namespace {

using reflection::BaseType;

bool IsScalar(BaseType t) { return t >= BaseType::Bool && t <= BaseType::Double; }
bool IsInteger(BaseType t) { return t >= BaseType::Bool && t <= BaseType::ULong; }

std::string_view KindName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return "boolean";
    case Value::Kind::kInt: return "integer";
    case Value::Kind::kNumber: return "number";
    case Value::Kind::kString: return "string";
    case Value::Kind::kArray: return "array";
    case Value::Kind::kObject: return "object";
  }
  return "value";
}

std::string ScalarText(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kBool: return v.bool_value() ? "true" : "false";
    case Value::Kind::kInt: return std::to_string(v.int_value());
    case Value::Kind::kNumber: return ToJson(v);
    case Value::Kind::kString: return v.string_value();
    default: return "";
  }
}

bool IntegerFits(BaseType t, int64_t v) {
  switch (t) {
    case BaseType::Bool: return v == 0 || v == 1;
    case BaseType::Byte: return v >= INT8_MIN && v <= INT8_MAX;
    case BaseType::UByte: return v >= 0 && v <= UINT8_MAX;
    case BaseType::Short: return v >= INT16_MIN && v <= INT16_MAX;
    case BaseType::UShort: return v >= 0 && v <= UINT16_MAX;
    case BaseType::Int: return v >= INT32_MIN && v <= INT32_MAX;
    case BaseType::UInt: return v >= 0 && v <= UINT32_MAX;
    case BaseType::Long: return true;
    case BaseType::ULong: return v >= 0;
    default: return false;
  }
}

// One field of the table being built: a scalar or an offset to a child that
// has been built already.
struct Pending {
  const reflection::Field* field;
  bool is_offset;
  flatbuffers::uoffset_t offset;
  int64_t integer;
  double number;
};

class Decoder {
 public:
  Decoder(const SchemaIndex& index, flatbuffers::FlatBufferBuilder& fbb,
          std::vector<FieldError>& errors)
      : index_(index), fbb_(fbb), errors_(errors) {}

  // Builds `table` from `value` (an object); returns its offset.
  flatbuffers::uoffset_t Table(const TableInfo& table, const Value& value, std::string& path) {
    if (table.int_or_string) return IntOrString(table, value, path);
    std::vector<Pending> pending;
    if (value.kind() != Value::Kind::kObject) {
      Error(FieldError::Type::kInvalid, path, ScalarText(value),
            "expected object, got " + std::string(KindName(value)));
      return Empty();
    }
    // First the names, in document order: unknown and duplicate members, and
    // which member (the first of that name) feeds each field.
    constexpr size_t kNone = static_cast<size_t>(-1);
    std::vector<size_t> member_of(table.fields.size(), kNone);
    for (size_t i = 0; i < value.members().size(); ++i) {
      const std::string& name = value.members()[i].first;
      size_t mark = path.size();
      if (!path.empty()) path += '.';
      path += name;
      position_.push_back(i);
      for (size_t j = 0; j < i; ++j) {
        if (value.members()[j].first == name) {
          Error(FieldError::Type::kDuplicate, path, name, "");
        }
      }
      const FieldInfo* info = table.FindJson(name);
      if (info == nullptr) {
        Error(FieldError::Type::kUnknownField, path, "", "");
      } else {
        size_t f = static_cast<size_t>(info - table.fields.data());
        if (member_of[f] == kNone) member_of[f] = i;
      }
      position_.pop_back();
      path.resize(mark);
    }
    // Then the values, in schema order, so that the bytes do not depend on the
    // order of the document's keys: a manifest and the same manifest printed
    // back (ToYaml, ToJson) decode to identical FlatBuffers.
    for (size_t f = 0; f < table.fields.size(); ++f) {
      size_t i = member_of[f];
      if (i == kNone) continue;
      const auto& [name, member] = value.members()[i];
      if (member.kind() == Value::Kind::kNull) continue;
      size_t mark = path.size();
      if (!path.empty()) path += '.';
      path += name;
      position_.push_back(i);
      Field(table.fields[f], member, path, pending);
      position_.pop_back();
      path.resize(mark);
    }
    flatbuffers::uoffset_t start = fbb_.StartTable();
    for (const Pending& p : pending) Add(p);
    return fbb_.EndTable(start);
  }

  // Puts the errors in document order (fields are decoded in schema order).
  void SortErrors() {
    std::vector<size_t> order(errors_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return positions_[a] < positions_[b]; });
    std::vector<FieldError> sorted;
    sorted.reserve(order.size());
    for (size_t i : order) sorted.push_back(std::move(errors_[i]));
    errors_ = std::move(sorted);
  }

 private:
  flatbuffers::uoffset_t Empty() { return fbb_.EndTable(fbb_.StartTable()); }

  void Error(FieldError::Type type, const std::string& path, std::string value, std::string detail) {
    errors_.push_back(FieldError::FromCodec(type, path, std::move(value), std::move(detail)));
    positions_.push_back(position_);
  }

  void TypeError(const std::string& path, const Value& v, std::string_view expected) {
    Error(FieldError::Type::kInvalid, path, ScalarText(v),
          "expected " + std::string(expected) + ", got " + std::string(KindName(v)));
  }

  void Field(const FieldInfo& info, const Value& v, std::string& path, std::vector<Pending>& out) {
    const reflection::Field* f = info.field;
    BaseType t = f->type()->base_type();
    if (IsScalar(t)) {
      Pending p{f, false, 0, 0, 0};
      if (Scalar(t, f->type()->index(), v, path, p.integer, p.number)) out.push_back(p);
      return;
    }
    flatbuffers::uoffset_t off = 0;
    switch (t) {
      case BaseType::String: {
        std::string s;
        if (!String(info, v, path, s)) return;
        off = fbb_.CreateString(s).o;
        break;
      }
      case BaseType::Obj:
        off = Table(index_.Table(f->type()->index()), v, path);
        break;
      case BaseType::Vector: {
        std::optional<flatbuffers::uoffset_t> vec = Vector(info, v, path);
        if (!vec) return;
        off = *vec;
        break;
      }
      default:
        Error(FieldError::Type::kInvalid, path, "", "field type not supported by the codec");
        return;
    }
    out.push_back(Pending{f, true, off, 0, 0});
  }

  // Reads a scalar of type `t` (an enum when enum_index >= 0).
  bool Scalar(BaseType t, int enum_index, const Value& v, const std::string& path,
              int64_t& integer, double& number) {
    if (enum_index >= 0 && IsInteger(t)) return Enum(index_.Enum(enum_index), v, path, integer);
    if (t == BaseType::Bool) {
      if (v.kind() != Value::Kind::kBool) { TypeError(path, v, "boolean"); return false; }
      integer = v.bool_value() ? 1 : 0;
      return true;
    }
    if (IsInteger(t)) {
      if (v.kind() != Value::Kind::kInt) { TypeError(path, v, "integer"); return false; }
      if (!IntegerFits(t, v.int_value())) {
        Error(FieldError::Type::kInvalid, path, ScalarText(v), "out of range");
        return false;
      }
      integer = v.int_value();
      return true;
    }
    if (v.kind() == Value::Kind::kInt) { number = static_cast<double>(v.int_value()); return true; }
    if (v.kind() == Value::Kind::kNumber) { number = v.number_value(); return true; }
    TypeError(path, v, "number");
    return false;
  }

  bool Enum(const reflection::Enum& e, const Value& v, const std::string& path, int64_t& out) {
    if (v.kind() != Value::Kind::kString) { TypeError(path, v, "string"); return false; }
    if (v.string_value().empty()) { out = 0; return true; }
    std::string supported;
    for (const reflection::EnumVal* val : *e.values()) {
      if (val->value() == 0) continue;  // Unset: not a value one writes
      if (val->name()->string_view() == v.string_value()) { out = val->value(); return true; }
      if (!supported.empty()) supported += ", ";
      supported += "\"" + val->name()->str() + "\"";
    }
    Error(FieldError::Type::kNotSupported, path, v.string_value(), "supported values: " + supported);
    return false;
  }

  bool String(const FieldInfo& info, const Value& v, const std::string& path, std::string& out) {
    if (info.raw_json) { out = ToJson(v); return true; }
    if (info.quantity) {
      if (v.kind() != Value::Kind::kString && v.kind() != Value::Kind::kInt &&
          v.kind() != Value::Kind::kNumber) {
        TypeError(path, v, "quantity (string or number)");
        return false;
      }
      Result<Quantity> q = Quantity::Parse(ScalarText(v));
      if (!q.ok()) {
        Error(FieldError::Type::kInvalid, path, ScalarText(v), q.status().message());
        return false;
      }
      out = q->ToString();
      return true;
    }
    if (v.kind() != Value::Kind::kString) { TypeError(path, v, "string"); return false; }
    if (info.time && !IsRfc3339(v.string_value())) {
      Error(FieldError::Type::kInvalid, path, v.string_value(),
            "expected an RFC 3339 time such as 2006-01-02T15:04:05Z");
      return false;
    }
    out = v.string_value();
    return true;
  }

  flatbuffers::uoffset_t IntOrString(const TableInfo& table, const Value& v, const std::string& path) {
    const FieldInfo* type = table.FindJson("type");
    const FieldInfo* int_val = table.FindJson("intVal");
    const FieldInfo* str_val = table.FindJson("strVal");
    assert(type && int_val && str_val && "IntOrString table has type, int_val, str_val");
    if (v.kind() == Value::Kind::kInt && IntegerFits(BaseType::Int, v.int_value())) {
      flatbuffers::uoffset_t start = fbb_.StartTable();
      fbb_.AddElement<int32_t>(int_val->field->offset(), static_cast<int32_t>(v.int_value()), 0);
      return fbb_.EndTable(start);
    }
    if (v.kind() == Value::Kind::kString) {
      auto s = fbb_.CreateString(v.string_value());
      flatbuffers::uoffset_t start = fbb_.StartTable();
      fbb_.AddOffset(str_val->field->offset(), s);
      fbb_.AddElement<int8_t>(type->field->offset(), 1, 0);  // IntOrStringType::String
      return fbb_.EndTable(start);
    }
    TypeError(path, v, "integer or string");
    return Empty();
  }

  std::optional<flatbuffers::uoffset_t> Vector(const FieldInfo& info, const Value& v, std::string& path) {
    const reflection::Type* type = info.field->type();
    BaseType element = type->element();
    if (element == BaseType::Obj && index_.Table(type->index()).map_entry) {
      return Map(index_.Table(type->index()), v, path);
    }
    if (v.kind() != Value::Kind::kArray) { TypeError(path, v, "array"); return std::nullopt; }
    if (v.items().empty()) return std::nullopt;  // omitempty: an empty list is no list
    size_t n = v.items().size();
    size_t mark = path.size();
    if (element == BaseType::Obj || element == BaseType::String) {
      std::vector<flatbuffers::uoffset_t> offsets;
      offsets.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        path += "[" + std::to_string(i) + "]";
        position_.push_back(i);
        const Value& item = v.items()[i];
        if (element == BaseType::Obj) {
          offsets.push_back(Table(index_.Table(type->index()), item, path));
        } else {
          std::string s;
          FieldInfo plain;  // element strings carry no codec attributes
          if (String(plain, item, path, s)) offsets.push_back(fbb_.CreateString(s).o);
        }
        position_.pop_back();
        path.resize(mark);
      }
      fbb_.StartVector(offsets.size(), sizeof(flatbuffers::uoffset_t));
      for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
        fbb_.PushElement(flatbuffers::Offset<void>(*it));
      }
      return fbb_.EndVector(offsets.size());
    }
    if (!IsScalar(element)) {
      Error(FieldError::Type::kInvalid, path, "", "vector type not supported by the codec");
      return std::nullopt;
    }
    std::vector<int64_t> integers(n);
    std::vector<double> numbers(n);
    for (size_t i = 0; i < n; ++i) {
      path += "[" + std::to_string(i) + "]";
      position_.push_back(i);
      Scalar(element, type->index(), v.items()[i], path, integers[i], numbers[i]);
      position_.pop_back();
      path.resize(mark);
    }
    size_t size = flatbuffers::GetTypeSize(element);
    fbb_.StartVector(n, size);
    for (size_t i = n; i-- > 0;) PushScalar(element, integers[i], numbers[i]);
    return fbb_.EndVector(n);
  }

  // map[string]string or ResourceList: a JSON object -> entries sorted by key.
  std::optional<flatbuffers::uoffset_t> Map(const TableInfo& entry, const Value& v, std::string& path) {
    if (v.kind() != Value::Kind::kObject) { TypeError(path, v, "object"); return std::nullopt; }
    if (v.members().empty()) return std::nullopt;
    const FieldInfo& key_field = entry.fields[0];
    const FieldInfo& value_field = entry.fields[1];
    std::vector<std::pair<std::string, std::string>> items;
    size_t mark = path.size();
    for (const auto& [key, member] : v.members()) {
      path += "[" + key + "]";
      std::string s;
      if (member.kind() == Value::Kind::kNull) {
        items.emplace_back(key, "");  // a null map value is the empty string, as in Go
      } else if (String(value_field, member, path, s)) {
        items.emplace_back(key, std::move(s));
      }
      path.resize(mark);
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 1; i < items.size(); ++i) {
      if (items[i].first == items[i - 1].first) {
        Error(FieldError::Type::kDuplicate, path + "[" + items[i].first + "]", items[i].first, "");
      }
    }
    std::vector<flatbuffers::uoffset_t> offsets;
    for (const auto& [key, value] : items) {
      auto k = fbb_.CreateString(key);
      auto val = fbb_.CreateString(value);
      flatbuffers::uoffset_t start = fbb_.StartTable();
      fbb_.AddOffset(key_field.field->offset(), k);
      fbb_.AddOffset(value_field.field->offset(), val);
      offsets.push_back(fbb_.EndTable(start));
    }
    fbb_.StartVector(offsets.size(), sizeof(flatbuffers::uoffset_t));
    for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
      fbb_.PushElement(flatbuffers::Offset<void>(*it));
    }
    return fbb_.EndVector(offsets.size());
  }

  void PushScalar(BaseType t, int64_t i, double d) {
    switch (t) {
      case BaseType::Bool: case BaseType::UByte: fbb_.PushElement(static_cast<uint8_t>(i)); break;
      case BaseType::Byte: fbb_.PushElement(static_cast<int8_t>(i)); break;
      case BaseType::Short: fbb_.PushElement(static_cast<int16_t>(i)); break;
      case BaseType::UShort: fbb_.PushElement(static_cast<uint16_t>(i)); break;
      case BaseType::Int: fbb_.PushElement(static_cast<int32_t>(i)); break;
      case BaseType::UInt: fbb_.PushElement(static_cast<uint32_t>(i)); break;
      case BaseType::Long: fbb_.PushElement(static_cast<int64_t>(i)); break;
      case BaseType::ULong: fbb_.PushElement(static_cast<uint64_t>(i)); break;
      case BaseType::Float: fbb_.PushElement(static_cast<float>(d)); break;
      case BaseType::Double: fbb_.PushElement(d); break;
      default: assert(false && "not a scalar");
    }
  }

  // Adds one pending field to the open table. Optional scalars are always
  // stored (presence is the information); plain ones only when not default.
  void Add(const Pending& p) {
    const reflection::Field* f = p.field;
    flatbuffers::voffset_t slot = f->offset();
    if (p.is_offset) { fbb_.AddOffset(slot, flatbuffers::Offset<void>(p.offset)); return; }
    bool opt = f->optional();
    int64_t di = f->default_integer();
    double dd = f->default_real();
    auto add = [&](auto value, auto def) {
      if (opt) fbb_.AddElement(slot, value);
      else fbb_.AddElement(slot, value, def);
    };
    switch (f->type()->base_type()) {
      case BaseType::Bool: case BaseType::UByte:
        add(static_cast<uint8_t>(p.integer), static_cast<uint8_t>(di)); break;
      case BaseType::Byte: add(static_cast<int8_t>(p.integer), static_cast<int8_t>(di)); break;
      case BaseType::Short: add(static_cast<int16_t>(p.integer), static_cast<int16_t>(di)); break;
      case BaseType::UShort: add(static_cast<uint16_t>(p.integer), static_cast<uint16_t>(di)); break;
      case BaseType::Int: add(static_cast<int32_t>(p.integer), static_cast<int32_t>(di)); break;
      case BaseType::UInt: add(static_cast<uint32_t>(p.integer), static_cast<uint32_t>(di)); break;
      case BaseType::Long: add(static_cast<int64_t>(p.integer), static_cast<int64_t>(di)); break;
      case BaseType::ULong: add(static_cast<uint64_t>(p.integer), static_cast<uint64_t>(di)); break;
      case BaseType::Float: add(static_cast<float>(p.number), static_cast<float>(dd)); break;
      case BaseType::Double: add(p.number, dd); break;
      default: assert(false && "not a scalar");
    }
  }

  const SchemaIndex& index_;
  flatbuffers::FlatBufferBuilder& fbb_;
  std::vector<FieldError>& errors_;
  // Where in the document the value being decoded is: member and item indices.
  std::vector<size_t> position_;
  std::vector<std::vector<size_t>> positions_;  // position_ of each error
};

std::string StringMember(const Value& v, std::string_view key) {
  const Value* m = v.Find(key);
  return m && m->kind() == Value::Kind::kString ? m->string_value() : "";
}

}  // namespace

const SchemaIndex& ApiSchema() {
  static const SchemaIndex index(podflow::api::ObjectsBinarySchema::data());
  return index;
}

Decoded DecodeValue(const Value& document) {
  Decoded out;
  if (document.kind() != Value::Kind::kObject) {
    out.status = Status::Invalid("a manifest must be an object with apiVersion and kind, got " +
                                 std::string(KindName(document)));
    return out;
  }
  std::string api_version = StringMember(document, "apiVersion");
  std::string kind = StringMember(document, "kind");
  if (api_version.empty() || kind.empty()) {
    std::string missing = api_version.empty() && kind.empty() ? "apiVersion not set, kind not set"
                          : api_version.empty()               ? "apiVersion not set"
                                                              : "kind not set";
    out.status = Status::Invalid("error validating data: [" + missing + "]");
    return out;
  }
  const KindInfo* info = FindKind(api_version, kind);
  if (info == nullptr) {
    out.status = Status::Invalid("no matches for kind \"" + kind + "\" in version \"" +
                                 api_version + "\"");
    return out;
  }
  out.object.kind = info;
  if (const Value* meta = document.Find("metadata"); meta && meta->kind() == Value::Kind::kObject) {
    out.object.name = StringMember(*meta, "name");
    out.object.namespace_ = StringMember(*meta, "namespace");
  }
  const SchemaIndex& index = ApiSchema();
  const TableInfo* table = index.FindTable(info->table);
  assert(table != nullptr && "every kind has its root table in the schema");
  flatbuffers::FlatBufferBuilder fbb(1024);
  std::string path;
  Decoder decoder(index, fbb, out.causes);
  flatbuffers::uoffset_t root = decoder.Table(*table, document, path);
  if (!out.causes.empty()) {
    decoder.SortErrors();
    out.status = Status::Invalid(InvalidMessage(info->kind, out.object.name, out.causes));
    return out;
  }
  fbb.Finish(flatbuffers::Offset<void>(root));
  out.object.bytes.assign(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  return out;
}

Result<std::vector<Decoded>> DecodeManifests(std::string_view text) {
  Result<std::vector<Value>> documents = ParseYaml(text);
  if (!documents.ok()) return Status::Invalid("error parsing manifest: " + documents.status().message());
  std::vector<Decoded> out;
  for (Value& document : *documents) {
    if (document.kind() == Value::Kind::kNull) continue;  // an empty document between two `---`
    if (document.kind() == Value::Kind::kObject && StringMember(document, "kind") == "List") {
      const Value* items = document.Find("items");
      if (items == nullptr || items->kind() != Value::Kind::kArray) {
        Decoded bad;
        bad.status = Status::Invalid("a List has an items array");
        out.push_back(std::move(bad));
        continue;
      }
      for (const Value& item : items->items()) out.push_back(DecodeValue(item));
      continue;
    }
    out.push_back(DecodeValue(document));
  }
  return out;
}

}  // namespace podflow::model
