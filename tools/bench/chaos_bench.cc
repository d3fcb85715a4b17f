// podflow-bench chaos [--cycles N] [--mode single|stages|both] [--rate PODS/S] [--seed N]:
// the pipeline under publisher load, killed with SIGKILL at random points
// and restarted for N cycles per mode (chaos.h), then checked: every
// acknowledged pod must be in the log and Running, none bound twice, no
// revision missing. Prints, per mode, `MODE_KEY=value` lines.
#include <unistd.h>

#include <filesystem>

#include "bench.h"
#include "chaos.h"

namespace podflow::bench {

int RunChaosBench(const std::vector<std::string>& args) {
  ChaosOptions options;
  options.cycles = 50;
  std::string modes = "both";
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    try {
      if (args[i] == "--cycles") {
        options.cycles = std::stoi(args[i + 1]);
      } else if (args[i] == "--mode") {
        modes = args[i + 1];
      } else if (args[i] == "--rate") {
        options.rate = std::stod(args[i + 1]);
      } else if (args[i] == "--seed") {
        options.seed = std::stoull(args[i + 1]);
      } else {
        std::fprintf(stderr, "podflow-bench chaos: unknown option %s\n", args[i].c_str());
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "podflow-bench chaos: %s: not a number: %s\n", args[i].c_str(), args[i + 1].c_str());
      return 2;
    }
  }
  if (args.size() % 2 != 0 || options.cycles < 1 || options.rate <= 0 ||
      (modes != "both" && modes != "single" && modes != "stages")) {
    std::fprintf(stderr,
                 "usage: podflow-bench chaos [--cycles N>=1] [--mode single|stages|both] [--rate PODS/S] [--seed N]\n");
    return 2;
  }
  options.podflow = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "podflow").string();
  options.work_dir = std::filesystem::current_path().string();
  int code = 0;
  for (const std::string mode : {"single", "stages"}) {
    if (modes != "both" && modes != mode) continue;
    options.mode = mode;
    ChaosResult r = RunChaos(options);
    if (!r.error.empty()) {
      std::fprintf(stderr, "podflow-bench chaos (%s): %s\n", mode.c_str(), r.error.c_str());
      return 1;
    }
    for (const std::string& e : r.examples) std::fprintf(stderr, "%s: %s\n", mode.c_str(), e.c_str());
    const auto emit = [&](const char* key, double value) { Emit(mode + "_" + key, value); };
    emit("cycles", options.cycles);
    emit("kills", static_cast<double>(r.kills));
    emit("acknowledged", static_cast<double>(r.acknowledged));
    emit("lost", static_cast<double>(r.lost));
    emit("stuck", static_cast<double>(r.stuck));
    emit("bound_twice", static_cast<double>(r.bound_twice));
    emit("revisions", static_cast<double>(r.revisions));
    emit("revision_gaps", static_cast<double>(r.revision_gaps));
    emit("recovery_p50_ms", Percentile(&r.recovery_ms, 50));
    emit("recovery_p99_ms", Percentile(&r.recovery_ms, 99));
    emit("recovery_timeouts", static_cast<double>(r.recovery_timeouts));
    if (r.lost + r.stuck + r.bound_twice + r.revision_gaps + r.recovery_timeouts > 0) code = 1;
  }
  return code;
}

}  // namespace podflow::bench
