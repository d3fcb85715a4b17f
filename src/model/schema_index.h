// SchemaIndex: what the codec needs from the embedded binary schema, worked
// out once: per table its fields in declaration order with their Kubernetes
// JSON names and codec attributes, and a lookup by JSON name.
// Private to src/model.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <flatbuffers/reflection.h>

namespace podflow::model {

struct FieldInfo {
  const reflection::Field* field = nullptr;
  std::string json_name;  // "imagePullPolicy", or the (k8s: ...) override
  bool quantity = false;  // (quantity): a string holding a Quantity
  bool time = false;      // (time): a string holding an RFC 3339 time
  bool raw_json = false;  // (raw_json): a string holding JSON text
  std::string merge_key;  // (merge_key: "name"): a list merged by this key
  bool merge_set = false; // (merge_set): a list of scalars merged as a set
};

struct TableInfo {
  const reflection::Object* object = nullptr;
  std::vector<FieldInfo> fields;  // by field id: declaration order
  std::unordered_map<std::string, const FieldInfo*> by_json_name;
  bool map_entry = false;      // {key (key): string; value: string}: a JSON object entry
  bool int_or_string = false;  // (int_or_string): a JSON int or string
  const FieldInfo* FindJson(std::string_view name) const;
};

class SchemaIndex {
 public:
  // `bfbs` must outlive the index (it is the embedded, static schema).
  explicit SchemaIndex(const uint8_t* bfbs);

  const reflection::Schema& schema() const { return *schema_; }
  // The table called `name` ("podflow.api.Pod"), or nullptr.
  const TableInfo* FindTable(std::string_view name) const;
  const TableInfo& Table(int index) const { return tables_[static_cast<size_t>(index)]; }
  const reflection::Enum& Enum(int index) const { return *schema_->enums()->Get(static_cast<unsigned>(index)); }

  // lowerCamelCase of a snake_case name: "image_pull_policy" -> "imagePullPolicy".
  static std::string LowerCamel(std::string_view snake);

 private:
  const reflection::Schema* schema_;
  std::vector<TableInfo> tables_;  // same order as schema_->objects()
};

}  // namespace podflow::model
