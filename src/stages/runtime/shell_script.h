// What the simulated runtime reads in a container's command line, so that
// the documentation's one-liners behave as documented: `sleep 3600`,
// `exit 1`, `printenv`, `echo hello && sleep 10`, `sh -c "touch
// /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"`.
//
// A small reading, not a shell: simple commands joined by `;`, `&&`, `||`
// and newlines, quoting, `$VAR` / `${VAR}` from the container's
// environment, `VAR=value`, and `>` / `>>` into a file. What it knows:
// sleep (seconds or s/m/h/d suffixes, `infinity`), exit, true, false, `:`,
// echo, printf, printenv, env, touch, rm, test / [ -e|-f|-s|-d FILE ], cat
// FILE, ls (which prints only the names that do not exist). Any other
// program is taken to finish at once with status 0 when the script goes
// on after it; when it is the script's last command (or
// `exec`ed), it is the container's long-running process and the reading
// says nothing about when it ends. A loop (`while true`, `until ...`) runs
// until stopped.
//
// A shell or a `sleep` running as the container's first process ignores
// SIGTERM (PID 1 has no default handler): such a container stops only at
// the grace period's SIGKILL, as busybox containers do.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "model/sim_behavior.h"

namespace podflow::runtime {

struct ScriptFile {
  SimDuration at;
  std::string path;
  bool exists;  // created (touch, > FILE) or removed (rm)
};

struct ScriptReading {
  model::SimBehavior behavior;    // only the fields the command decides
  std::vector<ScriptFile> files;  // in time order
  std::vector<SimDuration> log_at;  // when each line of behavior.logs is printed

  // Whether `path` exists `since` the container's start. A file the script
  // never touched is taken to exist (it comes with the image).
  bool FileExists(std::string_view path, SimDuration since) const;
  // Whether the script ever changes `path`.
  bool Tracks(std::string_view path) const;
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// `argv` is the container's command then args, after kubelet's $(VAR)
// expansion; `env` its environment in order. Empty argv (the image's own
// entrypoint) reads as nothing.
ScriptReading ReadCommand(const std::vector<std::string>& argv, const EnvList& env);

// Parses a sleep operand as busybox does ("10", "1.5", "2m", "1h", "1d");
// nullopt when it is not one. "infinity" is model::kNever.
std::optional<SimDuration> ParseSleep(std::string_view operand);

}  // namespace podflow::runtime
