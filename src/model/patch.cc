#include "model/patch.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/codec_internal.h"

namespace podflow::model {
namespace {

// ---- Value helpers: patches build new trees, they never edit in place ----

Value WithMember(const Value& object, const std::string& key, Value v) {
  Value out = Value::Object();
  bool placed = false;
  for (const auto& [k, member] : object.members()) {
    if (k == key) {
      out.Set(k, std::move(v));
      placed = true;
    } else {
      out.Set(k, member);
    }
  }
  if (!placed) out.Set(key, std::move(v));
  return out;
}

Value WithoutMember(const Value& object, std::string_view key) {
  Value out = Value::Object();
  for (const auto& [k, member] : object.members()) {
    if (k != key) out.Set(k, member);
  }
  return out;
}

Value ArrayOf(std::vector<Value> items) {
  Value out = Value::Array();
  for (Value& v : items) out.Append(std::move(v));
  return out;
}

// JSON's equality (RFC 6902 4.6): objects whatever their member order,
// numbers by value.
bool Same(const Value& a, const Value& b) {
  const bool a_number = a.kind() == Value::Kind::kInt || a.kind() == Value::Kind::kNumber;
  const bool b_number = b.kind() == Value::Kind::kInt || b.kind() == Value::Kind::kNumber;
  if (a_number && b_number) {
    if (a.kind() == Value::Kind::kInt && b.kind() == Value::Kind::kInt) return a.int_value() == b.int_value();
    auto as_double = [](const Value& v) {
      return v.kind() == Value::Kind::kInt ? static_cast<double>(v.int_value()) : v.number_value();
    };
    return as_double(a) == as_double(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kArray:
      return std::equal(a.items().begin(), a.items().end(), b.items().begin(), b.items().end(), Same);
    case Value::Kind::kObject:
      if (a.members().size() != b.members().size()) return false;
      return std::all_of(a.members().begin(), a.members().end(), [&](const auto& m) {
        const Value* other = b.Find(m.first);
        return other != nullptr && Same(m.second, *other);
      });
    default:
      return a == b;
  }
}

// ---- The schema beside the tree: which lists merge and on what key ----

// Where a strategic merge is in the object's schema; null table: a map or
// free-form JSON, merged as plain maps with lists replaced.
struct Schema {
  const TableInfo* table = nullptr;

  const FieldInfo* Field(std::string_view json_name) const {
    return table == nullptr ? nullptr : table->FindJson(json_name);
  }
  // The table a field's value (or each element of a list) is.
  Schema Child(std::string_view json_name) const {
    const FieldInfo* f = Field(json_name);
    if (f == nullptr) return {};
    const reflection::Type* type = f->field->type();
    const bool object = type->base_type() == reflection::Obj ||
                        (type->base_type() == reflection::Vector && type->element() == reflection::Obj);
    if (!object) return {};
    const TableInfo& child = ApiSchema().Table(type->index());
    if (child.map_entry || child.int_or_string) return {};
    return {&child};
  }
};

Schema RootSchema(const KindInfo& kind) { return {ApiSchema().FindTable(kind.table)}; }

// ---- JSON merge patch (RFC 7386) ----

// Merges `patch`'s members into `target`'s in one pass, in the target's
// order with new members after: `merge(current or null, change)` gives
// each member's new value, nullopt drops it. Linear in both sizes, so that
// a patch of many members costs what its size does.
template <typename Merge>
Result<Value> MergeMembers(const Value& target, const std::vector<std::pair<std::string, const Value*>>& changes,
                           const Merge& merge) {
  std::unordered_map<std::string_view, const Value*> by_key;
  for (const auto& [key, value] : changes) by_key[key] = value;  // the last one of a key counts
  Value out = Value::Object();
  std::unordered_set<std::string_view> done;
  auto place = [&](const std::string& key, const Value* current, const Value& change) -> Status {
    done.insert(key);
    Result<std::optional<Value>> merged = merge(current, change, key);
    if (!merged.ok()) return merged.status();
    if (*merged) out.Set(key, std::move(**merged));
    return Status::Ok();
  };
  if (target.kind() == Value::Kind::kObject) {
    for (const auto& [key, value] : target.members()) {
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        out.Set(key, value);
      } else {
        PODFLOW_RETURN_IF_ERROR(place(key, &value, *it->second));
      }
    }
  }
  for (const auto& [key, value] : changes) {
    if (done.contains(key)) continue;
    PODFLOW_RETURN_IF_ERROR(place(key, nullptr, *by_key[key]));
  }
  return out;
}

std::vector<std::pair<std::string, const Value*>> MembersOf(const Value& object, bool skip_directives) {
  std::vector<std::pair<std::string, const Value*>> out;
  for (const auto& [key, value] : object.members()) {
    if (!skip_directives || !key.starts_with("$")) out.emplace_back(key, &value);
  }
  return out;
}

Value MergePatch(const Value& target, const Value& patch) {
  if (patch.kind() != Value::Kind::kObject) return patch;
  Result<Value> out = MergeMembers(
      target, MembersOf(patch, false),
      [](const Value* current, const Value& change, const std::string&) -> Result<std::optional<Value>> {
        if (change.kind() == Value::Kind::kNull) return std::optional<Value>();
        return std::optional<Value>(MergePatch(current ? *current : Value(), change));
      });
  return std::move(*out);  // merge patches never fail
}

// ---- JSON patch (RFC 6902) ----

// A JSON pointer's reference tokens, unescaped (~1 is "/", ~0 is "~").
Result<std::vector<std::string>> ParsePointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') return Status::Invalid("JSON pointer must be empty or start with a \"/\": " + pointer);
  size_t start = 1;
  while (true) {
    size_t end = pointer.find('/', start);
    std::string raw = pointer.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token.push_back(raw[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        token.push_back(raw[i]);
      }
    }
    tokens.push_back(std::move(token));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return tokens;
}

// An array index token: digits only, no leading zero; nullopt otherwise.
std::optional<size_t> IndexOf(const std::string& token) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  if (!std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return static_cast<size_t>(std::stoul(token));
}

Status Missing(std::string_view op, const std::string& path) {
  return Status::Invalid(std::string(op) + " operation does not apply: doc is missing path: \"" + path +
                         "\": missing value");
}

const Value* Child(const Value& container, const std::string& token) {
  if (container.kind() == Value::Kind::kObject) return container.Find(token);
  if (container.kind() == Value::Kind::kArray) {
    std::optional<size_t> i = IndexOf(token);
    if (i && *i < container.items().size()) return &container.items()[*i];
  }
  return nullptr;
}

const Value* Resolve(const Value& doc, const std::vector<std::string>& tokens) {
  const Value* at = &doc;
  for (const std::string& t : tokens) {
    at = Child(*at, t);
    if (at == nullptr) return nullptr;
  }
  return at;
}

// Rewrites the container that holds the pointer's last token with `edit`.
using Edit = std::function<Result<Value>(const Value& container, const std::string& token)>;

Result<Value> EditAt(const Value& doc, const std::vector<std::string>& tokens, size_t i, const Edit& edit,
                     std::string_view op, const std::string& path) {
  if (i + 1 == tokens.size()) return edit(doc, tokens[i]);
  const Value* child = Child(doc, tokens[i]);
  if (child == nullptr) return Missing(op, path);
  Result<Value> changed = EditAt(*child, tokens, i + 1, edit, op, path);
  if (!changed.ok()) return changed.status();
  if (doc.kind() == Value::Kind::kObject) return WithMember(doc, tokens[i], std::move(*changed));
  std::vector<Value> items = doc.items();
  items[*IndexOf(tokens[i])] = std::move(*changed);
  return ArrayOf(std::move(items));
}

Result<Value> Add(const Value& doc, const std::vector<std::string>& tokens, Value value, const std::string& path) {
  if (tokens.empty()) return value;
  return EditAt(doc, tokens, 0,
                [&](const Value& container, const std::string& token) -> Result<Value> {
                  if (container.kind() == Value::Kind::kObject) return WithMember(container, token, value);
                  if (container.kind() != Value::Kind::kArray) return Missing("add", path);
                  std::vector<Value> items = container.items();
                  if (token == "-") {
                    items.push_back(value);
                  } else {
                    std::optional<size_t> i = IndexOf(token);
                    if (!i || *i > items.size()) {
                      return Status::Invalid("add operation does not apply: index out of range: " + path);
                    }
                    items.insert(items.begin() + static_cast<std::ptrdiff_t>(*i), value);
                  }
                  return ArrayOf(std::move(items));
                },
                "add", path);
}

Result<Value> Remove(const Value& doc, const std::vector<std::string>& tokens, const std::string& path) {
  if (tokens.empty()) return Value();
  return EditAt(doc, tokens, 0,
                [&](const Value& container, const std::string& token) -> Result<Value> {
                  if (Child(container, token) == nullptr) {
                    return Status::Invalid("remove operation does not apply: doc is missing key: " + path +
                                           ": missing value");
                  }
                  if (container.kind() == Value::Kind::kObject) return WithoutMember(container, token);
                  std::vector<Value> items = container.items();
                  items.erase(items.begin() + static_cast<std::ptrdiff_t>(*IndexOf(token)));
                  return ArrayOf(std::move(items));
                },
                "remove", path);
}

Result<Value> Replace(const Value& doc, const std::vector<std::string>& tokens, Value value,
                      const std::string& path) {
  if (tokens.empty()) return value;
  return EditAt(doc, tokens, 0,
                [&](const Value& container, const std::string& token) -> Result<Value> {
                  if (Child(container, token) == nullptr) {
                    return Status::Invalid("replace operation does not apply: doc is missing key: " + path +
                                           ": missing value");
                  }
                  if (container.kind() == Value::Kind::kObject) return WithMember(container, token, value);
                  std::vector<Value> items = container.items();
                  items[*IndexOf(token)] = value;
                  return ArrayOf(std::move(items));
                },
                "replace", path);
}

Result<Value> JsonPatch(const Value& target, const Value& patch) {
  if (patch.kind() != Value::Kind::kArray) {
    return Status::Invalid("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  }
  Value doc = target;
  for (const Value& op : patch.items()) {
    auto text = [&](std::string_view key) -> std::string {
      const Value* v = op.kind() == Value::Kind::kObject ? op.Find(key) : nullptr;
      return v != nullptr && v->kind() == Value::Kind::kString ? v->string_value() : std::string();
    };
    const std::string name = text("op");
    const std::string path = text("path");
    if (op.kind() != Value::Kind::kObject || op.Find("path") == nullptr) {
      return Status::Invalid("operation missing path field");
    }
    Result<std::vector<std::string>> tokens = ParsePointer(path);
    if (!tokens.ok()) return tokens.status();
    const Value* value = op.kind() == Value::Kind::kObject ? op.Find("value") : nullptr;
    auto need_value = [&]() -> Status {
      return value != nullptr ? Status::Ok() : Status::Invalid(name + " operation has no \"value\": " + path);
    };
    Result<Value> next = doc;
    if (name == "add") {
      PODFLOW_RETURN_IF_ERROR(need_value());
      next = Add(doc, *tokens, *value, path);
    } else if (name == "remove") {
      next = Remove(doc, *tokens, path);
    } else if (name == "replace") {
      PODFLOW_RETURN_IF_ERROR(need_value());
      next = Replace(doc, *tokens, *value, path);
    } else if (name == "move" || name == "copy") {
      const std::string from = text("from");
      Result<std::vector<std::string>> from_tokens = ParsePointer(from);
      if (!from_tokens.ok()) return from_tokens.status();
      const Value* source = Resolve(doc, *from_tokens);
      if (source == nullptr) return Missing(name, from);
      Value moved = *source;
      if (name == "move") {
        if (path.starts_with(from + "/")) {
          return Status::Invalid("move operation does not apply: cannot move \"" + from + "\" into its own child \"" +
                                 path + "\"");
        }
        next = Remove(doc, *from_tokens, from);
        if (!next.ok()) return next.status();
        next = Add(*next, *tokens, std::move(moved), path);
      } else {
        next = Add(doc, *tokens, std::move(moved), path);
      }
    } else if (name == "test") {
      PODFLOW_RETURN_IF_ERROR(need_value());
      const Value* found = Resolve(doc, *tokens);
      if (found == nullptr || !Same(*found, *value)) {
        return Status::Invalid("testing value " + path + " failed: test failed");
      }
    } else {
      return Status::Invalid("Unexpected kind: " + name);
    }
    if (!next.ok()) return next.status();
    doc = std::move(*next);
  }
  return doc;
}

// ---- Strategic merge patch ----

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";

std::string DirectiveOf(const Value& v) {
  if (v.kind() != Value::Kind::kObject) return "";
  const Value* d = v.Find(kPatchDirective);
  return d != nullptr && d->kind() == Value::Kind::kString ? d->string_value() : "";
}

bool IsDirectiveKey(std::string_view key) { return key.starts_with("$"); }

// The patch without its directives, at every depth: what is left to store
// where the patch adds something the target did not have.
Value StripDirectives(const Value& v) {
  if (v.kind() == Value::Kind::kObject) {
    Value out = Value::Object();
    for (const auto& [k, member] : v.members()) {
      if (!IsDirectiveKey(k)) out.Set(k, StripDirectives(member));
    }
    return out;
  }
  if (v.kind() == Value::Kind::kArray) {
    Value out = Value::Array();
    for (const Value& item : v.items()) {
      if (DirectiveOf(item) == "delete" || DirectiveOf(item) == "replace") continue;
      out.Append(StripDirectives(item));
    }
    return out;
  }
  return v;
}

const Value* KeyOf(const Value& element, const std::string& merge_key) {
  return element.kind() == Value::Kind::kObject ? element.Find(merge_key) : nullptr;
}

// The elements of `list` put in the order `order` gives (by merge key, or
// by value for a set); elements `order` does not name follow, as they were.
Value Reorder(const Value& list, const Value& order, const std::string& merge_key) {
  std::vector<Value> items = list.items();
  auto rank = [&](const Value& item) -> size_t {
    const Value* key = merge_key.empty() ? &item : KeyOf(item, merge_key);
    for (size_t i = 0; key != nullptr && i < order.items().size(); ++i) {
      const Value& want = order.items()[i];
      const Value* want_key = merge_key.empty() ? &want : KeyOf(want, merge_key);
      if (want_key != nullptr && *want_key == *key) return i;
    }
    return order.items().size();
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) { return rank(a) < rank(b); });
  return ArrayOf(std::move(items));
}

Result<Value> StrategicMap(const Value& target, const Value& patch, const Schema& schema);

Result<Value> StrategicList(const Value& target, const Value& patch, const FieldInfo* field, const Schema& element,
                            const std::string& name) {
  if (patch.kind() != Value::Kind::kArray) return StripDirectives(patch);
  if (field != nullptr && field->merge_set) {
    std::vector<Value> items = target.kind() == Value::Kind::kArray ? target.items() : std::vector<Value>();
    for (const Value& v : patch.items()) {
      if (std::find(items.begin(), items.end(), v) == items.end()) items.push_back(v);
    }
    return ArrayOf(std::move(items));
  }
  if (field == nullptr || field->merge_key.empty()) {
    for (const Value& item : patch.items()) {
      std::string d = DirectiveOf(item);
      if (!d.empty() && d != "replace") {
        return Status::Invalid("Unknown patch directive " + d + " in the list " + name + " that has no merge key");
      }
    }
    return StripDirectives(patch);
  }
  const std::string& key = field->merge_key;
  // {$patch: replace} among the elements: the list becomes the others.
  for (const Value& item : patch.items()) {
    if (DirectiveOf(item) == "replace") return StripDirectives(patch);
  }
  // Elements by the JSON text of their key, so that each patch element
  // finds its match at once; deleted ones are marked, then left out.
  std::vector<Value> items = target.kind() == Value::Kind::kArray ? target.items() : std::vector<Value>();
  std::vector<bool> deleted(items.size(), false);
  std::unordered_map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < items.size(); ++i) {
    if (const Value* k = KeyOf(items[i], key)) by_key[ToJson(*k)].push_back(i);
  }
  for (const Value& item : patch.items()) {
    const Value* k = KeyOf(item, key);
    if (k == nullptr) {
      return Status::Invalid("map: " + ToJson(item) + " does not contain declared merge key: " + key);
    }
    std::vector<size_t>& matches = by_key[ToJson(*k)];
    std::erase_if(matches, [&](size_t i) { return deleted[i]; });
    if (DirectiveOf(item) == "delete") {
      for (size_t i : matches) deleted[i] = true;
      matches.clear();
      continue;
    }
    if (matches.empty()) {
      matches.push_back(items.size());
      items.push_back(StripDirectives(item));
      deleted.push_back(false);
      continue;
    }
    Result<Value> merged = StrategicMap(items[matches.front()], item, element);
    if (!merged.ok()) return merged.status();
    items[matches.front()] = std::move(*merged);
  }
  std::vector<Value> kept;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!deleted[i]) kept.push_back(std::move(items[i]));
  }
  return ArrayOf(std::move(kept));
}

