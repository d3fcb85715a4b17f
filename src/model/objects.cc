#include "model/objects.h"

#include <cassert>

namespace podflow::model {

std::string KindPrefix(const KindInfo& kind, std::string_view namespace_) {
  std::string key = "/registry/" + std::string(kind.resource) + "/";
  if (kind.namespaced && !namespace_.empty()) key += std::string(namespace_) + "/";
  return key;
}

std::string ObjectKey(const KindInfo& kind, std::string_view namespace_, std::string_view name) {
  std::string key = "/registry/" + std::string(kind.resource) + "/";
  if (kind.namespaced) key += std::string(namespace_.empty() ? "default" : namespace_) + "/";
  return key + std::string(name);
}

const KindInfo& Kind(std::string_view kind) {
  for (const KindInfo& k : Kinds()) {
    if (k.kind == kind) return k;
  }
  assert(false && "unknown kind");
  std::abort();
}

}  // namespace podflow::model
