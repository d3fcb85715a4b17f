#include "stages/runtime/process/exec_sessions.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <random>

#include "base/quiet_write.h"
#include "stages/runtime/process/cgroups.h"
#include "stages/runtime/process/spawn.h"

namespace podflow::runtime::process {
namespace {

// Input a command has not taken yet, at most: more is refused.
constexpr size_t kMaxPendingInput = 4 << 20;

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

std::string NewSessionId() {
  std::random_device random;  // the kernel's random source
  std::string id;
  char part[9];
  for (int i = 0; i < 8; ++i) {
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    id += part;
  }
  return id;
}

// What the child's start failed at, told through the report pipe.
enum Failed : int { kExec = 0, kDir = 1, kNamespaces = 2, kTerminal = 3, kIdentity = 4 };

// The child between clone and exec: only async-signal-safe calls; every
// signal blocked on entry.
[[noreturn]] void RunExecChild(int container_pidfd, bool join, bool tty, int in_fd, int out_fd, int err_fd,
                               int go_fd, int fail_fd, const char* dir, const ProcessIdentity& identity,
                               const ExecPlan& lookup, char* const* argv, char* const* envp) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::setsid();
  int report[3] = {0, -1, 0};  // errno, what failed, and its step
  if (join && ::setns(container_pidfd, CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWNET) != 0) report[0] = errno, report[1] = kNamespaces;
  char go = 0;
  ssize_t n;
  while ((n = ::read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) ::_exit(127);
  if (report[1] < 0 && tty && ::ioctl(in_fd, TIOCSCTTY, 0) != 0) report[0] = errno, report[1] = kTerminal;
  ::dup2(in_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (report[1] < 0 && ::chdir(dir) != 0) report[0] = errno, report[1] = kDir;
  if (report[1] < 0 && (report[0] = EnterIdentity(identity, &report[2])) != 0) report[1] = kIdentity;
  if (report[1] < 0) {
    if (fail_fd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(fail_fd - 1), 0u);
    ::syscall(SYS_close_range, static_cast<unsigned>(fail_fd + 1), ~0u, 0u);
    ResetSignals();
    report[0] = ExecFirst(lookup, argv, envp);
    report[1] = kExec;
  }
  (void)!::write(fail_fd, report, sizeof report);
  ::_exit(127);
}

// Reads what `fd` holds now into `into`, up to `budget` bytes; closes it at
// its end (a pty's master reads EIO once its terminal is closed).
void ReadSome(int& fd, std::string& into, size_t budget) {
  char buf[65536];
  while (fd >= 0 && into.size() < budget) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, budget - into.size()));
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    CloseFd(fd);
  }
}

}  // namespace

struct ExecSessions::Session {
  std::mutex mu;  // one turn at a time: the descriptors and the input below
  std::string owner;
  pid_t pid = -1;
  int pidfd = -1;
  // In the container's PID namespace: what it leaves running ends with the
  // container, as beside a CRI runtime's container; outside of one it is
  // killed when the command ends.
  bool contained = false;
  int in_fd = -1;  // -1: no input (or closed)
  int out_fd = -1;
  int err_fd = -1;
  bool tty = false;
  std::string pending;  // input the command has not taken yet
  bool close_after_pending = false;
  bool done = false;  // its end and its last output have been taken
  std::atomic<int64_t> last_turn_ms{0};

