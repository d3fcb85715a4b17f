// The cgroups of a container, for its resources as kubelet and runc set
// them:
//  - limits.memory: the memory limit and a real OOMKilled — cgroup v2
//    (memory.max, memory.events' oom_kill) where the unified hierarchy has
//    the memory controller, else the v1 memory controller
//    (memory.limit_in_bytes, memory.oom_control's oom_kill);
//  - limits.cpu: a CFS quota per 100 ms period (cpu.max, or v1's
//    cpu.cfs_quota_us), at least 1 ms (none for 0); requests.cpu: the CPU
//    weight (cpu.weight from kubelet's shares, or v1's cpu.shares =
//    milliCPU * 1024 / 1000, at least 2 — also for a container without a
//    request), so that with a cpu controller every container has a group.
// A CPU value the kernel refuses (a v1 quota above an ancestor's) is left
// out rather than keeping the container from starting. Under v2 one
// directory holds both; under v1 each controller's hierarchy
// has its own. Each runtime's groups live under "podflow/<owner>/" in each
// hierarchy, so that a crashed run's leftovers are found and removed by the
// next run of the same owner.
//
// Thread safety: none; the engine serializes its calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace podflow::runtime::process {

// What a container's resources ask of its groups.
struct CgroupLimits {
  std::optional<int64_t> memory_bytes;       // limits.memory
  std::optional<int64_t> cpu_limit_milli;    // limits.cpu
  std::optional<int64_t> cpu_request_milli;  // requests.cpu
};

// One container's groups.
struct CgroupSet {
  std::vector<std::string> dirs;  // every group its processes join
  std::string memory;             // the one that counts its OOM kills ("": none)
};

// kubelet's CPU arithmetic (cm.MilliCPUToQuota / MilliCPUToShares).
inline constexpr int64_t kCpuPeriodMicros = 100'000;
int64_t CpuQuotaMicros(int64_t milli);  // 0: no quota
int64_t CpuShares(int64_t milli);
// cgroup v2's cpu.weight for v1 shares, as runc converts them.
int64_t CpuWeight(int64_t shares);

class ContainerCgroups {
 public:
  // Finds writable memory and cpu hierarchies under `mount_root` (normally
  // /sys/fs/cgroup) and removes the leftovers of `owner` in them (killing
  // what still runs there). `missing` gets, for each controller ("memory",
  // "cpu") it cannot use, why. Unavailable when neither can be used.
  static Result<ContainerCgroups> Open(const std::string& mount_root, const std::string& owner,
                                       std::map<std::string, std::string>* missing);

  // Makes the groups of container `name` for `limits` (no swap beyond the
  // memory limit); a limit whose controller is missing is not applied. The
  // set may be empty (no memory limit, no cpu controller).
  Result<CgroupSet> Create(const std::string& name, const CgroupLimits& limits);
  // Moves `pid` into every group of `set`. Static: an exec session puts its
  // command in its container's groups without the engine.
  static Status Add(const std::vector<std::string>& dirs, pid_t pid);
  // How many times the kernel's OOM killer killed in the set's memory group.
  int64_t OomKills(const CgroupSet& set) const;
  // Kills what is left in the groups and removes them (best effort).
  void Remove(const CgroupSet& set);
  // Removes the owner's folders (at the end of a run).
  void RemoveAll();

  // Whether a group's memory limit also bounds swap (memsw /
  // memory.swap.max), or there is no swap: a process over its limit is then
  // OOM-killed rather than swapped out.
  bool BoundsSwap() const;

  bool limits_memory() const { return !memory_root_.empty(); }
  bool limits_cpu() const { return !cpu_root_.empty(); }
  bool v2() const { return v2_; }

 private:
  ContainerCgroups(std::string memory_root, std::string cpu_root, bool v2)
      : memory_root_(std::move(memory_root)), cpu_root_(std::move(cpu_root)), v2_(v2) {}
  std::string memory_root_;  // ".../podflow/<owner>" in the memory hierarchy ("": none)
  std::string cpu_root_;     // the same in the cpu hierarchy (v2: the same directory)
  bool v2_ = false;
};

}  // namespace podflow::runtime::process
