#include "stages/runtime/process/process_engine.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// argv[0] as the runtime finds it: a name with a '/' as written, any other
// in the container's PATH (the default one when its env sets none).
std::optional<std::string> FindExecutable(const std::string& name, const EnvList& env) {
  const auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    return std::nullopt;
  }
  std::string path = kDefaultPath;
  for (const auto& [k, v] : env) {
    if (k == "PATH") path = v;
  }
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child between clone and exec: only async-signal-safe calls.
[[noreturn]] void RunChild(bool isolate, const char* hostname, size_t hostname_len, int go_fd, int fail_fd,
                           int out_fd, int err_fd, const char* dir, const char* path, char* const* argv,
                           char* const* envp) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::setsid();
  if (isolate) {
    // Its own /proc, for its own PID namespace; mounts stay in its namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0) {
      ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    }
    if (hostname_len > 0) ::sethostname(hostname, hostname_len);
  }
  char go = 0;
  while (::read(go_fd, &go, 1) < 0 && errno == EINTR) {
  }
  const int null_fd = ::open("/dev/null", O_RDONLY);
  ::dup2(null_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  int report[2] = {0, 0};  // errno, and whether it was the working dir
  if (::chdir(dir) != 0) {
    report[0] = errno;
    report[1] = 1;
  } else {
    // Nothing of this process's descriptors but the report pipe (close on exec).
    if (fail_fd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(fail_fd - 1), 0u);
    ::syscall(SYS_close_range, static_cast<unsigned>(fail_fd + 1), ~0u, 0u);
    sigset_t all;
    ::sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    ::execve(path, argv, envp);
    report[0] = errno;
  }
  (void)!::write(fail_fd, report, sizeof report);
  ::_exit(127);
}

}  // namespace

struct ProcessEngine::Proc {
  pid_t pid = -1;
  int pidfd = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string pod_key;
  std::optional<std::string> cgroup;
  std::unique_ptr<CriLogWriter> log;
  ~Proc() {
    CloseFd(pidfd);
    CloseFd(out_fd);
    CloseFd(err_fd);
  }
};