  ~Session() {
    CloseFd(in_fd);
    CloseFd(out_fd);
    CloseFd(err_fd);
    CloseFd(pidfd);
  }
  // Reaps it (killing it first when `kill`), at once when it has ended and
  // not `wait`; its exit code, or nullopt when it still runs. Reaped as soon
  // as it ends (the sweeper), since a zombie of a container's PID namespace
  // keeps that namespace, and so the container's end, from finishing.
  std::optional<int> Reap(bool kill, bool wait) {
    std::lock_guard lock(reap_mu_);
    if (exit_code_) return exit_code_;
    if (kill) ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    siginfo_t info{};
    const int options = WEXITED | WNOWAIT | (kill || wait ? 0 : WNOHANG);
    if (::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, options) != 0) {
      exit_code_ = 128 + SIGKILL;  // reaped by someone else: how it ended is not known
      return exit_code_;
    }
    if (info.si_pid == 0) return std::nullopt;  // still running
    // While it is a zombie its pid still names its group.
    if (kill || !contained) ::killpg(pid, SIGKILL);
    ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED);
    exit_code_ = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
    return exit_code_;
  }
  bool Reaped() const {
    std::lock_guard lock(reap_mu_);
    return exit_code_.has_value();
  }
  bool Exited() const {
    {
      std::lock_guard lock(reap_mu_);
      if (exit_code_) return true;
    }
    pollfd ended{pidfd, POLLIN, 0};
    return ::poll(&ended, 1, 0) > 0;
  }
  void WritePending() {
    while (!pending.empty() && in_fd >= 0) {
      const ssize_t n = WriteQuietly(in_fd, pending.data(), pending.size());
      if (n > 0) {
        pending.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      pending.clear();  // it closed its stdin: what it did not take is lost, as on a pipe
      CloseFd(in_fd);
    }
    if (pending.empty() && close_after_pending && !tty) CloseFd(in_fd);
  }

 private:
  mutable std::mutex reap_mu_;
  std::optional<int> exit_code_;  // GUARDED_BY(reap_mu_): reaped
};

ExecSessions::ExecSessions(std::chrono::milliseconds idle) : idle_(idle) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  sweeper_ = std::thread([this] { Sweep(); });
}

ExecSessions::~ExecSessions() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  Wake();
  sweeper_.join();
  KillAll();
  CloseFd(wake_fd_);
}

void ExecSessions::Wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ExecSessions::Sweep() {
  std::vector<std::shared_ptr<Session>> running;
  std::vector<pollfd> fds;
  while (true) {
    running.clear();
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      for (const auto& [id, session] : sessions_) running.push_back(session);
    }
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    // Every command not reaped yet, ended ones too (their pidfd is readable at once).
    for (const auto& session : running) fds.push_back({session->Reaped() ? -1 : session->pidfd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 1000);
    uint64_t woken = 0;
    (void)!::read(wake_fd_, &woken, sizeof woken);
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) running[i - 1]->Reap(/*kill=*/false, /*wait=*/false);
    }
    DropIdle();
  }
}

void ExecSessions::KillAll() {
  std::map<std::string, std::shared_ptr<Session>> all;
  {
    std::lock_guard lock(mu_);
    all.swap(sessions_);
  }
  for (auto& [id, session] : all) {
    std::lock_guard turn(session->mu);
    session->Reap(/*kill=*/true, /*wait=*/true);
    session->done = true;
  }
}

size_t ExecSessions::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

void ExecSessions::DropIdle() {
  std::vector<std::shared_ptr<Session>> idle;
  {
    std::lock_guard lock(mu_);
    const int64_t before = NowMs() - idle_.count();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->last_turn_ms.load() < before) {
        idle.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& session : idle) {
    std::lock_guard turn(session->mu);
    session->Reap(/*kill=*/true, /*wait=*/true);
    session->done = true;
  }
}

