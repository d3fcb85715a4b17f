// Each `podflow` subcommand lives in its own file and adds itself to the
// app here; main() runs whichever was parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace podflow::cli {

// What a subcommand does once parsed: returns the process exit code.
using CommandAction = std::function<int()>;

// Each adds its subcommand(s) to `app` and returns their actions, which
// main() calls for the parsed one. `action` is set only when parsed.
void AddDemoCommand(CLI::App& app, CommandAction& action);
void AddGetCommands(CLI::App& app, CommandAction& action);     // get, describe
// exec; `args_after_dash`: how many of the command line's arguments follow
// its first "--" (-1: there is none), as kubectl tells the command it runs
// from its own flags.
void AddExecCommand(CLI::App& app, CommandAction& action, int args_after_dash);
void AddLogsCommand(CLI::App& app, CommandAction& action);     // logs
void AddProxyCommand(CLI::App& app, CommandAction& action);    // proxy rules
void AddRolloutCommands(CLI::App& app, CommandAction& action); // scale, rollout
void AddRunCommands(CLI::App& app, CommandAction& action);     // run, stage
void AddWriteCommands(CLI::App& app, CommandAction& action);   // apply, create, delete

}  // namespace podflow::cli
