// ParseYaml: manifests read from yaml-cpp's parser events straight into
// Values, so that every node is counted, every nesting level is seen and an
// alias is expanded only after its cost was checked. (yaml-cpp's own node
// tree shares aliased nodes, and expanding it afterwards is unbounded.)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "model/value.h"

namespace podflow::model {
namespace {

// Where and why the text was refused; thrown out of the event handler,
// caught in ParseYaml.
struct Refusal {
  YAML::Mark mark;
  std::string what;
};

// go-yaml's allowance of aliased nodes among all decoded ones.
double AllowedAliasRatio(int64_t nodes) {
  constexpr double kLow = 400'000, kHigh = 4'000'000;
  if (nodes <= kLow) return 0.99;
  if (nodes >= kHigh) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(nodes) - kLow) / (kHigh - kLow));
}

class Builder : public YAML::EventHandler {
 public:
  explicit Builder(const ParseLimits& limits) : limits_(limits) {}

  std::vector<Value> TakeDocuments() { return std::move(documents_); }

  void OnDocumentStart(const YAML::Mark&) override {
    anchors_.clear();
    root_.reset();
  }
  void OnDocumentEnd() override { documents_.push_back(root_ ? std::move(*root_) : Value()); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Count(mark, 1, 0);
    // A null key reads as "", as yaml-cpp's node tree gave it.
    if (ExpectingKey()) return Key(mark, "", anchor);
    Complete(mark, Value(), 1, 0, anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    const auto bytes = static_cast<int64_t>(text.size());
    Count(mark, 1, bytes);
    if (ExpectingKey()) return Key(mark, text, anchor);
    Complete(mark, ScalarValue(tag, text), 1, bytes, anchor, &text);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw Refusal{mark, "an alias to an anchor that is not complete"};
    const Anchored& a = *it->second;
    // Checked before the copy is made: the cost is known from the anchor.
    Count(mark, a.nodes, a.bytes);
    aliased_ += a.nodes;
    if (aliased_ > 100 && nodes_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(nodes_) > AllowedAliasRatio(nodes_)) {
      throw Refusal{mark, "document contains excessive aliasing"};
    }
    if (ExpectingKey()) {
      if (!a.scalar_text) throw Refusal{mark, "a mapping key must be a scalar"};
      return Key(mark, *a.scalar_text, 0);
    }
    Complete(mark, Value(a.value), a.nodes, a.bytes, 0);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, Value::Array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, Value::Object(), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Collection {
    Value value;
    YAML::anchor_t anchor = 0;
    YAML::Mark mark;
    int64_t nodes = 1;               // this collection and everything in it
    int64_t bytes = 0;               // the text of its scalars and keys
    std::optional<std::string> key;  // a mapping's key waiting for its value
  };
  // An anchored node, shared by its aliases; a scalar keeps its text, which
  // is what an alias of it used as a key reads.
  struct Anchored {
    Value value;
    int64_t nodes = 0;
    int64_t bytes = 0;
    std::optional<std::string> scalar_text;
  };

  void Count(const YAML::Mark& mark, int64_t nodes, int64_t bytes) {
    nodes_ += nodes;
    bytes_ += bytes;
    if (nodes_ > limits_.max_nodes) {
      throw Refusal{mark, "exceeded max number of nodes of " + std::to_string(limits_.max_nodes)};
    }
    if (bytes_ > limits_.max_bytes) {
      throw Refusal{mark, "exceeded max size of " + std::to_string(limits_.max_bytes) + " bytes of text"};
    }
  }

  bool ExpectingKey() const {
    return !open_.empty() && open_.back().value.kind() == Value::Kind::kObject && !open_.back().key;
  }

  void Key(const YAML::Mark& mark, const std::string& key, YAML::anchor_t anchor) {
    if (anchor != 0) Remember(mark, anchor, Value::String(key), 1, static_cast<int64_t>(key.size()), &key);
    open_.back().bytes += static_cast<int64_t>(key.size());
    open_.back().key = key;
  }

  void Open(const YAML::Mark& mark, Value value, YAML::anchor_t anchor) {
    if (ExpectingKey()) throw Refusal{mark, "a mapping key must be a scalar"};
    if (static_cast<int>(open_.size()) >= limits_.max_depth) {
      throw Refusal{mark, "exceeded max depth of " + std::to_string(limits_.max_depth)};
    }
    Count(mark, 1, 0);
    open_.push_back(Collection{std::move(value), anchor, mark, 1, 0, std::nullopt});
  }

  void Close() {
    Collection done = std::move(open_.back());
    open_.pop_back();
    Complete(done.mark, std::move(done.value), done.nodes, done.bytes, done.anchor);
  }

  // Keeps a copy of an anchored node; the copy counts like an expansion,
  // so that nested anchors cannot multiply memory unseen.
  void Remember(const YAML::Mark& mark, YAML::anchor_t anchor, const Value& value, int64_t nodes, int64_t bytes,
                const std::string* scalar_text) {
    Count(mark, nodes, bytes);
    auto a = std::make_shared<Anchored>(Anchored{value, nodes, bytes, std::nullopt});
    if (scalar_text != nullptr) a->scalar_text = *scalar_text;
    anchors_[anchor] = std::move(a);
  }

  // A finished node: remembered under its anchor, then placed in its parent.
  void Complete(const YAML::Mark& mark, Value value, int64_t nodes, int64_t bytes, YAML::anchor_t anchor,
                const std::string* scalar_text = nullptr) {
    if (anchor != 0) Remember(mark, anchor, value, nodes, bytes, scalar_text);
    if (open_.empty()) {
      if (root_) throw Refusal{mark, "a document has one root"};
      root_ = std::move(value);
      return;
    }
    Collection& parent = open_.back();
    parent.nodes += nodes;
    parent.bytes += bytes;
    if (parent.value.kind() == Value::Kind::kArray) {
      parent.value.Append(std::move(value));
    } else {
      parent.value.Set(std::move(*parent.key), std::move(value));
      parent.key.reset();
    }
  }

  const ParseLimits limits_;
  std::vector<Value> documents_;
  std::optional<Value> root_;
  std::vector<Collection> open_;
  std::unordered_map<YAML::anchor_t, std::shared_ptr<const Anchored>> anchors_;
  int64_t nodes_ = 0;    // every node decoded, aliases expanded
  int64_t bytes_ = 0;    // the text of every scalar and key, aliases expanded
  int64_t aliased_ = 0;  // of which inside alias expansions
};

std::string Where(size_t line, size_t column) {
  return "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": ";
}

// The first byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included), or npos.
size_t InvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::vector<Value>> ParseYaml(std::string_view text, const ParseLimits& limits) {
  const bool utf16 = text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF");
  if (size_t bad = utf16 ? std::string_view::npos : InvalidUtf8(text); bad != std::string_view::npos) {
    std::string_view before = text.substr(0, bad);
    size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    size_t line_start = before.rfind('\n');
    size_t column = line_start == std::string_view::npos ? bad : bad - line_start - 1;
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[bad]));
    return Status::Invalid(Where(line, column) + "invalid UTF-8 (byte " + byte + ")");
  }
  std::istringstream in{std::string(text)};
  Builder builder(limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const Refusal& r) {
    return Status::Invalid(Where(r.mark.line, r.mark.column) + r.what);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard (its message says "bad file").
    return Status::Invalid(Where(e.mark.line, e.mark.column) + "exceeded max depth");
  } catch (const YAML::Exception& e) {
    return Status::Invalid(Where(e.mark.line, e.mark.column) + e.msg);
  }
  return builder.TakeDocuments();
}

}  // namespace podflow::model