Result<std::string> ExecSessions::Start(ExecTarget target, const ExecCommand& command) {
  const int container = target.pidfd.get();
  DropIdle();
  if (command.argv.empty()) return Status::Invalid("no command specified");
  std::string id = NewSessionId();
  // What could not start it, as a CRI runtime words it.
  const auto not_started = [&id](const std::string& why) {
    return Status::Invalid("failed to start exec \"" + id +
                           "\": OCI runtime exec failed: exec failed: unable to start container process: " + why +
                           ": unknown");
  };
  const std::string dir = target.working_dir.empty() ? "/" : target.working_dir;
  EnvList env = std::move(target.env);
  // On a terminal of its own, as a CRI runtime sets it.
  if (command.tty && std::none_of(env.begin(), env.end(), [](const auto& e) { return e.first == "TERM"; })) {
    env.emplace_back("TERM", "xterm");
  }
  // Looked up in the container (its root, its volumes).
  const ExecPlan lookup = PlanExec(command.argv[0], env);
  ExecArgs exec(command.argv, env);

  // The child's ends (closed here once it has them) and the session's.
  int child_in = -1, child_out = -1, child_err = -1, in = -1, out = -1, err = -1;
  int go[2] = {-1, -1}, fail[2] = {-1, -1};
  const auto close_all = [&] {
    for (int* fd : {&child_in, &child_out, &child_err, &in, &out, &err, &go[0], &go[1], &fail[0], &fail[1]}) {
      CloseFd(*fd);
    }
  };
  const auto failed = [&](const std::string& what) {
    const int e = errno;
    close_all();
    return Status::Unavailable(what + ": " + ErrnoText(e));
  };
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(fail, O_CLOEXEC) != 0) return failed("pipe");
  if (command.tty) {
    // In the container's own devpts when it has one (reached through its
    // root), as a container runtime allocates it; else this machine's.
    const pid_t container_pid = target.join ? PidOf(container) : -1;
    if (container_pid > 0) {
      out = ::open(("/proc/" + std::to_string(container_pid) + "/root/dev/pts/ptmx").c_str(),
                   O_RDWR | O_NOCTTY | O_CLOEXEC);
    }
    if (out >= 0) {
      if (::unlockpt(out) == 0) child_in = ::ioctl(out, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (child_in < 0) CloseFd(out);
    }
    if (out < 0) {
      out = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
      char name[128];
      if (out < 0 || ::grantpt(out) != 0 || ::unlockpt(out) != 0 || ::ptsname_r(out, name, sizeof name) != 0) {
        return failed("a terminal for the command");
      }
      // Its stdin, stdout and stderr alike.
      child_in = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    }
    if (child_in < 0) return failed("a terminal for the command");
    if (command.rows > 0 && command.cols > 0) {
      winsize size{command.rows, command.cols, 0, 0};
      ::ioctl(out, TIOCSWINSZ, &size);
    }
    if (command.with_stdin && (in = ::fcntl(out, F_DUPFD_CLOEXEC, 0)) < 0) return failed("a terminal for the command");
  } else {
    int p[2];
    if (command.with_stdin) {
      if (::pipe2(p, O_CLOEXEC) != 0) return failed("pipe");
      child_in = p[0], in = p[1];
    } else if ((child_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
      return failed("/dev/null");
    }
    if (::pipe2(p, O_CLOEXEC) != 0) return failed("pipe");
    out = p[0], child_out = p[1];
    if (::pipe2(p, O_CLOEXEC) != 0) return failed("pipe");
    err = p[0], child_err = p[1];
  }

  std::optional<SignalsBlocked> blocked(std::in_place);
  int pidfd = -1;
  const pid_t pid = target.join ? CloneInPidNamespaceOf(container, &pidfd) : Clone(0, &pidfd);
  if (pid == 0) {
    RunExecChild(container, target.join, command.tty, child_in, command.tty ? child_in : child_out,
                 command.tty ? child_in : child_err, go[0], fail[1], dir.c_str(), target.identity, lookup,
                 exec.argv.data(), exec.envp.data());
  }
  const int clone_errno = errno;
  blocked.reset();
  if (pid < 0) {
    // ESRCH, EINVAL, ENOMEM (a namespace whose init has ended): the container is gone.
    if (target.join && (clone_errno == ESRCH || clone_errno == EINVAL || clone_errno == ENOMEM)) {
      close_all();
      return Status::NotFound("the container has ended");
    }
    errno = clone_errno;
    return failed("starting the command beside the container");
  }
  CloseFd(child_in);
  CloseFd(child_out);
  CloseFd(child_err);
  CloseFd(go[0]);
  CloseFd(fail[1]);
  const Status grouped = ContainerCgroups::Add(target.cgroups, pid);
  if (grouped.ok()) (void)!::write(go[1], "g", 1);
  CloseFd(go[1]);
  int report[3] = {0, -1, 0};
  ssize_t n;
  while ((n = ::read(fail[0], report, sizeof report)) < 0 && errno == EINTR) {
  }
  CloseFd(fail[0]);
  auto session = std::make_shared<Session>();
  session->pid = pid;
  session->pidfd = pidfd;
  if (!grouped.ok() || n > 0) {
    session->Reap(/*kill=*/!grouped.ok(), /*wait=*/true);
    close_all();
    if (!grouped.ok()) return grouped;
    switch (report[1]) {
      case kNamespaces:
        return Status::NotFound("the container has ended");
      case kDir:
        return not_started("chdir to cwd (\"" + dir + "\") set in config.json failed: " + ErrnoText(report[0]));
      case kTerminal:
        return Status::Unavailable("the command's terminal: " + ErrnoText(report[0]));
      case kIdentity:
        return not_started(IdentityFailure(report[0], report[2]));
      default:
        return not_started(ExecFailure(lookup, report[0]));
    }
  }
  for (int fd : {in, out, err}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  session->owner = command.owner;
  session->contained = target.join;
  session->tty = command.tty;
  session->in_fd = std::exchange(in, -1);
  session->out_fd = std::exchange(out, -1);
  session->err_fd = std::exchange(err, -1);
  session->last_turn_ms = NowMs();
  {
    std::lock_guard lock(mu_);
    sessions_.emplace(id, std::move(session));
  }
  Wake();  // the sweeper watches it from now on
  return id;
}

Result<ExecChunk> ExecSessions::Turn(const std::string& id, const std::string& owner, const ExecTurn& turn,
                                     std::chrono::milliseconds wait) {
  DropIdle();
  std::shared_ptr<Session> found;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it != sessions_.end() && it->second->owner == owner) found = it->second;
  }
  if (found == nullptr) return Status::NotFound("no exec session " + id);
  Session& s = *found;
  ExecChunk chunk;
  {
    std::lock_guard lock(s.mu);
    if (s.done) return Status::NotFound("no exec session " + id);
    Status turned = TakeTurn(s, turn, wait, chunk);
    if (!turned.ok()) return turned;
  }
  if (chunk.exited) {
    std::lock_guard map(mu_);
    auto it = sessions_.find(id);
    if (it != sessions_.end() && it->second == found) sessions_.erase(it);
  }
  return chunk;
}

