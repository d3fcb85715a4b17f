// kubectl's JSONPath templates: a small parser into nodes (text, paths,
// literals, range blocks) and an evaluator over model::Value.
#include "cli/jsonpath.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <optional>

#include "cli/print_util.h"

namespace podflow::cli {
namespace {

// One step of a path.
struct Step {
  enum class Type { kField, kRecursive, kWildcard, kIndex, kSlice, kFilter };
  Type type = Type::kField;
  std::vector<std::string> names;  // kField (a union when several), kRecursive
  std::vector<int64_t> indices;    // kIndex
  std::optional<int64_t> start, end, step;  // kSlice
  // kFilter: [?(@.left OP right)], or [?(@.left)] for existence.
  std::vector<Step> left;
  std::string op;
  std::optional<model::Value> literal;
  std::vector<Step> right;  // when the right side is a path
  bool right_is_path = false;
};

using Path = std::vector<Step>;

}  // namespace

// One piece of a template.
struct JsonPath::Node {
  enum class Type { kText, kPath, kRange };
  Type type = Type::kText;
  std::string text;         // kText: printed as is
  Path path;                // kPath, kRange: what to evaluate
  std::vector<Node> body;   // kRange: run for each value
};

namespace {

Status ParseError(std::string_view text, const std::string& why) {
  return Status::Invalid("error parsing jsonpath " + std::string(text) + ", " + why);
}

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '/' || c == '$';
}

// A quoted literal at `in[i]` ("..." or '...'), with \n, \t, \" and \\.
Result<std::string> ParseQuoted(std::string_view in, size_t& i, std::string_view whole) {
  const char quote = in[i++];
  std::string out;
  while (i < in.size() && in[i] != quote) {
    char c = in[i++];
    if (c == '\\' && i < in.size()) {
      const char e = in[i++];
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    }
    out.push_back(c);
  }
  if (i >= in.size()) return ParseError(whole, "unclosed quote");
  ++i;
  return out;
}

Result<int64_t> ParseInt(std::string_view s, std::string_view whole) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    return ParseError(whole, "invalid array index " + std::string(s));
  }
  return v;
}

std::vector<std::string_view> SplitTop(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t from = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (quote != 0) {
      if (s[i] == quote) quote = 0;
    } else if (s[i] == '\'' || s[i] == '"') {
      quote = s[i];
    } else if (s[i] == sep) {
      out.push_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  out.push_back(s.substr(from));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Result<Path> ParsePath(std::string_view in, std::string_view whole);

// The value of a filter's right side: a quoted string, a number, a bool.
Result<model::Value> ParseLiteral(std::string_view s, std::string_view whole) {
  s = Trim(s);
  if (!s.empty() && (s[0] == '"' || s[0] == '\'')) {
    size_t i = 0;
    Result<std::string> text = ParseQuoted(s, i, whole);
    if (!text.ok()) return text.status();
    return model::Value::String(std::move(*text));
  }
  if (s == "true" || s == "false") return model::Value::Bool(s == "true");
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i); ec == std::errc() && p == s.data() + s.size()) {
    return model::Value::Int(i);
  }
  char* end = nullptr;
  const std::string copy(s);
  const double d = std::strtod(copy.c_str(), &end);
  if (end != nullptr && *end == '\0' && !copy.empty()) return model::Value::Number(d);
  return ParseError(whole, "unrecognized filter value " + copy);
}

Result<Step> ParseFilter(std::string_view f, std::string_view whole) {
  Step step;
  step.type = Step::Type::kFilter;
  constexpr std::string_view kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
  size_t at = std::string_view::npos;
  std::string_view op;
  char quote = 0;
  for (size_t i = 0; i < f.size() && at == std::string_view::npos; ++i) {
    if (quote != 0) {
      if (f[i] == quote) quote = 0;
      continue;
    }
    if (f[i] == '\'' || f[i] == '"') {
      quote = f[i];
      continue;
    }
    for (std::string_view o : kOps) {
      if (f.substr(i, o.size()) == o) {
        at = i;
        op = o;
        break;
      }
    }
  }
  std::string_view left = Trim(at == std::string_view::npos ? f : f.substr(0, at));
  if (!left.starts_with("@")) return ParseError(whole, "a filter starts with @");
  Result<Path> l = ParsePath(left.substr(1), whole);
  if (!l.ok()) return l.status();
  step.left = std::move(*l);
  if (at == std::string_view::npos) return step;
  step.op = std::string(op);
  std::string_view right = Trim(f.substr(at + op.size()));
  if (right.starts_with("@")) {
    Result<Path> r = ParsePath(right.substr(1), whole);
    if (!r.ok()) return r.status();
    step.right = std::move(*r);
    step.right_is_path = true;
  } else {
    Result<model::Value> v = ParseLiteral(right, whole);
    if (!v.ok()) return v.status();
    step.literal = std::move(*v);
  }
  return step;
}