Result<Value> StrategicMap(const Value& target, const Value& patch, const Schema& schema) {
  if (patch.kind() != Value::Kind::kObject) return patch;
  const std::string directive = DirectiveOf(patch);
  if (directive == "replace") return StripDirectives(patch);
  if (directive == "delete") return Value::Object();
  if (!directive.empty() && directive != "merge") return Status::Invalid("Unknown patch directive " + directive);
  Value result = target.kind() == Value::Kind::kObject ? target : Value::Object();
  if (const Value* retain = patch.Find(kRetainKeys); retain != nullptr && retain->kind() == Value::Kind::kArray) {
    Value kept = Value::Object();
    for (const auto& [k, v] : result.members()) {
      if (std::find(retain->items().begin(), retain->items().end(), Value::String(k)) != retain->items().end()) {
        kept.Set(k, v);
      }
    }
    result = std::move(kept);
  }
  for (const auto& [key, value] : patch.members()) {
    if (key.starts_with(kDeleteFromPrimitiveList)) {
      const std::string field = key.substr(kDeleteFromPrimitiveList.size());
      const Value* list = result.Find(field);
      if (list == nullptr || list->kind() != Value::Kind::kArray || value.kind() != Value::Kind::kArray) continue;
      Value kept = Value::Array();
      for (const Value& v : list->items()) {
        if (std::find(value.items().begin(), value.items().end(), v) == value.items().end()) kept.Append(v);
      }
      result = WithMember(result, field, std::move(kept));
    }
  }
  Result<Value> merged = MergeMembers(
      result, MembersOf(patch, true),
      [&](const Value* current, const Value& change, const std::string& key) -> Result<std::optional<Value>> {
        if (change.kind() == Value::Kind::kNull) return std::optional<Value>();
        Result<Value> value = change;
        if (change.kind() == Value::Kind::kObject) {
          if (DirectiveOf(change) == "delete") return std::optional<Value>();
          value = StrategicMap(current ? *current : Value(), change, schema.Child(key));
        } else if (change.kind() == Value::Kind::kArray) {
          value = StrategicList(current ? *current : Value(), change, schema.Field(key), schema.Child(key), key);
        }
        if (!value.ok()) return value.status();
        return std::optional<Value>(std::move(*value));
      });
  if (!merged.ok()) return merged.status();
  result = std::move(*merged);
  for (const auto& [key, value] : patch.members()) {
    if (!key.starts_with(kSetElementOrder) || value.kind() != Value::Kind::kArray) continue;
    const std::string field = key.substr(kSetElementOrder.size());
    const Value* list = result.Find(field);
    if (list == nullptr || list->kind() != Value::Kind::kArray) continue;
    const FieldInfo* info = schema.Field(field);
    result = WithMember(result, field, Reorder(*list, value, info != nullptr ? info->merge_key : std::string()));
  }
  return result;
}

