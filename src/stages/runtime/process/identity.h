// Who a process node's container runs as — its user, groups, capabilities,
// no_new_privs and resource limits — resolved before the clone the way a
// CRI runtime fills the OCI spec's process (containerd's CRI plugin,
// runc), and entered in the child before its exec. A container's exec
// probes, hooks and `podflow exec` commands run as it does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "stages/runtime/container_host.h"

namespace podflow::runtime::process {

// The capabilities runc and containerd give a container by default:
// CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP,
// NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE, SETFCAP.
uint64_t DefaultCapabilities();

struct ProcessIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary (setgroups)
  uint64_t capabilities = DefaultCapabilities();  // bounding, and permitted/effective for root
  bool no_new_privileges = false;
  std::vector<ResourceLimit> limits;
};

// `security` resolved against the container's /etc/passwd and /etc/group
// (`etc`: this machine's, over which a process node's root is made): an
// unset runAsUser is root; an unset runAsGroup the user's primary group
// (0 for a uid /etc/passwd does not know); the groups are that gid, the
// ones /etc/group lists the user in (policy Merge), then the pod's
// supplementalGroups and fsGroup. Capabilities: privileged gives every
// one; otherwise the defaults, with "ALL" added or dropped first and then
// the named ones added, then dropped (containerd's order; unknown names,
// "CAP_X" among them, ignored as runc ignores them).
ProcessIdentity ResolveIdentity(const ContainerSecurity& security, std::vector<ResourceLimit> limits,
                                const std::string& etc = "/etc");

// In a child before execve, as root: umask 022, the limits, groups, gid,
// the capabilities' bounding set, uid (the parent-death signal set again
// after it), the kept capabilities, no_new_privs.
// Returns 0, or the errno of the step that failed (`step` tells which, for
// IdentityFailure). Not root: the limits and no_new_privs only.
// Async-signal-safe.
int EnterIdentity(const ProcessIdentity& identity, int* step);

// What EnterIdentity's failure says.
std::string IdentityFailure(int err, int step);

}  // namespace podflow::runtime::process
