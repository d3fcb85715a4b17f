#include "stages/runtime/process/process_engine.h"

#include "base/logging.h"
#include "netns/command.h"
#include "stages/runtime/process/container_root.h"
#include "stages/runtime/process/identity.h"
#include "stages/runtime/process/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

// What one round of the collector reads from one pipe at most: a process
// that writes without pause cannot keep it from the others.
constexpr size_t kReadPerRound = 4 * 65536;

// Whether this process may make PID, mount and UTS namespaces (root in a
// container without CAP_SYS_ADMIN may not), and in them a root of the
// container's own (an overlay of this machine's root: `own_root`).
bool CanIsolate(const std::string& rootfs_base, const std::string& own, bool* own_root) {
  *own_root = false;
  if (::geteuid() != 0) return false;
  const RootPlan plan = PlanRoot(rootfs_base, own, {});
  int pidfd = -1;
  const pid_t pid = Clone(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS, &pidfd);
  if (pid == 0) {
    // What a container's start does there (some hosts allow the clone but not the mounts).
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 || ::sethostname("podflow", 7) != 0) {
      ::_exit(1);
    }
    int step = 0;
    ::_exit(MakeRoot(plan, &step) == 0 ? 0 : 2);
  }
  if (pid < 0) return false;
  siginfo_t info{};
  ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED);
  ::close(pidfd);
  if (info.si_code != CLD_EXITED || (info.si_status != 0 && info.si_status != 2)) return false;
  *own_root = info.si_status == 0;
  return true;
}

// What a child reports when it could not get to its command.
enum ChildFailure : int { kNone = 0, kWorkingDir = 1, kNamespaces = 2, kRoot = 3, kExec = 4, kIdentity = 5 };