// ---- kubectl apply's three-way patch ----

// What `to` adds or changes relative to `from` (nothing for what `from`
// has alone): the additions and changes of a two-way diff.
Value Changes(const Value& from, const Value& to, const Schema& schema);
// What `from` has that `to` has not: null for a field, {key, $patch:
// delete} for an element of a keyed list, $deleteFromPrimitiveList for a
// set's values.
Value Deletions(const Value& from, const Value& to, const Schema& schema);

bool Empty(const Value& v) { return v.kind() == Value::Kind::kObject && v.members().empty(); }

Value ListChanges(const Value& from, const Value& to, const FieldInfo* field, const Schema& element) {
  if (field != nullptr && field->merge_set) {
    Value added = Value::Array();
    for (const Value& v : to.items()) {
      if (std::find(from.items().begin(), from.items().end(), v) == from.items().end()) added.Append(v);
    }
    return added;
  }
  if (field == nullptr || field->merge_key.empty()) return Same(to, from) ? Value::Array() : to;
  const std::string& key = field->merge_key;
  Value changed = Value::Array();
  for (const Value& item : to.items()) {
    const Value* k = KeyOf(item, key);
    const Value* match = nullptr;
    for (const Value& f : from.items()) {
      const Value* fk = KeyOf(f, key);
      if (k != nullptr && fk != nullptr && *fk == *k) match = &f;
    }
    if (match == nullptr) {
      changed.Append(item);
      continue;
    }
    Value diff = Changes(*match, item, element);
    if (Empty(diff)) continue;
    changed.Append(WithMember(diff, key, *k));
  }
  return changed;
}

