// Exec sessions: `podflow exec`'s commands run for real beside a container
// of the process runtime, as a CRI runtime's Exec runs them: in the
// container's PID, mount and UTS namespaces (when it has them) and in its
// cgroups, with its env and working dir; stdin, stdout and stderr
// through pipes, or one terminal of its own (a pty) with tty. The caller
// drives a session by turns: its input goes in, what the command printed
// since comes out, until the command has ended and all of its output has
// been taken. A thread of its own reaps each command as soon as it ends (a
// zombie in a container's PID namespace would hold the container's end up)
// and kills a session no turn has come for in `idle` (its caller has gone).
//
// Thread safety: every method may be called from any thread. A command is
// killed (PR_SET_PDEATHSIG) when the thread that started it ends: Start is
// called from long-lived threads (the kubelet channel's).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "stages/runtime/process/identity.h"
#include "stages/runtime/process/spawn.h"
#include "stages/runtime/shell_script.h"

namespace podflow::runtime::process {

// The container a command runs beside, as the engine names it.
struct ExecTarget {
  UniqueFd pidfd;        // its main process
  bool join = false;     // it has namespaces of its own to join
  std::vector<std::string> cgroups;  // its cgroups' directories (none: it has none)
  EnvList env;           // its process environment
  std::string working_dir;
  ProcessIdentity identity;  // who it runs as: the command runs so too
};

struct ExecCommand {
  std::vector<std::string> argv;
  bool with_stdin = false;  // the caller gives input; otherwise stdin is /dev/null
  bool tty = false;
  uint16_t rows = 0, cols = 0;  // tty: the caller's terminal (0: not known)
  std::string owner;            // only turns naming the same owner reach it
};

struct ExecTurn {
  std::string input;
  bool close_stdin = false;
  uint16_t rows = 0, cols = 0;  // tty: a new size (0: unchanged)
};

struct ExecChunk {
  std::string out, err;  // with a tty everything comes as `out`
  bool exited = false;   // ended, and all of its output is in this chunk or before
  int exit_code = 0;     // 128 + the signal for one killed by a signal
  size_t input_waiting = 0;  // input given that the command has not taken yet
};

class ExecSessions {
 public:
  // A turn answers with at most this much output (the rest waits).
  static constexpr size_t kMaxChunk = 256 * 1024;

  explicit ExecSessions(std::chrono::milliseconds idle = std::chrono::seconds(60));
  ~ExecSessions();  // kills and reaps every command still running
  ExecSessions(const ExecSessions&) = delete;
  ExecSessions& operator=(const ExecSessions&) = delete;

  // Starts `command` beside `target`; the session's name (64 hex digits,
  // as a CRI runtime's exec IDs). Invalid, in a CRI runtime's words, when it
  // cannot start (`failed to start exec "ID": OCI runtime exec failed: ...
  // exec: "x": executable file not found in $PATH: unknown`); Unavailable
  // when the container has ended.
  Result<std::string> Start(ExecTarget target, const ExecCommand& command);
  // One turn of session `id`: `turn`'s input written (what the command does
  // not take yet is kept for the next turns), then what it printed, waiting
  // up to `wait` for something. NotFound when `owner` has no session `id`
  // (ended and taken, killed as idle, or someone else's).
  Result<ExecChunk> Turn(const std::string& id, const std::string& owner, const ExecTurn& turn,
                         std::chrono::milliseconds wait);
  size_t size() const;
  // Kills and reaps every command (the runtime is stopping: before its
  // containers, whose ends wait for their namespaces' processes).
  void KillAll();

 private:
  struct Session;
  // Kills the sessions no turn has come for in `idle_` (their callers left).
  void DropIdle();
  // The sweeper: reaps each command once it ends, and DropIdle every second.
  void Sweep();
  void Wake();
  // One turn of `s`. REQUIRES: s.mu held.
  Status TakeTurn(Session& s, const ExecTurn& turn, std::chrono::milliseconds wait, ExecChunk& chunk);

  const std::chrono::milliseconds idle_;
  // Lock order: never mu_ while holding a Session's mu.
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                                     // GUARDED_BY(mu_)
  int wake_fd_ = -1;  // an eventfd: a new session, or the end
  std::thread sweeper_;
};

}  // namespace podflow::runtime::process