// What is inside [ ... ].
Result<Step> ParseBracket(std::string_view b, std::string_view whole) {
  b = Trim(b);
  Step step;
  if (b == "*") {
    step.type = Step::Type::kWildcard;
    return step;
  }
  if (b.starts_with("?(") && b.ends_with(")")) return ParseFilter(b.substr(2, b.size() - 3), whole);
  if (!b.empty() && (b[0] == '\'' || b[0] == '"')) {
    step.type = Step::Type::kField;
    for (std::string_view part : SplitTop(b, ',')) {
      part = Trim(part);
      size_t i = 0;
      if (part.empty() || (part[0] != '\'' && part[0] != '"')) return ParseError(whole, "invalid key " + std::string(part));
      Result<std::string> name = ParseQuoted(part, i, whole);
      if (!name.ok()) return name.status();
      step.names.push_back(std::move(*name));
    }
    return step;
  }
  if (b.find(':') != std::string_view::npos) {
    step.type = Step::Type::kSlice;
    std::vector<std::string_view> parts = SplitTop(b, ':');
    if (parts.size() > 3) return ParseError(whole, "invalid slice " + std::string(b));
    std::optional<int64_t>* fields[] = {&step.start, &step.end, &step.step};
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string_view p = Trim(parts[i]);
      if (p.empty()) continue;
      Result<int64_t> v = ParseInt(p, whole);
      if (!v.ok()) return v.status();
      *fields[i] = *v;
    }
    return step;
  }
  step.type = Step::Type::kIndex;
  for (std::string_view part : SplitTop(b, ',')) {
    Result<int64_t> v = ParseInt(Trim(part), whole);
    if (!v.ok()) return v.status();
    step.indices.push_back(*v);
  }
  return step;
}

Result<Path> ParsePath(std::string_view in, std::string_view whole) {
  Path path;
  size_t i = 0;
  // `$` and `@` name the current object, as kubectl reads them.
  if (i < in.size() && (in[i] == '$' || in[i] == '@')) ++i;
  while (i < in.size()) {
    if (in[i] == '.') {
      const bool recursive = i + 1 < in.size() && in[i + 1] == '.';
      i += recursive ? 2 : 1;
      if (i < in.size() && in[i] == '*') {
        ++i;
        Step s;
        s.type = Step::Type::kWildcard;
        path.push_back(s);
        continue;
      }
      std::string name;
      while (i < in.size() && (NameChar(in[i]) || in[i] == '\\')) {
        if (in[i] == '\\' && i + 1 < in.size()) ++i;  // `\.` keeps a dot in the name
        name.push_back(in[i++]);
      }
      if (name.empty()) {
        if (i >= in.size() && !recursive) break;  // "." alone: the current object
        if (i < in.size() && in[i] == '[') continue;
        return ParseError(whole, "unrecognized character in action: " + std::string(1, i < in.size() ? in[i] : ' '));
      }
      Step s;
      s.type = recursive ? Step::Type::kRecursive : Step::Type::kField;
      s.names.push_back(std::move(name));
      path.push_back(std::move(s));
    } else if (in[i] == '[') {
      // The matching ], past quotes and the parentheses of a filter.
      size_t depth = 0;
      char quote = 0;
      size_t j = i + 1;
      for (; j < in.size(); ++j) {
        if (quote != 0) {
          if (in[j] == quote) quote = 0;
        } else if (in[j] == '\'' || in[j] == '"') {
          quote = in[j];
        } else if (in[j] == '(') {
          ++depth;
        } else if (in[j] == ')') {
          if (depth > 0) --depth;
        } else if (in[j] == ']' && depth == 0) {
          break;
        }
      }
      if (j >= in.size()) {
        return ParseError(whole, in.substr(i).starts_with("[?(") ? "unclosed array expect ]" : "unterminated array");
      }
      Result<Step> s = ParseBracket(in.substr(i + 1, j - i - 1), whole);
      if (!s.ok()) return s.status();
      path.push_back(std::move(*s));
      i = j + 1;
    } else {
      return ParseError(whole, "unrecognized character in action: " + std::string(1, in[i]));
    }
  }
  return path;
}

