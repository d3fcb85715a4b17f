// Reading configuration out of yaml-cpp nodes with errors as values.
//
// yaml-cpp reports a failed conversion or a bad document by throwing; every
// call that may throw is made in yaml_reader.cc, so the config parsers
// (pipeline, scheduler and its plugins' args, runtime, admission) get a
// Status or an empty optional and never see an exception. Each parser keeps
// its own wording: the getters take the path and the complaint to report.
//
// Thread safety: all functions are safe to call concurrently on distinct
// nodes (yaml-cpp nodes are not thread safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace podflow::yaml {

// "a" + "b" -> "a.b"; "" + "b" -> "b".
std::string Child(std::string_view path, std::string_view key);
// "a" + 2 -> "a[2]".
std::string Index(std::string_view path, size_t i);

// True when `node` is missing (undefined) or an explicit null.
bool Absent(const YAML::Node& node);

// Parses one document. Invalid "line N: <yaml-cpp's reason>" when `text` is
// not YAML.
Result<YAML::Node> Load(const std::string& text);

// What node.as<T>() gives, or nullopt where yaml-cpp would throw (a
// non-scalar, a value T cannot hold, an invalid node). As in yaml-cpp, a
// null converts to the string "null". T: std::string, bool, int32_t,
// int64_t, uint64_t.
template <typename T>
std::optional<T> As(const YAML::Node& node);

// The scalar `node` as T; Invalid "<path>: <complaint>" when it is not a
// scalar (null and missing included) or does not convert. T as for As.
template <typename T>
Result<T> Scalar(const YAML::Node& node, std::string_view path, std::string_view complaint);

// The 1-based line `node` starts on; 0 when unknown.
int Line(const YAML::Node& node);

// What a yaml-cpp exception said: where (line and column 1-based, 0 when
// unknown) and why; `what` is the exception's what(), which names the
// place itself when it is known.
struct Failure {
  int line = 0;
  int column = 0;
  std::string message;
  std::string what;
};

// Runs `read` (which may call yaml-cpp directly) and returns its status; a
// yaml-cpp exception escaping it becomes `describe(failure)` instead.
Status Guard(const std::function<Status()>& read,
             const std::function<Status(const Failure&)>& describe);

extern template std::optional<std::string> As(const YAML::Node&);
extern template std::optional<bool> As(const YAML::Node&);
extern template std::optional<int32_t> As(const YAML::Node&);
extern template std::optional<int64_t> As(const YAML::Node&);
extern template std::optional<uint64_t> As(const YAML::Node&);
extern template Result<std::string> Scalar(const YAML::Node&, std::string_view, std::string_view);
extern template Result<bool> Scalar(const YAML::Node&, std::string_view, std::string_view);
extern template Result<int32_t> Scalar(const YAML::Node&, std::string_view, std::string_view);
extern template Result<int64_t> Scalar(const YAML::Node&, std::string_view, std::string_view);
extern template Result<uint64_t> Scalar(const YAML::Node&, std::string_view, std::string_view);

}  // namespace podflow::yaml
