// ProcessEngine: the process runtime's ContainerHost. Each container runs as
// a real process tree on this machine, started from its command, args, env
// and working dir (no image is unpacked):
//  - in its own session and process group; where this process may make
//    namespaces (root with CAP_SYS_ADMIN, tried once) also in its own PID,
//    mount (with its own /proc) and UTS (the pod's hostname) namespaces, so
//    that its command is PID 1 and ignores SIGTERM unless it handles it, as
//    in a container;
//  - with a root of its own where overlayfs may be mounted too: this
//    machine's root filesystem as the lower layer, a tmpfs of its own as
//    the upper (its writable layer), this machine's other mounts and the
//    container's volumes bound in, then pivot_root; its command is looked
//    up there. Without one it sees and writes this machine's files;
//  - its pod's volumes made on this machine first (pod_volumes.h);
//  - as root, as the user, groups and capabilities its securityContext
//    says, with no_new_privs and a read-only root when asked, and the
//    node's ulimits (identity.h); its exec probes, hooks and exec commands
//    run so too;
//  - with resources.limits.memory, limits.cpu and requests.cpu enforced by
//    cgroups of its own (cgroups.h: a memory limit that also tells a real
//    OOM kill, a CFS quota, a CPU weight);
//  - its stdout and stderr collected by one thread into the run's log file
//    in the CRI format (cri_log.h), rotated by size;
//  - its exit seen through a pidfd, reaped by that thread, and reported
//    through TakeExits with the exit code (128 + the signal when killed);
//  - its probes run for real by workers of their own (probes.h);
//  - where a pod network may be made (EngineOptions::network_prefix, root,
//    netns/pod_network.h), in its pod's network namespace (or its node's,
//    for a hostNetwork pod): ContainerLaunch::network; its exec probes
//    and exec commands join it, tcpSocket and httpGet probes connect from
//    the node's (ProbeCheck::network).
// A container is killed (SIGKILL) when the thread that launched it ends
// (PR_SET_PDEATHSIG), so also when this process dies; the destructor kills
// and reaps every container still running and removes the cgroups. As
// root, namespaces are used when this process may make them (it tries once).
//
// Thread safety: Signal, TakeExits, ReadLog and RemovePodLogs may be called
// from any thread; Launch from one long-lived thread (the runtime's loop),
// since a container lives no longer than the thread that launched it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "netns/pod_network.h"
#include "stages/runtime/container_host.h"
#include "stages/runtime/process/cri_log.h"
#include "stages/runtime/process/exec_sessions.h"
#include "stages/runtime/process/cgroups.h"
#include "stages/runtime/process/pod_volumes.h"
#include "stages/runtime/process/probes.h"

namespace podflow::runtime::process {

struct EngineOptions {
  std::string log_root;  // "<log_root>/<namespace>_<pod>_<uid>/<container>/<restart>.log"
  // Its own files: the pods' volumes ("volumes/", pod_volumes.h) and the
  // directory a container's root is made over ("rootfs"). Empty: log_root.
  std::string state_root;
  // Directories no container may see (podflow's data dir): an empty
  // read-only tmpfs over each in every container's root.
  std::vector<std::string> hidden;
  // Names this runtime's cgroups ("podflow/<owner>/..."): a crashed run's
  // are removed by the next run with the same owner.
  std::string owner = "default";
  std::string cgroup_mount = "/sys/fs/cgroup";
  CriLogLimits log_limits;
  // The resource limits every container's processes get (none: podflow's own).
  std::vector<ResourceLimit> limits;
  // Pods get a network of their own (netns/pod_network.h) where one can be
  // made here (root, namespaces, iproute2 and iptables), its namespaces
  // named "<network_prefix>-…"; otherwise, or when empty, they are on this
  // machine's network.
  std::string network_prefix;
};

class ProcessEngine final : public ContainerHost {
 public:
  explicit ProcessEngine(EngineOptions options);
  ~ProcessEngine() override;
  ProcessEngine(const ProcessEngine&) = delete;
  ProcessEngine& operator=(const ProcessEngine&) = delete;

  Result<ProcessId> Launch(const ContainerLaunch& launch) override;
  void Signal(ProcessId id, int signal) override;
  std::vector<ContainerExit> TakeExits() override;
  std::vector<ContainerLogLine> ReadLog(const std::string& log_dir, int32_t restart_count) const override;
  Result<std::string> SetUpVolume(const std::string& pod_dir, const VolumeSource& volume) override;
  void RemovePodFiles(const std::string& pod_dir) override;
  uint64_t StartProbe(const std::string& pod_key, const ProbeCheck& check) override;
  std::vector<ProbeOutcome> TakeProbeOutcomes() override;
  std::string NodeHosts() const override;
  std::string NodeResolvConf() const override;
  bool HasPodNetwork() const override { return network_ != nullptr; }
  Status AddNodeNetwork(const std::string& node, const std::string& address, const std::string& pod_cidr,
                        const std::string& gateway) override;
  void RemoveNodeNetwork(const std::string& node) override;
  std::string NodeNetwork(const std::string& node) const override;
  Result<std::string> AddPodNetwork(const std::string& node, const std::string& pod,
                                    const std::string& address) override;
  void RemovePodNetwork(const std::string& pod) override;

  // The container process `id` as an exec session joins it: a pidfd of its
  // own, whether it has namespaces, its cgroup (env and working dir are the
  // caller's to add). NotFound when it has ended.
  Result<ExecTarget> ExecTargetOf(ProcessId id) const;

  // What it cannot do on this machine, one sentence each (empty: all of it).
  const std::vector<std::string>& limitations() const { return limitations_; }
  bool isolated() const { return isolate_; }
  // Containers get a root of their own and their volumes.
  bool own_root() const { return own_root_; }
  bool limits_memory() const { return cgroups_ && cgroups_->limits_memory(); }
  bool limits_swap() const { return limits_memory() && cgroups_->BoundsSwap(); }
  bool limits_cpu() const { return cgroups_ && cgroups_->limits_cpu(); }

 private:
  struct Proc;
  void Collect();
  // Reads what the pipes hold now (a bounded share each unless `all`);
  // closes one at its end.
  void Drain(Proc& proc, std::chrono::system_clock::time_point at, bool all);
  // Reaps the process once it has ended and queues its exit; false: not yet.
  bool Reap(ProcessId id, Proc& proc);
  std::string LogPath(const std::string& log_dir, int32_t restart_count) const;
  std::string RootfsBase() const;

  EngineOptions options_;
  // Destroyed last: its namespaces outlive every container in them.
  std::unique_ptr<netns::PodNetwork> network_;
  bool isolate_ = false;
  bool own_root_ = false;
  std::unique_ptr<PodVolumes> volumes_;
  std::optional<ContainerCgroups> cgroups_;
  std::vector<std::string> limitations_;
  int wake_fd_ = -1;
  mutable std::mutex mu_;
  std::map<ProcessId, std::unique_ptr<Proc>> procs_;
  std::vector<ContainerExit> exits_;
  ProcessId next_id_ = 1;
  std::atomic<bool> stopping_{false};
  std::thread collector_;
  // Stopped first thing in the destructor: no probe outlives the containers.
  std::optional<ProbeWorkers> probes_{std::in_place};
  std::optional<ProbeWorkers> hooks_{std::in_place, 16, uint64_t{1} << 62};  // exec lifecycle hooks
};

}  // namespace podflow::runtime::process
