// Encoding: a FlatBuffer of a kind -> the Value Kubernetes would print,
// walking the schema by reflection in declaration order.
#include <yaml-cpp/yaml.h>

#include <flatbuffers/flatbuffers.h>

#include "model/codec.h"
#include "model/codec_internal.h"

namespace podflow::model {
namespace {

using reflection::BaseType;

class Encoder {
 public:
  explicit Encoder(const SchemaIndex& index) : index_(index) {}

  Value Table(const TableInfo& table, const flatbuffers::Table& t) const {
    if (table.int_or_string) return IntOrString(table, t);
    Value out = Value::Object();
    for (const FieldInfo& info : table.fields) {
      const reflection::Field* f = info.field;
      if (t.GetOptionalFieldOffset(f->offset()) == 0) continue;  // absent or default
      BaseType type = f->type()->base_type();
      if (type >= BaseType::Bool && type <= BaseType::Double) {
        out.Set(info.json_name, Scalar(type, f->type()->index(), t, *f));
      } else if (type == BaseType::String) {
        out.Set(info.json_name, String(info, flatbuffers::GetFieldS(t, *f)->str()));
      } else if (type == BaseType::Obj) {
        const flatbuffers::Table* child = flatbuffers::GetFieldT(t, *f);
        out.Set(info.json_name, Table(index_.Table(f->type()->index()), *child));
      } else if (type == BaseType::Vector) {
        out.Set(info.json_name, Vector(info, t));
      }
    }
    return out;
  }

 private:
  Value Scalar(BaseType type, int enum_index, const flatbuffers::Table& t,
               const reflection::Field& f) const {
    if (type == BaseType::Float || type == BaseType::Double) {
      return Value::Number(flatbuffers::GetAnyFieldF(t, f));
    }
    int64_t v = flatbuffers::GetAnyFieldI(t, f);
    if (type == BaseType::Bool) return Value::Bool(v != 0);
    if (enum_index >= 0) return EnumName(enum_index, v);
    return Value::Int(v);
  }

  Value EnumName(int enum_index, int64_t v) const {
    const reflection::EnumVal* val = index_.Enum(enum_index).values()->LookupByKey(v);
    return val ? Value::String(val->name()->str()) : Value::Int(v);
  }

  static Value String(const FieldInfo& info, const std::string& s) {
    if (!info.raw_json) return Value::String(s);
    try {
      return FromYaml(YAML::Load(s));
    } catch (const YAML::Exception&) {
      return Value::String(s);
    }
  }

  Value IntOrString(const TableInfo& table, const flatbuffers::Table& t) const {
    const FieldInfo* type = table.FindJson("type");
    const FieldInfo* int_val = table.FindJson("intVal");
    const FieldInfo* str_val = table.FindJson("strVal");
    if (flatbuffers::GetFieldI<int8_t>(t, *type->field) == 1) {
      const flatbuffers::String* s = flatbuffers::GetFieldS(t, *str_val->field);
      return Value::String(s ? s->str() : "");
    }
    return Value::Int(flatbuffers::GetFieldI<int32_t>(t, *int_val->field));
  }

  Value Vector(const FieldInfo& info, const flatbuffers::Table& t) const {
    const reflection::Type* type = info.field->type();
    const flatbuffers::VectorOfAny* vec = flatbuffers::GetFieldAnyV(t, *info.field);
    BaseType element = type->element();
    if (element == BaseType::Obj) {
      const TableInfo& table = index_.Table(type->index());
      auto* tables = reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>*>(vec);
      if (table.map_entry) {
        Value out = Value::Object();
        for (const flatbuffers::Table* entry : *tables) {
          const flatbuffers::String* k = flatbuffers::GetFieldS(*entry, *table.fields[0].field);
          const flatbuffers::String* v = flatbuffers::GetFieldS(*entry, *table.fields[1].field);
          out.Set(k ? k->str() : "", Value::String(v ? v->str() : ""));
        }
        return out;
      }
      Value out = Value::Array();
      for (const flatbuffers::Table* item : *tables) out.Append(Table(table, *item));
      return out;
    }
    Value out = Value::Array();
    if (element == BaseType::String) {
      auto* strings = reinterpret_cast<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>*>(vec);
      for (const flatbuffers::String* s : *strings) out.Append(Value::String(s->str()));
      return out;
    }
    for (flatbuffers::uoffset_t i = 0; i < vec->size(); ++i) {
      if (element == BaseType::Float || element == BaseType::Double) {
        out.Append(Value::Number(flatbuffers::GetAnyVectorElemF(vec, element, i)));
        continue;
      }
      int64_t v = flatbuffers::GetAnyVectorElemI(vec, element, i);
      if (element == BaseType::Bool) out.Append(Value::Bool(v != 0));
      else if (type->index() >= 0) out.Append(EnumName(type->index(), v));
      else out.Append(Value::Int(v));
    }
    return out;
  }

  const SchemaIndex& index_;
};

}  // namespace

Value ToValue(const KindInfo& kind, std::string_view bytes) {
  const SchemaIndex& index = ApiSchema();
  const TableInfo* table = index.FindTable(kind.table);
  assert(table != nullptr);
  const flatbuffers::Table* root =
      flatbuffers::GetAnyRoot(reinterpret_cast<const uint8_t*>(bytes.data()));
  return Encoder(index).Table(*table, *root);
}

std::string ToYaml(const KindInfo& kind, std::string_view bytes) {
  return ToYaml(ToValue(kind, bytes));
}

std::string ToJson(const KindInfo& kind, std::string_view bytes, int indent) {
  return ToJson(ToValue(kind, bytes), indent);
}

}  // namespace podflow::model
