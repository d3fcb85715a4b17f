#include "stages/runtime/process/container_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "stages/runtime/process/pod_volumes.h"

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

// Where the old root is kept in the new one until it is detached.
constexpr char kOldRoot[] = "/.podflow-host";

// What MakeRoot's step tells (step / kStepKind is the kind, the rest an index).
constexpr int kStepKind = 1'000'000;
enum StepKind : int { kSetUp = 0, kHostMount = 1, kHide = 2, kProc = 3, kBind = 4, kReadOnly = 5 };

bool Under(const std::string& path, const std::string& dir) {
  return path == dir || (path.starts_with(dir) && (dir.ends_with('/') || path[dir.size()] == '/'));
}

// The target's ancestors, shallowest first ("/a", "/a/b" for "/a/b/c").
std::vector<std::string> Ancestors(const std::string& target) {
  std::vector<std::string> out;
  for (size_t at = target.find('/', 1); at != std::string::npos; at = target.find('/', at + 1)) {
    out.push_back(target.substr(0, at));
  }
  return out;
}

size_t Depth(const std::string& path) {
  return static_cast<size_t>(std::count_if(path.begin(), path.end(), [](char c) { return c == '/'; })) -
         (path.size() > 1 && path.ends_with('/') ? 1 : 0);
}

int OpenBeneath(int dir, const std::string& path, uint64_t flags) {
  open_how how{};
  how.flags = flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how));
}

