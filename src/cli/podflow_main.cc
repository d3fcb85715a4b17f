// build/podflow: the user's entry point.
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"podflow: the Kubernetes pod-creation flow as a dataflow pipeline"};
  app.require_subcommand(1);
  podflow::cli::CommandAction action;
  podflow::cli::AddRunCommands(app, action);
  podflow::cli::AddGetCommands(app, action);
  podflow::cli::AddExecCommand(app, action);
  podflow::cli::AddLogsCommand(app, action);
  podflow::cli::AddWriteCommands(app, action);
  podflow::cli::AddDemoCommand(app, action);
  CLI11_PARSE(app, argc, argv);
  return action ? action() : 0;
}
