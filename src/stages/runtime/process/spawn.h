// What starting a process of a container takes, shared by the engine (the
// container's own process) and the probes (an exec probe's command).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "stages/runtime/shell_script.h"

namespace podflow::runtime::process {

// An errno as Go's syscall package words it (lower case), as runc's messages have it.
std::string ErrnoText(int err);

// Where a command's argv[0] is tried, as runc finds it in the container:
// a name with a '/' as written (relative to the working dir), any other at
// each entry of the container's PATH in turn (the default PATH when `env`
// sets none). Made before the child exists; ExecFirst runs it there.
struct ExecPlan {
  std::string name;
  bool searched = false;  // looked up in the PATH
  std::vector<std::string> paths;
  std::vector<const char*> c_paths;  // nullptr-terminated views of `paths`
  ExecPlan() = default;
  ExecPlan(const ExecPlan&) = delete;  // c_paths point into paths
  ExecPlan& operator=(const ExecPlan&) = delete;
  ExecPlan(ExecPlan&&) = default;      // a vector's move keeps its strings where they are
};
ExecPlan PlanExec(const std::string& name, const EnvList& env);

// In the child: execve at each of the plan's paths until one runs; returns
// the errno that ended the search when none did (ENOENT: none found).
// Async-signal-safe.
int ExecFirst(const ExecPlan& plan, char* const* argv, char* const* envp);

// runc's words for a command that could not be run (`exec: "x":
// executable file not found in $PATH`, `exec: "/x": stat /x: no such file
// or directory`, `exec: "/x": permission denied`).
std::string ExecFailure(const ExecPlan& plan, int err);


void CloseFd(int& fd);

// The pid (in this process's PID namespace) of the process `pidfd` names;
// -1 when it cannot be told.
pid_t PidOf(int pidfd);

// A descriptor owned: closed with it.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { CloseFd(fd_); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      CloseFd(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// clone(2) as fork with `flags` (namespaces) added; the child's pidfd goes
// to `pidfd`. Returns 0 in the child.
pid_t Clone(unsigned long flags, int* pidfd);

// Clone(0), the child in the PID namespace of the process `container_pidfd`
// names (a process of a container, seeing the container's processes and
// seen by them): the calling thread's namespace for its children is set to
// it for the clone and back after. -1 with errno set when the namespace
// cannot be joined (the container ended).
pid_t CloneInPidNamespaceOf(int container_pidfd, int* pidfd);

// In a child before execve: every signal's handler back to the default and
// none blocked. Async-signal-safe.
void ResetSignals();

// Blocks every signal of the calling thread while it lives: around a clone,
// so that no handler of this process runs in the child.
class SignalsBlocked {
 public:
  SignalsBlocked();
  ~SignalsBlocked();
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

// The C views of argv and env the child needs, made before it exists.
struct ExecArgs {
  ExecArgs(const std::vector<std::string>& argv, const EnvList& env);
  std::vector<std::string> argv_text, env_text;
  std::vector<char*> argv, envp;
};

}  // namespace podflow::runtime::process