// Parses the template into nodes; `range` blocks nest until their `end`.
Status ParseNodes(std::string_view text, std::vector<JsonPath::Node>& out) {
  std::vector<std::vector<JsonPath::Node>*> stack = {&out};
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open != i) {
      const size_t stop = open == std::string_view::npos ? text.size() : open;
      JsonPath::Node n;
      n.text = std::string(text.substr(i, stop - i));
      stack.back()->push_back(std::move(n));
      i = stop;
      continue;
    }
    // The closing }, past quoted literals.
    size_t close = open + 1;
    char quote = 0;
    for (; close < text.size(); ++close) {
      if (quote != 0) {
        if (text[close] == '\\') {
          ++close;
        } else if (text[close] == quote) {
          quote = 0;
        }
      } else if (text[close] == '"' || text[close] == '\'') {
        quote = text[close];
      } else if (text[close] == '}') {
        break;
      }
    }
    if (close >= text.size()) return ParseError(text, "unclosed action");
    std::string_view action = Trim(text.substr(open + 1, close - open - 1));
    i = close + 1;
    if (action == "end") {
      if (stack.size() == 1) return ParseError(text, "not in range, nothing to end");
      stack.pop_back();
      continue;
    }
    if (action.starts_with("range ") || action.starts_with("range\t")) {
      JsonPath::Node n;
      n.type = JsonPath::Node::Type::kRange;
      Result<Path> p = ParsePath(Trim(action.substr(6)), text);
      if (!p.ok()) return p.status();
      n.path = std::move(*p);
      stack.back()->push_back(std::move(n));
      stack.push_back(&stack.back()->back().body);
      continue;
    }
    // Paths and literals, separated by spaces.
    size_t k = 0;
    while (k < action.size()) {
      if (std::isspace(static_cast<unsigned char>(action[k]))) {
        ++k;
        continue;
      }
      JsonPath::Node n;
      if (action[k] == '"' || action[k] == '\'') {
        Result<std::string> literal = ParseQuoted(action, k, text);
        if (!literal.ok()) return literal.status();
        n.text = std::move(*literal);
      } else {
        size_t end = k;
        int depth = 0;
        char quote = 0;
        for (; end < action.size(); ++end) {
          const char c = action[end];
          if (quote != 0) {
            if (c == quote) quote = 0;
          } else if (c == '\'' || c == '"') {
            quote = c;
          } else if (c == '[') {
            ++depth;
          } else if (c == ']') {
            --depth;
          } else if (depth == 0 && std::isspace(static_cast<unsigned char>(c))) {
            break;
          }
        }
        n.type = JsonPath::Node::Type::kPath;
        Result<Path> p = ParsePath(action.substr(k, end - k), text);
        if (!p.ok()) return p.status();
        n.path = std::move(*p);
        k = end;
      }
      stack.back()->push_back(std::move(n));
    }
  }
  if (stack.size() != 1) return ParseError(text, "range without end");
  return Status::Ok();
}

using Values = std::vector<const model::Value*>;

Values Walk(const Path& path, Values in);

bool Compare(const model::Value& a, const std::string& op, const model::Value& b) {
  const std::optional<double> x = NumberOf(a);
  const std::optional<double> y = NumberOf(b);
  int cmp = 0;
  if (x && y) {
    cmp = *x < *y ? -1 : *x > *y ? 1 : 0;
  } else if (a.kind() == model::Value::Kind::kString && b.kind() == model::Value::Kind::kString) {
    cmp = a.string_value().compare(b.string_value());
    cmp = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
  } else if (a.kind() == model::Value::Kind::kBool && b.kind() == model::Value::Kind::kBool) {
    cmp = a.bool_value() == b.bool_value() ? 0 : 1;
    if (op != "==" && op != "!=") return false;
  } else {
    return op == "!=";
  }
  if (op == "==") return cmp == 0;
  if (op == "!=") return cmp != 0;
  if (op == "<") return cmp < 0;
  if (op == ">") return cmp > 0;
  if (op == "<=") return cmp <= 0;
  return cmp >= 0;
}

bool Keep(const Step& filter, const model::Value& element) {
  const Values left = Walk(filter.left, {&element});
  if (filter.op.empty()) return !left.empty();
  if (left.empty()) return false;
  if (filter.right_is_path) {
    const Values right = Walk(filter.right, {&element});
    return !right.empty() && Compare(*left[0], filter.op, *right[0]);
  }
  return Compare(*left[0], filter.op, *filter.literal);
}