ProcessEngine::ProcessEngine(EngineOptions options) : options_(std::move(options)) {
  isolate_ = ::geteuid() == 0;
  if (!isolate_) {
    limitations_.push_back("not root: containers run without their own PID, mount and UTS namespaces");
  }
  Result<MemoryCgroups> cgroups = MemoryCgroups::Open(options_.cgroup_mount, options_.owner);
  if (cgroups.ok()) {
    cgroups_ = std::move(*cgroups);
  } else {
    limitations_.push_back("memory limits are not enforced: " + cgroups.status().message());
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  collector_ = std::thread([this] { Collect(); });
}

ProcessEngine::~ProcessEngine() {
  stopping_ = true;
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  collector_.join();
  std::lock_guard lock(mu_);
  for (auto& [id, proc] : procs_) {
    ::killpg(proc->pid, SIGKILL);
    ::kill(proc->pid, SIGKILL);
    siginfo_t info{};
    ::waitid(P_PIDFD, static_cast<id_t>(proc->pidfd), &info, WEXITED);
    if (proc->cgroup && cgroups_) cgroups_->Remove(*proc->cgroup);
  }
  procs_.clear();
  if (cgroups_) cgroups_->RemoveAll();
  CloseFd(wake_fd_);
}

std::string ProcessEngine::LogPath(const std::string& log_dir, int32_t restart_count) const {
  return (fs::path(options_.log_root) / log_dir / (std::to_string(restart_count) + ".log")).string();
}

Result<ProcessId> ProcessEngine::Launch(const ContainerLaunch& launch) {
  if (launch.argv.empty()) return Status::Invalid("no command specified");
  const std::optional<std::string> path = FindExecutable(launch.argv[0], launch.env);
  if (!path) return Status::Invalid("exec: \"" + launch.argv[0] + "\": executable file not found in $PATH");
  const std::string dir = launch.working_dir.empty() ? "/" : launch.working_dir;
  auto log = std::make_unique<CriLogWriter>(LogPath(launch.log_dir, launch.restart_count), options_.log_limits);
  if (Status opened = log->Open(); !opened.ok()) return opened;

  // Everything the child needs, made before it exists.
  std::vector<std::string> argv_text = launch.argv;
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (const auto& [k, v] : launch.env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::lock_guard lock(mu_);
  const ProcessId id = next_id_++;
  std::optional<std::string> group;
  if (launch.memory_limit_bytes && cgroups_) {
    Result<std::string> made = cgroups_->Create(std::to_string(id), *launch.memory_limit_bytes);
    if (!made.ok()) return made.status();
    group = *made;
  }
  int out[2], err[2], go[2], fail[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(fail, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  const unsigned long flags = SIGCHLD | (isolate_ ? CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS : 0);
  const pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) {
    RunChild(isolate_, launch.hostname.data(), launch.hostname.size(), go[0], fail[1], out[1], err[1], dir.c_str(),
             path->c_str(), argv.data(), envp.data());
  }
  for (int fd : {out[1], err[1], go[0], fail[1]}) ::close(fd);
  if (pid < 0) {
    for (int fd : {out[0], err[0], go[1], fail[0]}) ::close(fd);
    if (group) cgroups_->Remove(*group);
    return Status::Unavailable(std::string("starting the container process: ") + std::strerror(errno));
  }
  auto proc = std::make_unique<Proc>();
  proc->pid = pid;
  proc->pidfd = PidfdOpen(pid);
  proc->out_fd = out[0];
  proc->err_fd = err[0];
  proc->pod_key = launch.pod_key;
  proc->cgroup = group;
  proc->log = std::move(log);
  if (group) (void)cgroups_->Add(*group, pid);  // before it runs a line of its own
  (void)!::write(go[1], "g", 1);
  ::close(go[1]);
  int report[2] = {0, 0};
  ssize_t n;
  while ((n = ::read(fail[0], report, sizeof report)) < 0 && errno == EINTR) {
  }
  ::close(fail[0]);
  if (n > 0) {
    // It did not get to its command: reaped here, never reported.
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED);
    if (group) cgroups_->Remove(*group);
    if (report[1] != 0) {
      return Status::Invalid("chdir to cwd (\"" + dir + "\") set in config.json failed: " + std::strerror(report[0]));
    }
    return Status::Invalid("exec: \"" + launch.argv[0] + "\": " + std::strerror(report[0]));
  }
  ::fcntl(proc->out_fd, F_SETFL, O_NONBLOCK);
  ::fcntl(proc->err_fd, F_SETFL, O_NONBLOCK);
  procs_.emplace(id, std::move(proc));
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  return id;
}

void ProcessEngine::Signal(ProcessId id, int signal) {
  std::lock_guard lock(mu_);
  auto it = procs_.find(id);
  if (it == procs_.end()) return;  // reaped: its pid may be someone else's now
  if (signal == SIGKILL) ::killpg(it->second->pid, SIGKILL);
  ::kill(it->second->pid, signal);
}

std::vector<ContainerExit> ProcessEngine::TakeExits() {
  std::lock_guard lock(mu_);
  return std::exchange(exits_, {});
}

std::vector<ContainerLogLine> ProcessEngine::ReadLog(const std::string& log_dir, int32_t restart_count) const {
  std::vector<ContainerLogLine> out;
  for (CriLogRecord& r : ReadCriLog(LogPath(log_dir, restart_count))) {
    out.push_back({std::chrono::floor<SimDuration>(r.at), std::move(r.text)});
  }
  return out;
}

void ProcessEngine::RemovePodLogs(const std::string& pod_dir) {
  if (pod_dir.empty() || pod_dir.find('/') != std::string::npos) return;
  std::error_code ec;
  fs::remove_all(fs::path(options_.log_root) / pod_dir, ec);
}

void ProcessEngine::Drain(Proc& proc, std::chrono::system_clock::time_point at) {
  char buf[65536];
  for (auto [fd, stream] : {std::pair{&proc.out_fd, "stdout"}, std::pair{&proc.err_fd, "stderr"}}) {
    while (*fd >= 0) {
      const ssize_t n = ::read(*fd, buf, sizeof buf);
      if (n > 0) {
        proc.log->Write(stream, std::string_view(buf, static_cast<size_t>(n)), at);
        continue;
      }
      if (n < 0 && (errno == EINTR)) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) CloseFd(*fd);
      break;
    }
  }
}

void ProcessEngine::Reap(ProcessId id, Proc& proc) {
  siginfo_t info{};
  if (::waitid(P_PIDFD, static_cast<id_t>(proc.pidfd), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
    return;  // not yet
  }
  // While it is a zombie its pid still names its group: what it left behind goes too.
  ::killpg(proc.pid, SIGKILL);
  ::waitid(P_PIDFD, static_cast<id_t>(proc.pidfd), &info, WEXITED);
  const auto now = std::chrono::system_clock::now();
  Drain(proc, now);
  proc.log->Flush(now);
  ContainerExit exit;
  exit.id = id;
  exit.pod_key = proc.pod_key;
  exit.exit_code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  exit.oom_killed = proc.cgroup && cgroups_ && cgroups_->OomKills(*proc.cgroup) > 0;
  exit.at = std::chrono::floor<SimDuration>(now);
  if (proc.cgroup && cgroups_) cgroups_->Remove(*proc.cgroup);
  exits_.push_back(std::move(exit));
}

void ProcessEngine::Collect() {
  std::vector<pollfd> fds;
  std::vector<ProcessId> owners;
  while (!stopping_) {
    fds.clear();
    owners.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    owners.push_back(0);
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, proc] : procs_) {
        for (int fd : {proc->out_fd, proc->err_fd, proc->pidfd}) {
          if (fd < 0) continue;
          fds.push_back({fd, POLLIN, 0});
          owners.push_back(id);
        }
      }
    }
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    uint64_t woken = 0;
    (void)!::read(wake_fd_, &woken, sizeof woken);
    const auto now = std::chrono::system_clock::now();
    std::lock_guard lock(mu_);
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = procs_.find(owners[i]);
      if (it == procs_.end()) continue;
      Proc& proc = *it->second;
      if (fds[i].fd == proc.pidfd) {
        Reap(it->first, proc);
        if (!exits_.empty() && exits_.back().id == it->first) procs_.erase(it);
      } else {
        Drain(proc, now);
      }
    }
  }
}

}  // namespace podflow::runtime::process
