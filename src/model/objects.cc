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

bool SplitNamespacedKey(std::string_view key, std::string_view* namespace_, std::string_view* name) {
  constexpr std::string_view kRoot = "/registry/";
  if (!key.starts_with(kRoot)) return false;
  std::string_view rest = key.substr(kRoot.size());
  const size_t resource_end = rest.find('/');
  if (resource_end == std::string_view::npos || resource_end == 0) return false;
  rest = rest.substr(resource_end + 1);
  const size_t ns_end = rest.find('/');
  if (ns_end == std::string_view::npos || ns_end == 0 || ns_end + 1 >= rest.size() ||
      rest.find('/', ns_end + 1) != std::string_view::npos) {
    return false;
  }
  *namespace_ = rest.substr(0, ns_end);
  *name = rest.substr(ns_end + 1);
  return true;
}

const KindInfo& Kind(std::string_view kind) {
  for (const KindInfo& k : Kinds()) {
    if (k.kind == kind) return k;
  }
  assert(false && "unknown kind");
  std::abort();
}

}  // namespace podflow::model
