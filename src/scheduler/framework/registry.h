// Registry: plugin name -> factory, as kubernetes framework/runtime.Registry.
// Profiles instantiate the plugins they name through it. The in-tree plugins
// are listed in one function, plugins/registry.h: InTreeRegistry().
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "scheduler/framework/plugin.h"

namespace podflow::scheduler {

// Builds a plugin from its args (the profile's pluginConfig entry for it, a
// null node when there is none). Bad args are Invalid, naming the field
// relative to the args ("scoringStrategy.type: ...").
using PluginFactory = std::function<Result<PluginInstance>(const YAML::Node& args)>;

class Registry {
 public:
  // AlreadyExists when `name` is taken; Invalid when it is empty.
  Status Register(std::string name, PluginFactory factory);

  // Registers P under P::kName. A P with `static Result<P> FromArgs(const
  // YAML::Node&)` is built from its args; any other P is default-constructed
  // and takes no args (Invalid when some are given).
  template <Plugin P>
  Status Register() {
    return Register(std::string(P::kName), [](const YAML::Node& args) -> Result<PluginInstance> {
      if constexpr (requires { { P::FromArgs(args) } -> std::same_as<Result<P>>; }) {
        Result<P> plugin = P::FromArgs(args);
        if (!plugin.ok()) return plugin.status();
        return MakePluginInstance(std::move(plugin).value());
      } else {
        if (args && !args.IsNull()) return Status::Invalid("this plugin takes no args");
        return MakePluginInstance(P{});
      }
    });
  }

  // nullptr when no plugin has that name.
  const PluginFactory* Find(std::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace podflow::scheduler
