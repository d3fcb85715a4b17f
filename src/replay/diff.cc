// DiffValues: the field paths that differ between two object trees.
#include <algorithm>
#include <set>

#include "replay/replay.h"

namespace podflow::replay {

namespace {

using Kind = model::Value::Kind;

constexpr std::string_view kAbsent = "<none>";

std::string Render(const model::Value* v) {
  return v == nullptr ? std::string(kAbsent) : model::ToJson(*v, 0);
}

// The member every item of `items` is identified by ("name", else "type"),
// or "" when the items are not all objects with a unique string there.
std::string IdentityKey(const std::vector<model::Value>& a, const std::vector<model::Value>& b) {
  for (std::string_view field : {"name", "type"}) {
    bool ok = true;
    for (const auto* items : {&a, &b}) {
      std::set<std::string> seen;
      for (const model::Value& item : *items) {
        const model::Value* id = item.kind() == Kind::kObject ? item.Find(field) : nullptr;
        if (id == nullptr || id->kind() != Kind::kString ||
            !seen.insert(id->string_value()).second) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
    if (ok && (!a.empty() || !b.empty())) return std::string(field);
  }
  return "";
}

const model::Value* FindById(const std::vector<model::Value>& items, const std::string& field,
                             const std::string& id) {
  for (const model::Value& item : items) {
    if (item.Find(field)->string_value() == id) return &item;
  }
  return nullptr;
}

void Diff(const std::string& path, const model::Value* a, const model::Value* b,
          std::vector<FieldChange>* out) {
  if (a != nullptr && b != nullptr && *a == *b) return;
  if (a == nullptr && b == nullptr) return;
  // Both objects: member by member, in the order of `a` then new members of `b`.
  if (a != nullptr && b != nullptr && a->kind() == Kind::kObject && b->kind() == Kind::kObject) {
    auto child = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
    for (const auto& [k, va] : a->members()) Diff(child(k), &va, b->Find(k), out);
    for (const auto& [k, vb] : b->members()) {
      if (a->Find(k) == nullptr) Diff(child(k), nullptr, &vb, out);
    }
    return;
  }
  if (a != nullptr && b != nullptr && a->kind() == Kind::kArray && b->kind() == Kind::kArray) {
    const std::string id = IdentityKey(a->items(), b->items());
    if (!id.empty()) {
      for (const model::Value& ia : a->items()) {
        const std::string& name = ia.Find(id)->string_value();
        Diff(path + "[" + id + "=" + name + "]", &ia, FindById(b->items(), id, name), out);
      }
      for (const model::Value& ib : b->items()) {
        const std::string& name = ib.Find(id)->string_value();
        if (FindById(a->items(), id, name) == nullptr) {
          Diff(path + "[" + id + "=" + name + "]", nullptr, &ib, out);
        }
      }
      return;
    }
    const size_t n = std::max(a->items().size(), b->items().size());
    for (size_t i = 0; i < n; ++i) {
      Diff(path + "[" + std::to_string(i) + "]", i < a->items().size() ? &a->items()[i] : nullptr,
           i < b->items().size() ? &b->items()[i] : nullptr, out);
    }
    return;
  }
  // An object that appears or disappears as a whole: list its leaves, so
  // "status.podIP" shows up rather than one "status" blob.
  static const model::Value kEmpty = model::Value::Object();
  if (a == nullptr && b->kind() == Kind::kObject) return Diff(path, &kEmpty, b, out);
  if (b == nullptr && a->kind() == Kind::kObject) return Diff(path, a, &kEmpty, out);
  out->push_back({path, Render(a), Render(b)});
}

}  // namespace

std::vector<FieldChange> DiffValues(const model::Value& before, const model::Value& after) {
  std::vector<FieldChange> out;
  Diff("", &before, &after, &out);
  return out;
}

}  // namespace podflow::replay
