#include "stages/runtime/process/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace podflow::runtime::process {
namespace {

constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

}  // namespace

// An errno as Go's syscall package words it (lower case): runc's messages.
std::string ErrnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

ExecPlan PlanExec(const std::string& name, const EnvList& env) {
  ExecPlan plan;
  plan.name = name;
  if (name.find('/') != std::string::npos) {
    plan.paths.push_back(name);
  } else {
    plan.searched = true;
    std::string search = kDefaultPath;
    for (const auto& [k, v] : env) {
      if (k == "PATH") search = v;
    }
    for (size_t start = 0; start <= search.size();) {
      size_t end = search.find(':', start);
      if (end == std::string::npos) end = search.size();
      plan.paths.push_back((end > start ? search.substr(start, end - start) : ".") + "/" + name);
      start = end + 1;
    }
  }
  for (const std::string& p : plan.paths) plan.c_paths.push_back(p.c_str());
  plan.c_paths.push_back(nullptr);
  return plan;
}

int ExecFirst(const ExecPlan& plan, char* const* argv, char* const* envp) {
  int err = ENOENT;
  for (const char* const* p = plan.c_paths.data(); *p != nullptr; ++p) {
    ::execve(*p, argv, envp);
    // Not there, or not a file it may run: the next entry of the PATH.
    if (plan.searched && (errno == ENOENT || errno == ENOTDIR || errno == EACCES)) continue;
    return errno;
  }
  return err;
}

std::string ExecFailure(const ExecPlan& plan, int err) {
  const std::string quoted = "exec: \"" + plan.name + "\": ";
  if (plan.searched) return quoted + (err == ENOENT ? "executable file not found in $PATH" : ErrnoText(err));
  if (err == ENOENT || err == ENOTDIR) return quoted + "stat " + plan.name + ": " + ErrnoText(err);
  return quoted + ErrnoText(err);
}

pid_t PidOf(int pidfd) {
  // The kernel tells it in the descriptor's fdinfo ("Pid:\t1234").
  const std::string path = "/proc/self/fdinfo/" + std::to_string(pidfd);
  FILE* info = std::fopen(path.c_str(), "re");
  if (info == nullptr) return -1;
  char line[256];
  pid_t pid = -1;
  while (std::fgets(line, sizeof line, info) != nullptr) {
    if (std::strncmp(line, "Pid:", 4) == 0) {
      pid = static_cast<pid_t>(std::strtol(line + 4, nullptr, 10));
      break;
    }
  }
  std::fclose(info);
  return pid;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

pid_t Clone(unsigned long flags, int* pidfd) {
  // x86_64 and arm64 take (flags, stack, parent_tid, child_tid, tls);
  // CLONE_PIDFD puts the pidfd where parent_tid points.
  return static_cast<pid_t>(::syscall(SYS_clone, flags | CLONE_PIDFD | SIGCHLD, nullptr, pidfd, nullptr, nullptr));
}

pid_t CloneInPidNamespaceOf(int container_pidfd, int* pidfd) {
  const int own = ::open("/proc/thread-self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (own < 0) return -1;
  if (::setns(container_pidfd, CLONE_NEWPID) != 0) {
    const int err = errno;
    ::close(own);
    errno = err;
    return -1;
  }
  const pid_t pid = Clone(0, pidfd);
  if (pid == 0) return 0;  // `own` closes at its exec
  const int err = errno;
  // This thread's own namespace is always one it may go back to; a thread
  // left making processes in a container's would be a bug to stop at.
  if (::setns(own, CLONE_NEWPID) != 0) {
    std::fprintf(stderr, "podflow: cannot return to this thread's PID namespace: %s\n", std::strerror(errno));
    std::abort();
  }
  ::close(own);
  errno = err;
  return pid;
}

void ResetSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

SignalsBlocked::SignalsBlocked() {
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_);
}

SignalsBlocked::~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

ExecArgs::ExecArgs(const std::vector<std::string>& args, const EnvList& env) : argv_text(args) {
  for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
}

}  // namespace podflow::runtime::process
