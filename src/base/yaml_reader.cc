#include "base/yaml_reader.h"

namespace podflow::yaml {
namespace {

Failure FailureOf(const YAML::Exception& e) {
  return Failure{e.mark.line + 1, e.mark.column + 1, e.msg, e.what()};
}

}  // namespace

std::string Child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

bool Absent(const YAML::Node& node) { return !node || node.IsNull(); }

Result<YAML::Node> Load(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid("line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

template <typename T>
std::optional<T> As(const YAML::Node& node) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

template <typename T>
Result<T> Scalar(const YAML::Node& node, std::string_view path, std::string_view complaint) {
  try {
    // IsScalar() throws on an invalid node too: the catch covers both.
    if (node.IsScalar()) return node.as<T>();
  } catch (const YAML::Exception&) {
  }
  return Status::Invalid(std::string(path) + ": " + std::string(complaint));
}

int Line(const YAML::Node& node) {
  try {
    return node.Mark().line + 1;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

Status Guard(const std::function<Status()>& read,
             const std::function<Status(const Failure&)>& describe) {
  try {
    return read();
  } catch (const YAML::Exception& e) {
    return describe(FailureOf(e));
  }
}

template std::optional<std::string> As(const YAML::Node&);
template std::optional<bool> As(const YAML::Node&);
template std::optional<int32_t> As(const YAML::Node&);
template std::optional<int64_t> As(const YAML::Node&);
template std::optional<uint64_t> As(const YAML::Node&);
template Result<std::string> Scalar(const YAML::Node&, std::string_view, std::string_view);
template Result<bool> Scalar(const YAML::Node&, std::string_view, std::string_view);
template Result<int32_t> Scalar(const YAML::Node&, std::string_view, std::string_view);
template Result<int64_t> Scalar(const YAML::Node&, std::string_view, std::string_view);
template Result<uint64_t> Scalar(const YAML::Node&, std::string_view, std::string_view);

}  // namespace podflow::yaml