Value Changes(const Value& from, const Value& to, const Schema& schema) {
  Value out = Value::Object();
  if (to.kind() != Value::Kind::kObject) return out;
  for (const auto& [key, value] : to.members()) {
    const Value* old = from.kind() == Value::Kind::kObject ? from.Find(key) : nullptr;
    if (old == nullptr || (old->kind() != value.kind() && !Same(*old, value))) {
      out.Set(key, value);
    } else if (value.kind() == Value::Kind::kObject) {
      Value diff = Changes(*old, value, schema.Child(key));
      if (!Empty(diff)) out.Set(key, std::move(diff));
    } else if (value.kind() == Value::Kind::kArray) {
      Value diff = ListChanges(*old, value, schema.Field(key), schema.Child(key));
      const FieldInfo* f = schema.Field(key);
      const bool merged = f != nullptr && (f->merge_set || !f->merge_key.empty());
      if (merged ? !diff.items().empty() : !Same(*old, value)) out.Set(key, std::move(diff));
    } else if (!Same(*old, value)) {
      out.Set(key, value);
    }
  }
  return out;
}

Value Deletions(const Value& from, const Value& to, const Schema& schema) {
  Value out = Value::Object();
  if (from.kind() != Value::Kind::kObject) return out;
  for (const auto& [key, value] : from.members()) {
    const Value* now = to.kind() == Value::Kind::kObject ? to.Find(key) : nullptr;
    if (now == nullptr) {
      out.Set(key, Value());
      continue;
    }
    if (value.kind() == Value::Kind::kObject && now->kind() == Value::Kind::kObject) {
      Value diff = Deletions(value, *now, schema.Child(key));
      if (!Empty(diff)) out.Set(key, std::move(diff));
      continue;
    }
    if (value.kind() != Value::Kind::kArray || now->kind() != Value::Kind::kArray) continue;
    const FieldInfo* field = schema.Field(key);
    if (field == nullptr) continue;
    if (field->merge_set) {
      Value gone = Value::Array();
      for (const Value& v : value.items()) {
        if (std::find(now->items().begin(), now->items().end(), v) == now->items().end()) gone.Append(v);
      }
      if (!gone.items().empty()) out.Set(std::string(kDeleteFromPrimitiveList) + key, std::move(gone));
      continue;
    }
    if (field->merge_key.empty()) continue;
    Value list = Value::Array();
    for (const Value& item : value.items()) {
      const Value* k = KeyOf(item, field->merge_key);
      if (k == nullptr) continue;
      const Value* match = nullptr;
      for (const Value& n : now->items()) {
        const Value* nk = KeyOf(n, field->merge_key);
        if (nk != nullptr && *nk == *k) match = &n;
      }
      if (match == nullptr) {
        Value del = Value::Object();
        del.Set(field->merge_key, *k);
        del.Set(std::string(kPatchDirective), Value::String("delete"));
        list.Append(std::move(del));
        continue;
      }
      Value diff = Deletions(item, *match, schema.Child(key));
      if (!Empty(diff)) list.Append(WithMember(diff, field->merge_key, *k));
    }
    if (!list.items().empty()) out.Set(key, std::move(list));
  }
  return out;
}

