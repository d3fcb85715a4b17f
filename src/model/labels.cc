// Label maps and label selectors with Kubernetes' matching rules.
#include "model/labels.h"

#include <algorithm>
#include <cctype>

namespace podflow::model {

const std::string* FindLabel(const Labels& labels, std::string_view key) {
  // Most label maps are small: a scan comparing lengths first touches fewer
  // bytes than a binary search comparing strings.
  if (labels.size() <= 8) {
    for (const auto& [k, v] : labels) {
      if (k.size() == key.size() && k == key) return &v;
    }
    return nullptr;
  }
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

Labels LabelsFromEntries(
    const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* entries) {
  Labels out;
  if (entries == nullptr) return out;
  out.reserve(entries->size());
  for (const api::StringEntry* e : *entries) {
    if (e->key() == nullptr) continue;
    out.emplace_back(e->key()->str(), e->value() != nullptr ? e->value()->str() : std::string());
  }
  // Stored maps are sorted by key already; sorting again keeps FindLabel
  // correct for hand-built buffers too.
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.first == b.first; }),
            out.end());
  return out;
}

LabelSelector LabelSelector::Everything() {
  LabelSelector s;
  s.nothing_ = false;
  return s;
}

namespace {

std::string_view OperatorName(api::LabelSelectorOperator op) {
  switch (op) {
    case api::LabelSelectorOperator::In: return "In";
    case api::LabelSelectorOperator::NotIn: return "NotIn";
    case api::LabelSelectorOperator::Exists: return "Exists";
    case api::LabelSelectorOperator::DoesNotExist: return "DoesNotExist";
    case api::LabelSelectorOperator::Unset: break;
  }
  return "";
}

bool RequirementLess(const LabelSelectorRequirement& a, const LabelSelectorRequirement& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.op != b.op) return a.op < b.op;
  return a.values < b.values;
}

}  // namespace

Result<LabelSelector> LabelSelector::FromApi(const api::LabelSelector* selector) {
  if (selector == nullptr) return Nothing();
  LabelSelector out = Everything();
  if (selector->match_labels() != nullptr) {
    for (const api::StringEntry* e : *selector->match_labels()) {
      if (e->key() == nullptr) continue;
      out.Add({e->key()->str(), api::LabelSelectorOperator::In,
               {e->value() != nullptr ? e->value()->str() : std::string()}});
    }
  }
  if (selector->match_expressions() != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < selector->match_expressions()->size(); ++i) {
      const api::LabelSelectorRequirement* e = selector->match_expressions()->Get(i);
      LabelSelectorRequirement r;
      r.key = e->key() != nullptr ? e->key()->str() : std::string();
      r.op = e->operator_();
      if (e->values() != nullptr) {
        for (const flatbuffers::String* v : *e->values()) r.values.push_back(v->str());
      }
      const std::string where = "matchExpressions[" + std::to_string(i) + "]: ";
      switch (r.op) {
        case api::LabelSelectorOperator::In:
        case api::LabelSelectorOperator::NotIn:
          if (r.values.empty()) {
            return Status::Invalid(where + "values must be non-empty for operator " +
                                   std::string(OperatorName(r.op)));
          }
          break;
        case api::LabelSelectorOperator::Exists:
        case api::LabelSelectorOperator::DoesNotExist:
          if (!r.values.empty()) {
            return Status::Invalid(where + "values must be empty for operator " +
                                   std::string(OperatorName(r.op)));
          }
          break;
        case api::LabelSelectorOperator::Unset:
          return Status::Invalid(where + "operator is not one of In, NotIn, Exists, DoesNotExist");
      }
      out.Add(std::move(r));
    }
  }
  return out;
}

Result<LabelSelector> LabelSelector::FromNative(const api::LabelSelectorT* selector) {
  if (selector == nullptr) return Nothing();
  flatbuffers::FlatBufferBuilder fbb(256);
  fbb.Finish(api::LabelSelector::Pack(fbb, selector));
  return FromApi(flatbuffers::GetRoot<api::LabelSelector>(fbb.GetBufferPointer()));
}

void LabelSelector::Add(LabelSelectorRequirement r) {
  if (nothing_) return;
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  auto at = std::upper_bound(requirements_.begin(), requirements_.end(), r, RequirementLess);
  requirements_.insert(at, std::move(r));
}

bool Matches(const LabelSelectorRequirement& r, const Labels& labels) {
  const std::string* value = FindLabel(labels, r.key);
  switch (r.op) {
    case api::LabelSelectorOperator::In:
      return value != nullptr && std::binary_search(r.values.begin(), r.values.end(), *value);
    case api::LabelSelectorOperator::NotIn:
      return value == nullptr || !std::binary_search(r.values.begin(), r.values.end(), *value);
    case api::LabelSelectorOperator::Exists:
      return value != nullptr;
    case api::LabelSelectorOperator::DoesNotExist:
      return value == nullptr;
    case api::LabelSelectorOperator::Unset:
      break;
  }
  return false;
}

