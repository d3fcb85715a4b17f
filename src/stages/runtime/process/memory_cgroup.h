// A memory cgroup per container, for resources.limits.memory and a real
// OOMKilled: cgroup v2 (memory.max, memory.events' oom_kill) where the
// unified hierarchy has the memory controller, else the v1 memory
// controller (memory.limit_in_bytes, memory.oom_control's oom_kill). Each
// runtime's groups live under "podflow/<owner>/", so that a crashed run's
// leftovers are found and removed by the next run of the same owner.
//
// Thread safety: none; the engine serializes its calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace podflow::runtime::process {

class MemoryCgroups {
 public:
  // Finds a writable memory hierarchy under `mount_root` (normally
  // /sys/fs/cgroup) and removes the leftovers of `owner` (killing what
  // still runs in them). Unavailable, saying why, when there is none.
  static Result<MemoryCgroups> Open(const std::string& mount_root, const std::string& owner);

  // Makes the group `name` with `limit_bytes` (no swap beyond it).
  Result<std::string> Create(const std::string& name, int64_t limit_bytes);
  // Moves `pid` into `group` (a directory Create made). Static: an exec
  // session puts its command in its container's group without the engine.
  static Status Add(const std::string& group, pid_t pid);
  // How many times the kernel's OOM killer killed in the group.
  int64_t OomKills(const std::string& group) const;
  // Kills what is left in the group and removes it (best effort).
  void Remove(const std::string& group);
  // Removes the owner's folder (at the end of a run).
  void RemoveAll();

  // Whether a group's limit also bounds swap (memsw / memory.swap.max), or
  // there is no swap: a process over its limit is then OOM-killed rather
  // than swapped out.
  bool BoundsSwap() const;

  bool v2() const { return v2_; }
  const std::string& root() const { return root_; }

 private:
  MemoryCgroups(std::string root, bool v2) : root_(std::move(root)), v2_(v2) {}
  std::string root_;  // ".../podflow/<owner>"
  bool v2_ = false;
};

}  // namespace podflow::runtime::process
