#include "stages/runtime/process/identity.h"

#include "stages/runtime/process/spawn.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

namespace podflow::runtime::process {
namespace {

// Every capability this machine's kernel knows.
uint64_t AllCapabilities() {
  const int bits = std::clamp(static_cast<int>(cap_max_bits()), 0, 64);
  return bits == 64 ? ~0ull : (1ull << bits) - 1;
}

// The bit of a capability as a securityContext names it: without "CAP_"
// ("NET_ADMIN", any case), which the runtime puts before it as containerd
// does ("CAP_NET_ADMIN" is therefore no capability); -1 for one this
// machine does not know.
int CapabilityBit(std::string name) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  name = "cap_" + name;
  cap_value_t value = 0;
  if (cap_from_name(name.c_str(), &value) != 0 || value < 0 || value >= 64) return -1;
  return static_cast<int>(value);
}

bool IsAll(const std::string& name) {
  std::string upper = name;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return upper == "ALL";
}

uint64_t Capabilities(const ContainerSecurity& s) {
  if (s.privileged) return AllCapabilities();
  uint64_t caps = DefaultCapabilities();
  if (std::any_of(s.add_capabilities.begin(), s.add_capabilities.end(), IsAll)) caps = AllCapabilities();
  if (std::any_of(s.drop_capabilities.begin(), s.drop_capabilities.end(), IsAll)) caps = 0;
  for (const std::string& name : s.add_capabilities) {
    if (int bit = CapabilityBit(name); bit >= 0 && !IsAll(name)) caps |= 1ull << bit;
  }
  for (const std::string& name : s.drop_capabilities) {
    if (int bit = CapabilityBit(name); bit >= 0 && !IsAll(name)) caps &= ~(1ull << bit);
  }
  return caps & AllCapabilities();
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

void AddGroup(std::vector<gid_t>& groups, gid_t g) {
  if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
}

}  // namespace

uint64_t DefaultCapabilities() {
  return (1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_FOWNER) | (1ull << CAP_FSETID) |
         (1ull << CAP_KILL) | (1ull << CAP_SETGID) | (1ull << CAP_SETUID) | (1ull << CAP_SETPCAP) |
         (1ull << CAP_NET_BIND_SERVICE) | (1ull << CAP_NET_RAW) | (1ull << CAP_SYS_CHROOT) | (1ull << CAP_MKNOD) |
         (1ull << CAP_AUDIT_WRITE) | (1ull << CAP_SETFCAP);
}

ProcessIdentity ResolveIdentity(const ContainerSecurity& security, std::vector<ResourceLimit> limits,
                                const std::string& etc) {
  ProcessIdentity out;
  out.limits = std::move(limits);
  out.capabilities = Capabilities(security);
  out.no_new_privileges = security.no_new_privileges && !security.privileged;
  out.uid = static_cast<uid_t>(security.run_as_user.value_or(0));
  // The user's name and primary group, where the container's passwd knows it.
  std::string user;
  gid_t primary = 0;
  if (File f{std::fopen((etc + "/passwd").c_str(), "re")}) {
    while (const passwd* p = ::fgetpwent(f.get())) {
      if (p->pw_uid == out.uid) {
        user = p->pw_name;
        primary = p->pw_gid;
        break;
      }
    }
  }
  out.gid = security.run_as_group ? static_cast<gid_t>(*security.run_as_group) : primary;
  out.groups.push_back(out.gid);
  if (security.merge_user_groups && !user.empty()) {
    if (File f{std::fopen((etc + "/group").c_str(), "re")}) {
      while (const group* g = ::fgetgrent(f.get())) {
        if (user == g->gr_name) continue;  // the user's own group, as containerd leaves it out
        for (char** m = g->gr_mem; m != nullptr && *m != nullptr; ++m) {
          if (user == *m) AddGroup(out.groups, g->gr_gid);
        }
      }
    }
  }
  for (int64_t g : security.supplemental_groups) AddGroup(out.groups, static_cast<gid_t>(g));
  return out;
}

int EnterIdentity(const ProcessIdentity& id, int* step) {
  ::umask(022);  // as runc's init leaves it
  for (const ResourceLimit& l : id.limits) {
    const rlimit value{l.soft, l.hard};
    if (::syscall(SYS_prlimit64, 0, l.resource, &value, nullptr) != 0) return *step = 1, errno;
  }
  const bool root = ::geteuid() == 0;
  // The bounding set while this may still change it (CAP_SETPCAP): what any
  // later execve may give (EINVAL: past the kernel's last capability).
  for (int cap = 0; root && cap < 64; ++cap) {
    if ((id.capabilities >> cap) & 1) continue;
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;
      return *step = 7, errno;  // it would keep what it must not have
    }
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (root) {
    // The permitted set kept across the change of user, for the capset below.
    ::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0);
    if (::syscall(SYS_setgroups, id.groups.size(), id.groups.data()) != 0) return *step = 2, errno;
    if (::syscall(SYS_setresgid, id.gid, id.gid, id.gid) != 0) return *step = 3, errno;
    if (::syscall(SYS_setresuid, id.uid, id.uid, id.uid) != 0) return *step = 4, errno;
    ::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
    // A change of user clears the parent-death signal: set again (the
    // launching thread waits on this child until its exec, so it lives).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  }
  // No inheritable one; permitted and effective only what it may have (an
  // execve by a user other than root clears them).
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) == 0) {
    for (int i = 0; i < 2; ++i) {
      const uint32_t kept = static_cast<uint32_t>(id.capabilities >> (32 * i));
      data[i].inheritable = 0;
      data[i].permitted &= kept;
      data[i].effective = data[i].permitted;
    }
    if (::syscall(SYS_capset, &header, data) != 0) return *step = 5, errno;
  }
  if (id.no_new_privileges && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return *step = 6, errno;
  return 0;
}

std::string IdentityFailure(int err, int step) {
  static constexpr const char* kSteps[] = {"",       "setrlimit", "setgroups", "setresgid",
                                           "setresuid", "capset",   "prctl(PR_SET_NO_NEW_PRIVS)",
                                           "prctl(PR_CAPBSET_DROP)"};
  const char* what = step > 0 && step < static_cast<int>(std::size(kSteps)) ? kSteps[step] : "?";
  return std::string("setting up the container's user and privileges: ") + what + ": " + ErrnoText(err);
}

}  // namespace podflow::runtime::process