// The child between clone and exec: only async-signal-safe calls. Every
// signal is blocked on entry (the parent blocked them around the clone).
[[noreturn]] void RunChild(bool isolate, int network_fd, const RootPlan* root, const char* hostname,
                           size_t hostname_len, int go_fd, int fail_fd, int out_fd, int err_fd, const char* dir,
                           const ProcessIdentity& identity, const ExecPlan& exec, char* const* argv,
                           char* const* envp) {
  // Killed if the thread that launched it ends (the runtime's loop), and
  // not run at all if the runtime went before it said go.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::setsid();
  int report[3] = {0, kNone, 0};  // errno, and what failed
  // Its pod's network (or its node's) before anything else.
  if (network_fd >= 0 && ::setns(network_fd, CLONE_NEWNET) != 0) {
    report[0] = errno;
    report[1] = kNamespaces;
  }
  if (isolate && report[1] == kNone) {
    // Its own root (or the machine's) and /proc, for its own PID
    // namespace; mounts stay in its namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      report[0] = errno;
      report[1] = kNamespaces;
    } else if (root != nullptr && (report[0] = MakeRoot(*root, &report[2])) != 0) {
      report[1] = kRoot;
    } else if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0 ||
               (hostname_len > 0 && ::sethostname(hostname, hostname_len) != 0)) {
      report[0] = errno;
      report[1] = kNamespaces;
    }
  }
  char go = 0;
  ssize_t n;
  while ((n = ::read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) ::_exit(127);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  ::dup2(null_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (report[1] == kNone && ::chdir(dir) != 0) {
    report[0] = errno;
    report[1] = kWorkingDir;
  }
  if (report[1] == kNone && (report[0] = EnterIdentity(identity, &report[2])) != 0) report[1] = kIdentity;
  if (report[1] == kNone) {
    // Nothing of this process's descriptors but the report pipe (close on exec).
    if (fail_fd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(fail_fd - 1), 0u);
    ::syscall(SYS_close_range, static_cast<unsigned>(fail_fd + 1), ~0u, 0u);
    ResetSignals();
    report[0] = ExecFirst(exec, argv, envp);
    report[1] = kExec;
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
  std::string pod_dir;  // of its log
  std::optional<CgroupSet> cgroups;
  std::unique_ptr<CriLogWriter> log;
  ProcessIdentity identity;  // its exec probes, hooks and exec commands run as it does
  ~Proc() {
    CloseFd(pidfd);
    CloseFd(out_fd);
    CloseFd(err_fd);
  }
};

ProcessEngine::ProcessEngine(EngineOptions options) : options_(std::move(options)) {
  if (options_.state_root.empty()) options_.state_root = options_.log_root;
  std::error_code absolute_ec;
  options_.state_root = fs::absolute(options_.state_root, absolute_ec).lexically_normal().string();
  for (std::string& hidden : options_.hidden) hidden = fs::absolute(hidden, absolute_ec).lexically_normal().string();
  volumes_ = std::make_unique<PodVolumes>(options_.state_root + "/volumes");
  std::error_code ec;
  fs::create_directories(RootfsBase(), ec);
  isolate_ = !ec && CanIsolate(RootfsBase(), options_.state_root, &own_root_);
  if (::geteuid() != 0) {
    limitations_.push_back("not root: containers run without their own PID, mount and UTS namespaces");
    limitations_.push_back(
        "not root: containers run as this process's user (a securityContext's runAsUser, runAsGroup, groups, fsGroup "
        "and capabilities are not applied)");
  } else if (!isolate_) {
    limitations_.push_back(
        "no namespaces may be made here (no CAP_SYS_ADMIN): containers run without their own PID, mount and UTS "
        "namespaces");
  }
  if (!own_root_) {
    limitations_.push_back(
        "containers have no root of their own (an overlay of this machine's root needs root and overlayfs): they "
        "see and write this machine's files, and their volumes are not mounted");
  }
  std::map<std::string, std::string> missing;
  Result<ContainerCgroups> cgroups = ContainerCgroups::Open(options_.cgroup_mount, options_.owner, &missing);
  if (cgroups.ok()) cgroups_ = std::move(*cgroups);
  const auto why = [&](const std::string& controller) {
    auto it = missing.find(controller);
    return it != missing.end() ? it->second : cgroups.ok() ? "no " + controller + " cgroup" : cgroups.status().message();
  };
  if (!limits_memory()) {
    limitations_.push_back("memory limits are not enforced: " + why("memory"));
  } else if (!cgroups_->BoundsSwap()) {
    limitations_.push_back("memory limits do not bound swap here: a process over its limit may swap instead of being OOM-killed");
  }
  if (!limits_cpu()) limitations_.push_back("CPU limits and requests are not enforced: " + why("cpu"));
  if (!options_.network_prefix.empty()) {
    std::optional<std::string> no_network;
    if (!isolate_) {
      no_network = "its containers cannot be put in namespaces here";
    } else if (!own_root_) {
      // Without a root of their own they would read this machine's
      // resolv.conf, whose servers the pod's network does not reach.
      no_network = "its containers have no root of their own for kubelet's /etc/resolv.conf and /etc/hosts";
    } else if (!netns::HasProgram("iptables-restore")) {
      no_network = "no `iptables-restore` (Debian's iptables) for kube-proxy's rules";
    } else if (Result<std::unique_ptr<netns::PodNetwork>> made =
                   netns::PodNetwork::Create(options_.network_prefix);
               made.ok()) {
      network_ = std::move(*made);
    } else {
      no_network = made.status().message();
    }
    if (no_network) {
      limitations_.push_back("pods have no network of their own (" + *no_network +
                             "): they run on this machine's network, as hostNetwork pods do");
    }
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  collector_ = std::thread([this] { Collect(); });
}

ProcessEngine::~ProcessEngine() {
  probes_.reset();
  hooks_.reset();
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
    if (proc->cgroups && cgroups_) cgroups_->Remove(*proc->cgroups);
  }
  procs_.clear();
  if (cgroups_) cgroups_->RemoveAll();
  CloseFd(wake_fd_);
}

Status ProcessEngine::AddNodeNetwork(const std::string& node, const std::string& address,
                                     const std::string& pod_cidr, const std::string& gateway) {
  if (!network_) return ContainerHost::AddNodeNetwork(node, address, pod_cidr, gateway);
  return network_->AddNode(node, {address, pod_cidr, gateway});
}

void ProcessEngine::RemoveNodeNetwork(const std::string& node) {
  if (!network_) return;
  if (Status removed = network_->RemoveNode(node); !removed.ok()) {
    Logger("stage.runtime")->warn("taking node {} off the pod network: {}", node, removed.ToString());
  }
}

std::string ProcessEngine::NodeNetwork(const std::string& node) const {
  return network_ ? network_->NodeNamespace(node) : "";
}

Result<std::string> ProcessEngine::AddPodNetwork(const std::string& node, const std::string& pod,
                                                 const std::string& address) {
  if (!network_) return ContainerHost::AddPodNetwork(node, pod, address);
  if (Status added = network_->AddPod(node, pod, address); !added.ok()) return added;
  return network_->PodNamespace(pod);
}

void ProcessEngine::RemovePodNetwork(const std::string& pod) {
  if (!network_) return;
  if (Status removed = network_->RemovePod(pod); !removed.ok()) {
    Logger("stage.runtime")->warn("taking pod {} off the pod network: {}", pod, removed.ToString());
  }
}

std::string ProcessEngine::RootfsBase() const { return options_.state_root + "/rootfs"; }

Result<std::string> ProcessEngine::SetUpVolume(const std::string& pod_dir, const VolumeSource& volume) {
  return volumes_->SetUp(pod_dir, volume);
}

std::string ProcessEngine::LogPath(const std::string& log_dir, int32_t restart_count) const {
  return (fs::path(options_.log_root) / log_dir / (std::to_string(restart_count) + ".log")).string();
}

Result<ProcessId> ProcessEngine::Launch(const ContainerLaunch& launch) {
  if (launch.argv.empty()) return Status::Invalid("no command specified");
  const std::string dir = launch.working_dir.empty() ? "/" : launch.working_dir;
  // Looked up in the container, where its volumes are too.
  const ExecPlan lookup = PlanExec(launch.argv[0], launch.env);
  auto log = std::make_unique<CriLogWriter>(LogPath(launch.log_dir, launch.restart_count), options_.log_limits);
  if (Status opened = log->Open(); !opened.ok()) return opened;
  const ProcessIdentity identity = ResolveIdentity(launch.security, options_.limits);
  std::optional<RootPlan> root;
  if (own_root_) {
    root = PlanRoot(RootfsBase(), options_.state_root, options_.hidden);
    root->read_only = launch.security.read_only_root;
    if (Status mounted = AddVolumeMounts(*root, launch.mounts); !mounted.ok()) return mounted;
  }

  ExecArgs exec(launch.argv, launch.env);  // made before the child exists
  UniqueFd network;
  if (!launch.network.empty()) {
    Result<int> opened = netns::OpenNamespace(launch.network);
    if (!opened.ok()) return Status::Invalid("setting up the container's namespaces: " + opened.status().message());
    network = UniqueFd(*opened);
  }

  std::lock_guard lock(mu_);
  const ProcessId id = next_id_++;
  std::optional<CgroupSet> group;
  if (cgroups_) {
    Result<CgroupSet> made = cgroups_->Create(
        std::to_string(id), {launch.memory_limit_bytes, launch.cpu_limit_milli, launch.cpu_request_milli});
    if (!made.ok()) return made.status();
    if (!made->dirs.empty()) group = std::move(*made);
  }
  int pipes[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};  // out, err, go, fail
  const auto close_all = [&] {
    for (auto& p : pipes) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
    if (group) cgroups_->Remove(*group);
  };
  for (auto& p : pipes) {
    if (::pipe2(p, O_CLOEXEC) != 0) {
      const int err = errno;
      close_all();
      return Status::Unavailable("pipe: " + ErrnoText(err));
    }
  }
  auto& [out, err, go, fail] = pipes;
  // No signal handler of this process may run in the child before its exec.
  std::optional<SignalsBlocked> blocked(std::in_place);
  int pidfd = -1;
  const pid_t pid = Clone(isolate_ ? CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS : 0, &pidfd);
  if (pid == 0) {
    RunChild(isolate_, network.get(), root ? &*root : nullptr, launch.hostname.data(), launch.hostname.size(), go[0],
             fail[1], out[1], err[1], dir.c_str(), identity, lookup, exec.argv.data(), exec.envp.data());
  }
  const int clone_errno = errno;
  blocked.reset();
  if (pid < 0) {
    close_all();
    return Status::Unavailable("starting the container process: " + ErrnoText(clone_errno));
  }
  CloseFd(out[1]);
  CloseFd(err[1]);
  CloseFd(go[0]);
  CloseFd(fail[1]);
  auto proc = std::make_unique<Proc>();
  proc->pid = pid;
  proc->pidfd = pidfd;
  proc->pod_key = launch.pod_key;
  proc->pod_dir = launch.log_dir.substr(0, launch.log_dir.find('/'));
  proc->cgroups = group;
  proc->log = std::move(log);
  proc->identity = identity;
  Status grouped = group ? ContainerCgroups::Add(group->dirs, pid) : Status::Ok();  // before it runs a line of its own
  if (grouped.ok()) (void)!::write(go[1], "g", 1);
  CloseFd(go[1]);  // without "g" the child ends at once
  int report[3] = {0, 0, 0};
  ssize_t n;
  while ((n = ::read(fail[0], report, sizeof report)) < 0 && errno == EINTR) {
  }
  CloseFd(fail[0]);
  if (!grouped.ok() || n > 0) {
    // It did not get to its command: reaped here, never reported.
    siginfo_t info{};
    ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED);
    close_all();
    if (!grouped.ok()) return grouped;
    switch (report[1]) {
      case kWorkingDir:
        return Status::Invalid("chdir to cwd (\"" + dir + "\") set in config.json failed: " + ErrnoText(report[0]));
      case kNamespaces:
        return Status::Invalid("setting up the container's namespaces: " + ErrnoText(report[0]));
      case kRoot:
        return Status::Invalid(RootFailure(*root, report[0], report[2]));
      case kIdentity:
        return Status::Invalid(IdentityFailure(report[0], report[2]));
      default:
        return Status::Invalid(ExecFailure(lookup, report[0]));
    }
  }
  proc->out_fd = std::exchange(out[0], -1);
  proc->err_fd = std::exchange(err[0], -1);
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
  // A pidfd names this process and no later one with its pid.
  if (signal == SIGKILL) ::killpg(it->second->pid, SIGKILL);
  ::syscall(SYS_pidfd_send_signal, it->second->pidfd, signal, nullptr, 0);
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

void ProcessEngine::RemovePodFiles(const std::string& pod_dir) {
  if (pod_dir.empty() || pod_dir.find('/') != std::string::npos || pod_dir == "." || pod_dir == "..") return;
  std::lock_guard lock(mu_);
  // A process of the pod not reaped yet writes no more.
  for (auto& [id, proc] : procs_) {
    if (proc->pod_dir == pod_dir) proc->log.reset();
  }
  std::error_code ec;
  fs::remove_all(fs::path(options_.log_root) / pod_dir, ec);
  volumes_->RemovePod(pod_dir);
}

uint64_t ProcessEngine::StartProbe(const std::string& pod_key, const ProbeCheck& check) {
  // The container, named by a pidfd of the probe's own: an exec probe joins
  // its namespaces (when it has them), and a probe of a container that has
  // ended has no result.
  int pidfd = -1;
  ProcessIdentity identity;
  {
    std::lock_guard lock(mu_);
    auto it = procs_.find(check.container);
    if (it != procs_.end()) {
      pidfd = ::fcntl(it->second->pidfd, F_DUPFD_CLOEXEC, 0);
      identity = it->second->identity;
    }
  }
  ProbeWorkers& workers = check.hook ? *hooks_ : *probes_;
  if (pidfd < 0) return workers.Start(pod_key, check, -1, false, {}, /*errored=*/true);
  return workers.Start(pod_key, check, pidfd, isolate_, std::move(identity));
}

std::vector<ProbeOutcome> ProcessEngine::TakeProbeOutcomes() {
  std::vector<ProbeOutcome> out = probes_->Take();
  for (ProbeOutcome& o : hooks_->Take()) out.push_back(std::move(o));
  return out;
}

namespace {
std::string ReadWhole(const char* path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

std::string ProcessEngine::NodeHosts() const { return ReadWhole("/etc/hosts"); }
std::string ProcessEngine::NodeResolvConf() const { return ReadWhole("/etc/resolv.conf"); }

Result<ExecTarget> ProcessEngine::ExecTargetOf(ProcessId id) const {
  std::lock_guard lock(mu_);
  auto it = procs_.find(id);
  if (it == procs_.end()) return Status::NotFound("the container's process has ended");
  pollfd ended{it->second->pidfd, POLLIN, 0};  // ended, not reaped yet
  if (::poll(&ended, 1, 0) > 0) return Status::NotFound("the container's process has ended");
  ExecTarget target;
  target.pidfd = UniqueFd(::fcntl(it->second->pidfd, F_DUPFD_CLOEXEC, 0));
  if (target.pidfd.get() < 0) return Status::Unavailable("pidfd: " + ErrnoText(errno));
  target.join = isolate_;
  if (it->second->cgroups) target.cgroups = it->second->cgroups->dirs;
  target.identity = it->second->identity;
  return target;
}

void ProcessEngine::Drain(Proc& proc, std::chrono::system_clock::time_point at, bool all) {
  char buf[65536];
  for (auto [fd, stream] : {std::pair{&proc.out_fd, "stdout"}, std::pair{&proc.err_fd, "stderr"}}) {
    for (size_t taken = 0; *fd >= 0 && (all || taken < kReadPerRound);) {
      const ssize_t n = ::read(*fd, buf, sizeof buf);
      if (n > 0) {
        taken += static_cast<size_t>(n);
        if (proc.log) proc.log->Write(stream, std::string_view(buf, static_cast<size_t>(n)), at);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) CloseFd(*fd);
      break;
    }
  }
}

bool ProcessEngine::Reap(ProcessId id, Proc& proc) {
  siginfo_t info{};
  const int waited = ::waitid(P_PIDFD, static_cast<id_t>(proc.pidfd), &info, WEXITED | WNOHANG | WNOWAIT);
  if (waited == 0 && info.si_pid == 0) return false;  // not yet
  ContainerExit exit;
  exit.id = id;
  exit.pod_key = proc.pod_key;
  if (waited == 0) {
    // While it is a zombie its pid still names its group: what it left behind goes too.
    ::killpg(proc.pid, SIGKILL);
    ::waitid(P_PIDFD, static_cast<id_t>(proc.pidfd), &info, WEXITED);
    exit.exit_code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  } else {
    // Someone else reaped it (ECHILD): it is gone, how is not known.
    exit.exit_code = 128 + SIGKILL;
  }
  const auto now = std::chrono::system_clock::now();
  Drain(proc, now, /*all=*/false);  // what the pipes still hold (a grandchild may keep them open)
  if (proc.log) proc.log->Flush(now);
  exit.oom_killed = proc.cgroups && cgroups_ && cgroups_->OomKills(*proc.cgroups) > 0;
  exit.at = std::chrono::floor<SimDuration>(now);
  exits_.push_back(std::move(exit));
  return true;
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
    if (::poll(fds.data(), fds.size(), 1000) < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // EINTR, or short of memory: again
      continue;
    }
    uint64_t woken = 0;
    (void)!::read(wake_fd_, &woken, sizeof woken);
    const auto now = std::chrono::system_clock::now();
    std::vector<std::unique_ptr<Proc>> ended;
    {
      std::lock_guard lock(mu_);
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = procs_.find(owners[i]);
        if (it == procs_.end()) continue;
        Proc& proc = *it->second;
        if (fds[i].fd != proc.pidfd) {
          Drain(proc, now, /*all=*/false);
        } else if (Reap(it->first, proc)) {
          ended.push_back(std::move(it->second));
          procs_.erase(it);
        }
      }
    }
    // Outside the lock: removing a cgroup may wait for its last processes.
    for (auto& proc : ended) {
      if (proc->cgroups && cgroups_) cgroups_->Remove(*proc->cgroups);
    }
  }
}

}  // namespace podflow::runtime::process
