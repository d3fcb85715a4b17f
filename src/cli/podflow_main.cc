// build/podflow: the user's entry point.
#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"podflow: the Kubernetes pod-creation flow as a dataflow pipeline"};
  app.require_subcommand(1);
  podflow::cli::CommandAction action;
  podflow::cli::AddRunCommands(app, action);
  podflow::cli::AddGetCommands(app, action);
  int after_dash = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      after_dash = argc - i - 1;
      break;
    }
  }
  podflow::cli::AddExecCommand(app, action, after_dash);
  podflow::cli::AddLogsCommand(app, action);
  podflow::cli::AddProxyCommand(app, action);
  podflow::cli::AddWriteCommands(app, action);
  podflow::cli::AddRolloutCommands(app, action);
  podflow::cli::AddDemoCommand(app, action);
  CLI11_PARSE(app, argc, argv);
  return action ? action() : 0;
}
