// build/podflow: the user's entry point.
#include <CLI/CLI.hpp>

#include "cli/demo.h"

int main(int argc, char** argv) {
  CLI::App app{"podflow: the Kubernetes pod-creation flow as a dataflow pipeline"};
  app.require_subcommand(1);

  podflow::cli::DemoOptions demo;
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "Create the manifest's objects in the event log and show what a watcher sees");
  demo_cmd->add_option("--data-dir", demo.data_dir, "Event log directory")
      ->capture_default_str();
  demo_cmd->add_option("-f,--filename", demo.manifest_file,
                       "Manifest (YAML or JSON); default: an nginx pod");

  CLI11_PARSE(app, argc, argv);
  if (demo_cmd->parsed()) return podflow::cli::RunDemo(demo);
  return 0;
}