// The subPath of the volume `volume` (a descriptor), made a directory with
// the volume's mode when missing, as kubelet does; never outside it.
Result<UniqueFd> OpenSubPath(int volume, const std::string& sub_path) {
  const auto refused = [&sub_path](int err) {
    if (err == EXDEV || err == ELOOP) return Status::Invalid("subPath " + sub_path + " reaches out of its volume");
    return Status::Invalid("subPath " + sub_path + ": " + ErrnoText(err));
  };
  UniqueFd found(OpenBeneath(volume, sub_path, O_PATH | O_CLOEXEC));
  if (found.get() >= 0) return found;
  if (errno != ENOENT) return refused(errno);
  struct stat st {};
  const mode_t mode = ::fstat(volume, &st) == 0 ? st.st_mode & 07777 : 0755;
  // Each missing directory made in its parent, both opened beneath the
  // volume (a symlink swapped in meanwhile cannot lead out of it), and its
  // mode set through its own descriptor.
  UniqueFd dir;
  for (size_t end = 0; end != std::string::npos;) {
    end = sub_path.find('/', end + 1);
    const std::string prefix = sub_path.substr(0, end);
    const size_t slash = prefix.rfind('/');
    const std::string part = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    UniqueFd parent(slash == std::string::npos ? ::fcntl(volume, F_DUPFD_CLOEXEC, 0)
                                               : OpenBeneath(volume, prefix.substr(0, slash), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (parent.get() < 0) return refused(errno);
    const bool made = ::mkdirat(parent.get(), part.c_str(), mode) == 0;
    if (!made && errno != EEXIST) {
      return Status::Invalid("failed to create subPath directory " + sub_path + ": " + ErrnoText(errno));
    }
    dir = UniqueFd(OpenBeneath(volume, prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return refused(errno);
    if (made) ::fchmod(dir.get(), mode);
  }
  if (dir.get() < 0) return refused(ENOENT);
  return dir;
}

// Makes `dirs` (EEXIST is fine). Async-signal-safe.
int MakeDirs(const std::vector<std::string>& dirs, mode_t mode) {
  for (const std::string& dir : dirs) {
    if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

// The container's /dev, as runc makes one: a tmpfs with the usual device
// nodes bound from this machine's (under the old root), a devpts instance
// of its own, a /dev/shm of its own and the usual links. Async-signal-safe.
int MakeDev() {
  if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k") != 0) return errno;
  static constexpr const char* kDevices[][2] = {
      {"/.podflow-host/dev/null", "/dev/null"},       {"/.podflow-host/dev/zero", "/dev/zero"},
      {"/.podflow-host/dev/full", "/dev/full"},       {"/.podflow-host/dev/random", "/dev/random"},
      {"/.podflow-host/dev/urandom", "/dev/urandom"}, {"/.podflow-host/dev/tty", "/dev/tty"}};
  for (const auto& [source, target] : kDevices) {
    const int fd = ::open(target, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) return errno;
    ::close(fd);
    if (::mount(source, target, nullptr, MS_BIND, nullptr) != 0) return errno;
  }
  if (::mkdir("/dev/pts", 0755) != 0) return errno;
  // Without a devpts of its own it still runs (a terminal comes from outside).
  if (::mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") == 0) {
    ::symlink("pts/ptmx", "/dev/ptmx");
  }
  if (::mkdir("/dev/shm", 01777) != 0) return errno;
  if (::mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k") != 0) {
    return errno;
  }
  ::symlink("/proc/self/fd", "/dev/fd");
  ::symlink("/proc/self/fd/0", "/dev/stdin");
  ::symlink("/proc/self/fd/1", "/dev/stdout");
  ::symlink("/proc/self/fd/2", "/dev/stderr");
  return 0;
}

}  // namespace

RootPlan PlanRoot(const std::string& base, const std::string& own, const std::vector<std::string>& hidden) {
  RootPlan plan;
  plan.base = base;
  plan.root = base + "/root";
  plan.dirs = {base + "/upper", base + "/work", plan.root};
  plan.root_options = "lowerdir=/,upperdir=" + base + "/upper,workdir=" + base + "/work";
  plan.put_old = plan.root + kOldRoot;
  plan.hidden = hidden;

  std::vector<std::string> points = MountPoints();
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<std::string> whole;  // carried with everything inside them
  for (const std::string& p : points) {
    if (p == "/" || Under(p, "/proc") || Under(p, own)) continue;  // own: hidden, its volumes bound one by one
    if (std::any_of(whole.begin(), whole.end(), [&](const std::string& w) { return Under(p, w); })) continue;
    RootPlan::HostMount m;
    m.source = std::string(kOldRoot) + p;
    m.target = p;
    struct stat st {};
    const bool dir = ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    // overlayfs takes ':' and ',' as separators in its options.
    const bool plain = p.find_first_of(":,\\") == std::string::npos;
    if (p == "/dev") {
      m.how = RootPlan::HostMount::How::kDev;
      whole.push_back(p);
    } else if (p == "/sys") {
      m.how = RootPlan::HostMount::How::kBindReadOnly;
      whole.push_back(p);
    } else if (!dir || !plain) {
      m.how = RootPlan::HostMount::How::kBindReadOnly;
    } else {
      const std::string layer = base + "/layers/" + std::to_string(plan.host_mounts.size());
      plan.dirs.insert(plan.dirs.end(), {base + "/layers", layer, layer + "/upper", layer + "/work"});
      // After pivot_root the tmpfs is under the old root too.
      m.overlay_options = "lowerdir=" + m.source + ",upperdir=" + kOldRoot + layer + "/upper,workdir=" + kOldRoot +
                          layer + "/work";
    }
    plan.host_mounts.push_back(std::move(m));
  }
  plan.dirs.erase(std::unique(plan.dirs.begin(), plan.dirs.end()), plan.dirs.end());
  return plan;
}

Status AddVolumeMounts(RootPlan& plan, std::vector<ContainerMount> mounts) {
  // containerd mounts them by depth: one inside another after it.
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const ContainerMount& a, const ContainerMount& b) { return Depth(a.target) < Depth(b.target); });
  for (const ContainerMount& m : mounts) {
    if (!m.target.starts_with("/")) return Status::Invalid("mount destination " + m.target + " not absolute");
    if (!m.source.starts_with("/")) return Status::Invalid("mount source " + m.source + " not absolute");
    UniqueFd volume(::open(m.source.c_str(), O_PATH | O_CLOEXEC));
    if (volume.get() < 0) return Status::Invalid("mount source " + m.source + ": " + ErrnoText(errno));
    if (!m.sub_path.empty()) {
      Result<UniqueFd> sub = OpenSubPath(volume.get(), m.sub_path);
      if (!sub.ok()) return sub.status();
      volume = std::move(*sub);
    }
    // A detached copy of it, made here (a descriptor of this namespace's
    // mount cannot be bound in the container's), read-only as asked (its
    // other flags kept); the child attaches it.
    UniqueFd tree(::open_tree(volume.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (tree.get() < 0) return Status::Invalid("mount source " + m.source + ": open_tree: " + ErrnoText(errno));
    if (m.read_only) {
      mount_attr attr{};
      attr.attr_set = MOUNT_ATTR_RDONLY;
      if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
        return Status::Invalid("mount source " + m.source + ": read-only: " + ErrnoText(errno));
      }
    }
    RootPlan::Bind bind;
    bind.tree = tree.get();
    bind.target = m.target;
    struct stat st {};
    bind.file = ::fstat(volume.get(), &st) == 0 && !S_ISDIR(st.st_mode);
    bind.dirs = Ancestors(m.target);
    if (!bind.file) bind.dirs.push_back(m.target);
    plan.binds.push_back(std::move(bind));
    plan.fds.push_back(std::move(tree));
  }
  return Status::Ok();
}

int MakeRoot(const RootPlan& plan, int* step) {
  *step = kSetUp * kStepKind;
  if (::mount("tmpfs", plan.base.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) return errno;
  if (int err = MakeDirs(plan.dirs, 0755)) return err;
  if (::mount("overlay", plan.root.c_str(), "overlay", 0, plan.root_options.c_str()) != 0) return errno;
  if (::mkdir(plan.put_old.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  if (::syscall(SYS_pivot_root, plan.root.c_str(), plan.put_old.c_str()) != 0) return errno;
  if (::chdir("/") != 0) return errno;
  using How = RootPlan::HostMount::How;
  for (size_t i = 0; i < plan.host_mounts.size(); ++i) {
    *step = kHostMount * kStepKind + static_cast<int>(i);
    const RootPlan::HostMount& m = plan.host_mounts[i];
    const char* target = m.target.c_str();
    switch (m.how) {
      case How::kDev:
        if (int err = MakeDev()) return err;
        continue;
      case How::kOverlay:
        if (::mount("overlay", target, "overlay", 0, m.overlay_options.c_str()) == 0) continue;
        break;  // a filesystem overlayfs does not take: read-only
      case How::kBindReadOnly:
        break;
    }
    // /sys with what is inside it; any other one alone (what is inside it
    // is listed on its own). One that cannot be carried (gone since it was
    // listed, say) is left out, but /sys.
    const bool whole = m.target == "/sys";
    if (::mount(m.source.c_str(), target, nullptr, MS_BIND | (whole ? MS_REC : 0), nullptr) != 0) {
      if (!whole) continue;
      return errno;
    }
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(AT_FDCWD, target, whole ? AT_RECURSIVE : 0, &attr, sizeof attr) != 0) return errno;
  }
  for (size_t i = 0; i < plan.hidden.size(); ++i) {
    *step = kHide * kStepKind + static_cast<int>(i);
    struct stat st {};
    if (::stat(plan.hidden[i].c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (::mount("tmpfs", plan.hidden[i].c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,mode=0755") != 0) {
      return errno;
    }
  }
  *step = kProc * kStepKind;
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
  if (::umount2(kOldRoot, MNT_DETACH) != 0) return errno;
  ::rmdir(kOldRoot);
  for (size_t i = 0; i < plan.binds.size(); ++i) {
    *step = kBind * kStepKind + static_cast<int>(i);
    const RootPlan::Bind& bind = plan.binds[i];
    // Made in the new root: a symlink on the way resolves in it.
    if (int err = MakeDirs(bind.dirs, 0755)) return err;
    if (bind.file) {
      const int fd = ::open(bind.target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd >= 0) ::close(fd);
    }
    if (::move_mount(bind.tree, "", AT_FDCWD, bind.target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) return errno;
  }
  if (plan.read_only) {
    *step = kReadOnly * kStepKind;
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(AT_FDCWD, "/", 0, &attr, sizeof attr) != 0) return errno;
    for (const RootPlan::HostMount& m : plan.host_mounts) {
      // One left out (gone since it was listed) is no mount of its own
      // here; one a volume is mounted over is the volume's place now.
      if (m.how != How::kOverlay) continue;
      bool covered = false;
      for (const RootPlan::Bind& bind : plan.binds) covered = covered || bind.target == m.target;
      if (!covered) ::mount_setattr(AT_FDCWD, m.target.c_str(), 0, &attr, sizeof attr);
    }
  }
  return 0;
}

std::string RootFailure(const RootPlan& plan, int err, int step) {
  const size_t i = static_cast<size_t>(step % kStepKind);
  std::string what = "making the container's root";
  switch (step / kStepKind) {
    case kHostMount:
      if (i < plan.host_mounts.size()) what = "carrying " + plan.host_mounts[i].target + " into the container's root";
      break;
    case kHide:
      if (i < plan.hidden.size()) what = "hiding " + plan.hidden[i] + " in the container's root";
      break;
    case kProc:
      what = "mounting the container's /proc";
      break;
    case kBind:
      if (i < plan.binds.size()) what = "mounting a volume at " + plan.binds[i].target;
      break;
    case kReadOnly:
      what = "making the container's root read-only";
      break;
    default:
      break;
  }
  return "error " + what + ": " + ErrnoText(err);
}

}  // namespace podflow::runtime::process
