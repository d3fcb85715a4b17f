// kubectl's JSONPath templates (-o jsonpath=..., --sort-by): text with
// `{...}` actions over an object as its JSON shows it. An action is a path
// from the current object ($ or @, .field, ..field, .*, [n], [-n], [a:b:c],
// [*], ['key'], [a,b], [?(@.path OP value)]), a quoted literal ("\n"),
// `range PATH` ... `end` (the body once per value found, each the current
// object),
// or several of these separated by spaces. Results of one action are joined
// by a space; strings print as they are, other values as compact JSON; a
// missing field prints nothing, as kubectl allows missing keys.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/value.h"

namespace podflow::cli {

class JsonPath {
 public:
  // Parses a template; Invalid names what is wrong, as kubectl says it:
  // `error parsing jsonpath {.a[}, unterminated array`.
  static Result<JsonPath> Parse(std::string_view text);

  // The template run over `root`.
  Result<std::string> Execute(const model::Value& root) const;
  // The values of the template's first path (--sort-by's key).
  std::vector<const model::Value*> Values(const model::Value& root) const;

  struct Node;

 private:
  std::shared_ptr<const std::vector<Node>> nodes_;
};

}  // namespace podflow::cli
