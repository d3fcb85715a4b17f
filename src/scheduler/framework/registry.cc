#include "scheduler/framework/registry.h"

namespace podflow::scheduler {

Status Registry::Register(std::string name, PluginFactory factory) {
  if (name.empty()) return Status::Invalid("plugin name is empty");
  if (factories_.contains(name)) {
    return Status::AlreadyExists("a plugin named \"" + name + "\" is already registered");
  }
  factories_.emplace(std::move(name), std::move(factory));
  return Status::Ok();
}

const PluginFactory* Registry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& [name, _] : factories_) out.push_back(name);
  return out;
}

}  // namespace podflow::scheduler
