// build/podflow-publish: inject manifests (and load) into a running pipeline.
#include <CLI/CLI.hpp>

#include "cli/publish.h"

int main(int argc, char** argv) {
  CLI::App app{"podflow-publish: submit manifests to a running podflow pipeline, as kubectl create -f does"};
  podflow::cli::PublishOptions options;
  app.add_option("-f,--filename", options.files, "Manifest file, directory of manifests, or - for stdin");
  app.add_option("--config", options.config_file, "Cluster configuration (endpoints, data dir)");
  app.add_option("--data-dir", options.data_dir,
                 "The pipeline's data dir, whose keys and admin token are used (default: the config's)");
  app.add_option("--server", options.server, "Submit endpoint (default: the pipeline's submit channel)");
  app.add_option("--token", options.token, "Bearer token (default: the data dir's admin.token)");
  app.add_option("--count", options.count, "Generate this many pods from --template");
  app.add_option("--rate", options.rate, "Pods per second for --count (default: as fast as accepted)");
  app.add_option("--template", options.template_file, "Pod manifest to copy for --count (names get -N)");
  app.add_option("--batch", options.batch, "Pods per submit request for --count")->capture_default_str();
  app.add_flag("--apply", options.apply,
               "Apply the -f documents as `podflow apply` does (create, or patch what changed) instead of creating them");
  app.add_flag("--wait", options.wait, "Wait until every published pod is Running; print pods/s and latency");
  app.add_option("--timeout", options.timeout_seconds, "Seconds --wait waits")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return podflow::cli::RunPublish(options);
}