Status ExecSessions::TakeTurn(Session& s, const ExecTurn& turn, std::chrono::milliseconds wait, ExecChunk& chunk) {
  s.last_turn_ms = NowMs();
  if (s.tty && turn.rows > 0 && turn.cols > 0) {
    winsize size{turn.rows, turn.cols, 0, 0};
    ::ioctl(s.out_fd, TIOCSWINSZ, &size);
  }
  if (!turn.input.empty() && s.in_fd >= 0) {
    // The caller sends more only once what it sent was taken (input_waiting 0).
    if (s.pending.size() + turn.input.size() > kMaxPendingInput) {
      return Status::Unavailable("the command does not take its input: " + std::to_string(s.pending.size()) +
                                 " bytes wait for it");
    }
    s.pending += turn.input;
  }
  if (turn.close_stdin) s.close_after_pending = true;
  s.WritePending();

  const auto deadline = Clock::now() + wait;
  for (;;) {
    const auto read_all = [&] {
      ReadSome(s.out_fd, chunk.out, kMaxChunk);
      ReadSome(s.err_fd, chunk.err, kMaxChunk - std::min(kMaxChunk, chunk.out.size()));
      return chunk.out.size() + chunk.err.size() < kMaxChunk;  // all there was
    };
    const bool drained = read_all();
    if (s.Exited()) {
      // All it printed before it ended goes out before its end is told
      // (read once more: it may have printed after the read above).
      if (drained && read_all()) {
        chunk.exited = true;
        chunk.exit_code = *s.Reap(/*kill=*/false, /*wait=*/true);
        s.done = true;
      }
      break;
    }
    if (!chunk.out.empty() || !chunk.err.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd fds[4] = {{s.out_fd, POLLIN, 0},
                     {s.err_fd, POLLIN, 0},
                     {s.pidfd, POLLIN, 0},
                     {s.pending.empty() ? -1 : s.in_fd, POLLOUT, 0}};
    ::poll(fds, 4, static_cast<int>(left.count()));
    if (fds[3].revents != 0) s.WritePending();
  }
  chunk.input_waiting = s.pending.size();
  return Status::Ok();
}

}  // namespace podflow::runtime::process