// Both halves in one patch: a key in both is merged (lists concatenated:
// their elements name different keys or carry different directives).
Value Combine(const Value& a, const Value& b) {
  if (a.kind() != Value::Kind::kObject || b.kind() != Value::Kind::kObject) return b;
  Value out = a;
  for (const auto& [key, value] : b.members()) {
    const Value* mine = out.Find(key);
    if (mine == nullptr || mine->kind() == Value::Kind::kNull) {
      out = WithMember(out, key, value);
    } else if (mine->kind() == Value::Kind::kArray && value.kind() == Value::Kind::kArray) {
      std::vector<Value> items = mine->items();
      items.insert(items.end(), value.items().begin(), value.items().end());
      out = WithMember(out, key, ArrayOf(std::move(items)));
    } else {
      out = WithMember(out, key, Combine(*mine, value));
    }
  }
  return out;
}

}  // namespace

Result<PatchType> ParsePatchType(std::string_view name) {
  if (name == "json" || name == "application/json-patch+json") return PatchType::kJson;
  if (name == "merge" || name == "application/merge-patch+json") return PatchType::kMerge;
  if (name == "strategic" || name == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  return Status::Invalid("--type must be one of [json merge strategic], not \"" + std::string(name) + "\"");
}

std::string_view PatchMediaType(PatchType type) {
  switch (type) {
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kStrategic: return "application/strategic-merge-patch+json";
  }
  return "";
}

Result<Value> ApplyPatch(PatchType type, const KindInfo& kind, const Value& target, const Value& patch) {
  switch (type) {
    case PatchType::kJson:
      return JsonPatch(target, patch);
    case PatchType::kMerge:
      if (patch.kind() != Value::Kind::kObject) return Status::Invalid("a merge patch must be a JSON object");
      return MergePatch(target, patch);
    case PatchType::kStrategic:
      if (patch.kind() != Value::Kind::kObject) {
        return Status::Invalid("a strategic merge patch must be a JSON object");
      }
      return StrategicMap(target, patch, RootSchema(kind));
  }
  return Status::Invalid("unknown patch type");
}

Value ThreeWayMergePatch(const KindInfo& kind, const Value& original, const Value& modified, const Value& current) {
  const Schema root = RootSchema(kind);
  return Combine(Deletions(original, modified, root), Changes(current, modified, root));
}

}  // namespace podflow::model
