#include "model/schema_index.h"

#include <algorithm>

namespace podflow::model {
namespace {

const flatbuffers::String* Attribute(const flatbuffers::Vector<flatbuffers::Offset<reflection::KeyValue>>* attrs,
                                     const char* key) {
  if (attrs == nullptr) return nullptr;
  for (const auto* kv : *attrs) {
    if (kv->key()->str() == key) return kv->value() ? kv->value() : kv->key();
  }
  return nullptr;
}

}  // namespace

std::string SchemaIndex::LowerCamel(std::string_view snake) {
  std::string out;
  out.reserve(snake.size());
  bool upper_next = false;
  for (char c : snake) {
    if (c == '_') {
      upper_next = true;
    } else if (upper_next) {
      out.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
      upper_next = false;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

const FieldInfo* TableInfo::FindJson(std::string_view name) const {
  auto it = by_json_name.find(std::string(name));
  return it == by_json_name.end() ? nullptr : it->second;
}

SchemaIndex::SchemaIndex(const uint8_t* bfbs) : schema_(reflection::GetSchema(bfbs)) {
  tables_.resize(schema_->objects()->size());
  for (unsigned i = 0; i < schema_->objects()->size(); ++i) {
    const reflection::Object* object = schema_->objects()->Get(i);
    TableInfo& table = tables_[i];
    table.object = object;
    table.int_or_string = Attribute(object->attributes(), "int_or_string") != nullptr;
    for (const reflection::Field* field : *object->fields()) {
      if (field->deprecated()) continue;
      FieldInfo info;
      info.field = field;
      const flatbuffers::String* k8s = Attribute(field->attributes(), "k8s");
      info.json_name = k8s ? k8s->str() : LowerCamel(field->name()->string_view());
      info.quantity = Attribute(field->attributes(), "quantity") != nullptr;
      info.time = Attribute(field->attributes(), "time") != nullptr;
      info.raw_json = Attribute(field->attributes(), "raw_json") != nullptr;
      if (const flatbuffers::String* key = Attribute(field->attributes(), "merge_key")) info.merge_key = key->str();
      info.merge_set = Attribute(field->attributes(), "merge_set") != nullptr;
      table.fields.push_back(std::move(info));
    }
    std::sort(table.fields.begin(), table.fields.end(),
              [](const FieldInfo& a, const FieldInfo& b) { return a.field->id() < b.field->id(); });
    for (const FieldInfo& f : table.fields) table.by_json_name.emplace(f.json_name, &f);
    table.map_entry = table.fields.size() == 2 && table.fields[0].json_name == "key" &&
                      table.fields[0].field->key() && table.fields[1].json_name == "value";
  }
}

const TableInfo* SchemaIndex::FindTable(std::string_view name) const {
  const reflection::Object* object = schema_->objects()->LookupByKey(std::string(name).c_str());
  if (object == nullptr) return nullptr;
  for (const TableInfo& t : tables_) {
    if (t.object == object) return &t;
  }
  return nullptr;
}

}  // namespace podflow::model
