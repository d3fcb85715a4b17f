// podflow-replay: reads a data dir's event log (safely, beside a running
// pipeline) and prints events between revisions, the state at a revision, or
// one pod's timeline. The logic is src/replay; this is options and exit codes.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "base/logging.h"
#include "log/log.h"
#include "replay/replay.h"
#include "scheduler/scheduler.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "podflow-replay: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace podflow;
  CLI::App app{
      "Read a podflow event log: events between revisions, the state at a revision, "
      "one pod's timeline across the stages, why a pod was scheduled where it was (--why), "
      "or a check of every scheduling decision (--verify-scheduling).",
      "podflow-replay"};
  std::string data_dir;
  int64_t from = 0, to = 0, at = -1;
  std::string prefix, pod, output = "table";
  bool verbose = false, why = false, verify_scheduling = false;
  app.add_option("--data-dir", data_dir, "The pipeline's data directory (read-only)")->required();
  auto* from_opt = app.add_option("--from", from, "First revision to print (inclusive)")
                       ->check(CLI::PositiveNumber);
  auto* to_opt =
      app.add_option("--to", to, "Last revision to print (inclusive)")->check(CLI::PositiveNumber);
  app.add_option("--prefix", prefix, "Only keys starting with this (e.g. /registry/pods/)");
  auto* at_opt = app.add_option("--at", at, "Print the state at this revision (0: the head)")
                     ->check(CLI::NonNegativeNumber);
  auto* pod_opt = app.add_option("--pod", pod, "Print this pod's timeline: NAMESPACE/NAME or NAME");
  std::string rollout;
  auto* rollout_opt = app.add_option("--rollout", rollout,
                                     "Follow this Deployment's rollout revision by revision: NAMESPACE/NAME or NAME");
  app.add_option("-o,--output", output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  auto* why_opt = app.add_flag("--why", why,
                               "With --pod: why the scheduler placed the pod (its stored decision)");
  auto* verify_opt = app.add_flag("--verify-scheduling", verify_scheduling,
                                  "Re-run every stored scheduling decision against the state it was made "
                                  "on; exit 1 when any differs");
  app.add_flag("-v,--verbose", verbose, "Log debug detail to stderr");
  why_opt->needs(pod_opt);
  verify_opt->excludes(pod_opt)->excludes(at_opt)->excludes(from_opt)->excludes(to_opt);
  at_opt->excludes(from_opt)->excludes(to_opt)->excludes(pod_opt);
  pod_opt->excludes(from_opt)->excludes(to_opt);
  rollout_opt->excludes(pod_opt)->excludes(at_opt)->excludes(from_opt)->excludes(to_opt)->excludes(verify_opt);
  CLI11_PARSE(app, argc, argv);

  // Logs go to stderr only; stdout is the result.
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  Logger("log")->set_level(spdlog::get_level());
  Logger("replay")->set_level(spdlog::get_level());

  const replay::Output out = output == "json"   ? replay::Output::kJson
                             : output == "yaml" ? replay::Output::kYaml
                                                : replay::Output::kTable;
  auto log = OpenLogReadOnly(data_dir);
  if (!log.ok()) {
    const std::string& m = log.status().message();
    // NotFound already names the directory ("DIR: no event log here").
    return Fail("--data-dir " + (log.status().code() == Code::kNotFound
                                     ? m
                                     : data_dir + ": " + log.status().ToString()));
  }
  EventLog& events_log = **log;

  // NAMESPACE/NAME or NAME (in default): false when `text` is neither.
  auto split = [](const std::string& text, std::string& ns, std::string& name) {
    ns = "default";
    name = text;
    if (const size_t slash = text.find('/'); slash != std::string::npos) {
      ns = text.substr(0, slash);
      name = text.substr(slash + 1);
    }
    return !ns.empty() && !name.empty() && name.find('/') == std::string::npos;
  };
  if (!rollout.empty()) {
    std::string ns, name;
    if (!split(rollout, ns, name)) return Fail("--rollout " + rollout + ": want NAMESPACE/NAME or NAME");
    auto timeline = replay::BuildRolloutTimeline(events_log, ns, name);
    if (!timeline.ok()) return Fail(timeline.status().message());
    std::cout << replay::RenderRollout(*timeline, out);
    return 0;
  }
  if (!pod.empty()) {
    std::string ns, name;
    if (!split(pod, ns, name)) return Fail("--pod " + pod + ": want NAMESPACE/NAME or NAME");
    if (why) {
      auto bytes = replay::LatestDecision(events_log, ns, name);
      if (!bytes.ok()) return Fail(bytes.status().message());
      auto record = scheduler::ReadDecisionRecord(*bytes);
      if (!record.ok()) return Fail(record.status().message());
      if (out == replay::Output::kTable) {
        std::cout << replay::DecisionText(**record);
      } else if (out == replay::Output::kJson) {
        std::cout << model::ToJson(replay::DecisionValue(**record), 2) << "\n";
      } else {
        std::cout << model::ToYaml(replay::DecisionValue(**record));
      }
      return 0;
    }
    auto timeline = replay::BuildPodTimeline(events_log, ns, name);
    if (!timeline.ok()) return Fail(timeline.status().message());
    std::cout << replay::RenderTimeline(*timeline, out);
    return 0;
  }
  if (verify_scheduling) {
    auto report = replay::VerifyScheduling(events_log);
    if (!report.ok()) return Fail("--verify-scheduling: " + report.status().ToString());
    for (const std::string& note : report->notes) std::cout << note << "\n";
    std::cout << report->verified << " decisions verified, " << report->differ << " differ";
    if (report->skipped > 0) std::cout << ", " << report->skipped << " skipped";
    std::cout << "\n";
    return report->differ == 0 ? 0 : 1;
  }
  if (at >= 0) {
    auto state = replay::StateAt(events_log, Revision(at), prefix);
    if (!state.ok()) return Fail("--at " + std::to_string(at) + ": " + state.status().message());
    std::cout << replay::RenderState(*state, out);
    return 0;
  }
  replay::EventQuery query;
  query.from = Revision(from);
  query.to = Revision(to);
  query.prefix = prefix;
  auto events = replay::ListEvents(events_log, query);
  if (!events.ok()) return Fail(events.status().message());
  std::cout << replay::RenderEvents(*events, out);
  return 0;
}