bool LabelSelector::Matches(const Labels& labels) const {
  if (nothing_) return false;
  for (const LabelSelectorRequirement& r : requirements_) {
    if (!model::Matches(r, labels)) return false;
  }
  return true;
}

std::string LabelSelector::String() const {
  if (nothing_) return "<none>";
  std::string out;
  for (const LabelSelectorRequirement& r : requirements_) {
    if (!out.empty()) out += ",";
    auto list = [&] {
      std::string l = "(";
      for (size_t i = 0; i < r.values.size(); ++i) l += (i ? "," : "") + r.values[i];
      return l + ")";
    };
    switch (r.op) {
      case api::LabelSelectorOperator::In:
        out += r.values.size() == 1 ? r.key + "=" + r.values[0] : r.key + " in " + list();
        break;
      case api::LabelSelectorOperator::NotIn:
        out += r.values.size() == 1 ? r.key + "!=" + r.values[0] : r.key + " notin " + list();
        break;
      case api::LabelSelectorOperator::Exists: out += r.key; break;
      case api::LabelSelectorOperator::DoesNotExist: out += "!" + r.key; break;
      case api::LabelSelectorOperator::Unset: break;
    }
  }
  return out;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits at commas outside parentheses.
std::vector<std::string_view> SplitRequirements(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
}

Result<LabelSelectorRequirement> ParseRequirement(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return Status::Invalid("unable to parse requirement \"" + std::string(text) + "\": " + std::string(why));
  };
  if (text.empty()) return fail("found an empty requirement");
  LabelSelectorRequirement r;
  if (text.front() == '!') {
    r.key = std::string(Trim(text.substr(1)));
    r.op = api::LabelSelectorOperator::DoesNotExist;
  } else {
    size_t end = 0;
    while (end < text.size() && IsKeyChar(text[end])) ++end;
    r.key = std::string(text.substr(0, end));
    std::string_view rest = Trim(text.substr(end));
    if (rest.empty()) {
      r.op = api::LabelSelectorOperator::Exists;
    } else if (rest.starts_with("!=") || rest.starts_with("==") || rest.starts_with("=")) {
      r.op = rest.starts_with("!=") ? api::LabelSelectorOperator::NotIn : api::LabelSelectorOperator::In;
      std::string_view value = Trim(rest.substr(rest.starts_with("=") && !rest.starts_with("==") ? 1 : 2));
      for (char c : value) {
        if (!IsKeyChar(c)) return fail("invalid character in the value");
      }
      r.values.emplace_back(value);
    } else {
      const bool in = rest.starts_with("in") && rest.size() > 2 && !IsKeyChar(rest[2]);
      const bool notin = rest.starts_with("notin") && rest.size() > 5 && !IsKeyChar(rest[5]);
      if (!in && !notin) return fail("expected one of =, ==, !=, in, notin after the key");
      r.op = in ? api::LabelSelectorOperator::In : api::LabelSelectorOperator::NotIn;
      std::string_view list = Trim(rest.substr(in ? 2 : 5));
      if (list.size() < 2 || list.front() != '(' || list.back() != ')') {
        return fail("expected a parenthesised list of values");
      }
      list = list.substr(1, list.size() - 2);
      size_t start = 0;
      for (size_t i = 0; i <= list.size(); ++i) {
        if (i < list.size() && list[i] != ',') continue;
        std::string_view value = Trim(list.substr(start, i - start));
        for (char c : value) {
          if (!IsKeyChar(c)) return fail("invalid character in a value");
        }
        r.values.emplace_back(value);
        start = i + 1;
      }
    }
  }
  if (r.key.empty()) return fail("the key is empty");
  for (char c : r.key) {
    if (!IsKeyChar(c)) return fail("invalid character in the key");
  }
  return r;
}

}  // namespace

Result<LabelSelector> ParseLabelSelector(std::string_view text) {
  LabelSelector out = LabelSelector::Everything();
  if (Trim(text).empty()) return out;
  for (std::string_view part : SplitRequirements(text)) {
    Result<LabelSelectorRequirement> r = ParseRequirement(part);
    if (!r.ok()) return r.status();
    out.Add(std::move(*r));
  }
  return out;
}

Labels LabelsFromNative(const std::vector<std::unique_ptr<api::StringEntryT>>& entries) {
  Labels out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.emplace_back(e->key, e->value);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace podflow::model
