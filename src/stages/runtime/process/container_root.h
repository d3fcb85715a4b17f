// A container's own root on a process node, made in its mount namespace
// between clone and exec:
//  - an overlay whose lower layer is this machine's root filesystem and
//    whose upper layer (the container's writable layer) is on a tmpfs of
//    its own, so that what it writes is its own and gone with it, as an
//    image's writable layer is, and this machine's files are never changed;
//  - this machine's other mounts carried in the same way (an overlay each,
//    its writes the container's own; one that cannot be overlaid, or is a
//    file, read-only), but /dev (a tmpfs of its own with the usual device
//    nodes bound in, a devpts and a /dev/shm of its own, as runc makes it),
//    /sys (read-only, with everything inside it) and /proc (a new one, for
//    its PID namespace);
//  - the directories it must not see (podflow's data dir) covered by an
//    empty read-only tmpfs;
//  - pivot_root into it, the machine's root detached, and only then its
//    volumes attached at their mountPaths, as detached copies made before
//    the clone (open_tree; read-only ones by mount_setattr, keeping their
//    other flags): a mountPath's symlinks resolve inside the container's
//    root, and a subPath is resolved beneath its volume (a symlink out of
//    it is refused), so a container cannot make a later mount reach the
//    machine.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "stages/runtime/container_host.h"
#include "stages/runtime/process/spawn.h"

namespace podflow::runtime::process {

struct RootPlan {
  std::string base;                // a directory of the runtime's: the tmpfs goes over it
  std::vector<std::string> dirs;   // made in the tmpfs first
  std::string root;                // where the root's overlay is mounted (in the tmpfs)
  std::string root_options;        // its overlay's options
  std::string put_old;             // root + the old root's place, for pivot_root
  // This machine's mounts, carried in (after pivot_root: sources under the old root).
  struct HostMount {
    enum class How { kOverlay, kBindReadOnly, kDev };
    How how = How::kOverlay;
    std::string source, target, overlay_options;
  };
  std::vector<HostMount> host_mounts;
  std::vector<std::string> hidden;  // covered by an empty read-only tmpfs
  // The container's volumes.
  struct Bind {
    int tree = -1;                  // a detached copy of the volume (or its subPath), in `fds`
    std::string target;             // in the new root
    std::vector<std::string> dirs;  // the target's ancestors (and itself for a directory), made first
    bool file = false;
  };
  std::vector<Bind> binds;
  // readOnlyRootFilesystem: the root and the machine's mounts carried into
  // it made read-only last (its volumes, /dev and /proc stay as they are).
  bool read_only = false;
  std::vector<UniqueFd> fds;  // the binds' trees, open until the child has attached them
};

// The plan of a root made over `base`, carrying this machine's mounts but
// those under `own` (the runtime's directory) and hiding `hidden`.
RootPlan PlanRoot(const std::string& base, const std::string& own, const std::vector<std::string>& hidden);

// Adds the container's volumeMounts, deepest mountPath last (a mount inside
// another is made after it). The error is the runtime's words for a volume
// or subPath that cannot be mounted.
Status AddVolumeMounts(RootPlan& plan, std::vector<ContainerMount> mounts);

// In the child, after its mounts were made private: the root as planned.
// Returns 0 or the errno of the step that failed, and in `step` which
// (an index into the plan's host mounts and binds, for the message).
// Async-signal-safe.
int MakeRoot(const RootPlan& plan, int* step);

// What failed, for MakeRoot's errno and step.
std::string RootFailure(const RootPlan& plan, int err, int step);

}  // namespace podflow::runtime::process