// Every value under `v`, `v` first, each before what is under it.
void Nodes(const model::Value& v, Values& out) {
  out.push_back(&v);
  if (v.kind() == model::Value::Kind::kObject) {
    for (const auto& [key, member] : v.members()) Nodes(member, out);
  } else if (v.kind() == model::Value::Kind::kArray) {
    for (const model::Value& item : v.items()) Nodes(item, out);
  }
}

// `..name`: the field `name` of every value under `v`, in that order.
void Descend(const model::Value& v, const std::string& name, Values& out) {
  Values nodes;
  Nodes(v, nodes);
  for (const model::Value* node : nodes) {
    if (const model::Value* m = node->kind() == model::Value::Kind::kObject ? node->Find(name) : nullptr) {
      out.push_back(m);
    }
  }
}

Values Apply(const Step& step, const Values& in) {
  Values out;
  for (const model::Value* v : in) {
    switch (step.type) {
      case Step::Type::kField:
        for (const std::string& name : step.names) {
          if (const model::Value* m = v->kind() == model::Value::Kind::kObject ? v->Find(name) : nullptr) {
            out.push_back(m);
          }
        }
        break;
      case Step::Type::kRecursive:
        Descend(*v, step.names[0], out);
        break;
      case Step::Type::kWildcard:
        if (v->kind() == model::Value::Kind::kArray) {
          for (const model::Value& item : v->items()) out.push_back(&item);
        } else if (v->kind() == model::Value::Kind::kObject) {
          for (const auto& [key, member] : v->members()) out.push_back(&member);
        }
        break;
      case Step::Type::kIndex:
        if (v->kind() != model::Value::Kind::kArray) break;
        for (int64_t index : step.indices) {
          const int64_t size = static_cast<int64_t>(v->items().size());
          const int64_t at = index < 0 ? size + index : index;
          if (at >= 0 && at < size) out.push_back(&v->items()[static_cast<size_t>(at)]);
        }
        break;
      case Step::Type::kSlice: {
        if (v->kind() != model::Value::Kind::kArray) break;
        const int64_t size = static_cast<int64_t>(v->items().size());
        auto clamp = [size](int64_t x) { return std::max<int64_t>(0, std::min(size, x < 0 ? size + x : x)); };
        const int64_t from = clamp(step.start.value_or(0));
        const int64_t to = clamp(step.end.value_or(size));
        const int64_t by = step.step.value_or(1);
        if (by <= 0) break;
        for (int64_t i = from; i < to; i = to - i > by ? i + by : to) out.push_back(&v->items()[static_cast<size_t>(i)]);
        break;
      }
      case Step::Type::kFilter:
        if (v->kind() == model::Value::Kind::kArray) {
          for (const model::Value& item : v->items()) {
            if (Keep(step, item)) out.push_back(&item);
          }
        }
        break;
    }
  }
  return out;
}

Values Walk(const Path& path, Values in) {
  for (const Step& step : path) in = Apply(step, in);
  return in;
}

std::string Text(const model::Value& v) {
  if (v.kind() == model::Value::Kind::kString) return v.string_value();
  return model::ToJson(KeysSorted(v));
}

void Run(const std::vector<JsonPath::Node>& nodes, const model::Value& current, std::string& out) {
  for (const JsonPath::Node& n : nodes) {
    if (n.type == JsonPath::Node::Type::kText) {
      out += n.text;
      continue;
    }
    Values found = Walk(n.path, {&current});
    if (n.type == JsonPath::Node::Type::kPath) {
      for (size_t i = 0; i < found.size(); ++i) out += (i ? " " : "") + Text(*found[i]);
      continue;
    }
    // range: the body once for each value the path found.
    for (const model::Value* v : found) Run(n.body, *v, out);
  }
}

}  // namespace

Result<JsonPath> JsonPath::Parse(std::string_view text) {
  auto nodes = std::make_shared<std::vector<Node>>();
  if (Status s = ParseNodes(text, *nodes); !s.ok()) return s;
  JsonPath out;
  out.nodes_ = std::move(nodes);
  return out;
}

Result<std::string> JsonPath::Execute(const model::Value& root) const {
  std::string out;
  Run(*nodes_, root, out);
  return out;
}

std::vector<const model::Value*> JsonPath::Values(const model::Value& root) const {
  for (const Node& n : *nodes_) {
    if (n.type != Node::Type::kText) return Walk(n.path, {&root});
  }
  return {};
}

}  // namespace podflow::cli
