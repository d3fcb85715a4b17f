// Registry: plugin name -> factory, as kubernetes framework/runtime.Registry.
// Profiles instantiate the plugins they name through it. The in-tree plugins
// are listed in one function, plugins/registry.h: InTreeRegistry().
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler {

using PluginFactory = std::function<Result<PluginInstance>()>;

class Registry {
 public:
  // AlreadyExists when `name` is taken; Invalid when it is empty.
  Status Register(std::string name, PluginFactory factory);

  // Registers P under P::kName, built default-constructed.
  template <Plugin P>
  Status Register() {
    return Register(std::string(P::kName),
                    []() -> Result<PluginInstance> { return MakePluginInstance(P{}); });
  }

  // nullptr when no plugin has that name.
  const PluginFactory* Find(std::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace podflow::scheduler
